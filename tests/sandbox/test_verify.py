from __future__ import annotations

import pytest

from tablereason.errors import ConfigurationError
from tablereason.sandbox import PythonSandbox, RetrySettings, generate_and_verify, strip_fences
from tablereason.sandbox.verify import assigns, verify_program


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("```python\nans = 1\n```", "ans = 1"),
        ("Sure:\n```py\nx = 2\nans = x\n```\nThat is it.", "x = 2\nans = x"),
        ("```\nans = 3\n```", "ans = 3"),
        ("```sql\nSELECT 1\n```", "SELECT 1"),
        ("ans = 4", "ans = 4"),
        ("```python\nans = 5", "ans = 5"),
    ],
)
def test_strip_fences(text: str, code: str) -> None:
    assert strip_fences(text) == code


def test_assigns_uses_the_syntax_tree() -> None:
    assert assigns("for ans in range(3):\n    pass")
    assert assigns("ans=1")
    assert not assigns("print('ans = 1')")


def test_paper_temperature_schedule_is_constant_after_first() -> None:
    settings = RetrySettings.paper()
    assert [settings.temperature(i) for i in range(4)] == [0.0, 0.1, 0.1, 0.1]
    assert RetrySettings.paper(base_temperature=0.5).temperature(3) == 0.5
    assert settings.patience == 20 and settings.mode == "paper"


def test_default_schedule_increases_and_caps() -> None:
    settings = RetrySettings(patience=5, step=0.4)
    assert [settings.temperature(i) for i in range(4)] == [0.0, 0.4, 0.8, 1.0]


def test_patience_must_be_positive() -> None:
    with pytest.raises(ConfigurationError):
        RetrySettings(patience=0)


def test_verify_reasons(box: PythonSandbox) -> None:
    assert verify_program("```python\nans = 2 + 3\n```", sandbox=box).verified
    assert "must assign" in str(verify_program("print(3)", sandbox=box).reason)
    assert "empty" in str(verify_program("ans = []", sandbox=box).reason)
    assert "failed" in str(verify_program("ans = 1 / 0", sandbox=box).reason)
    assert "without setting" in str(verify_program("if False:\n    ans = 1", sandbox=box).reason)


def test_paper_settings_do_not_strip_fences(box: PythonSandbox) -> None:
    attempt = verify_program("```python\nans = 2\n```", RetrySettings.paper(), sandbox=box)
    assert not attempt.verified
    assert "syntax error" in str(attempt.reason)


def test_loop_feeds_back_and_stops_at_first_verified(box: PythonSandbox) -> None:
    replies = iter(["print(1)", "ans = {}", "ans = n * 7", "ans = 0"])
    calls: list[tuple[float, str | None]] = []

    def generate(temperature: float, feedback: str | None) -> str:
        calls.append((temperature, feedback))
        return next(replies)

    outcome = generate_and_verify(generate, RetrySettings(patience=5), {"n": 6}, box)
    assert outcome.verified and outcome.value == 42 and len(outcome.attempts) == 3
    assert calls[0] == (0.0, None)
    assert calls[1][1] is not None and "must assign" in calls[1][1]
    assert calls[2][0] > calls[1][0] > 0.0


def test_loop_keeps_last_program_when_none_verifies(box: PythonSandbox) -> None:
    programs = iter(["ans = []", "ans = ''"])
    outcome = generate_and_verify(
        lambda t, f: next(programs), RetrySettings.paper(patience=2), sandbox=box
    )
    assert not outcome.verified and outcome.program == "ans = ''"
    assert [a.temperature for a in outcome.attempts] == [0.0, 0.1]
    assert all(a.reason for a in outcome.attempts)
