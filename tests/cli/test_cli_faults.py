"""`tablereason ask` / `eval` against a misbehaving server: clear messages, --timeout, no key."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from support.fake_server import Fault
from support.scripted_server import ScriptedServer
from support.taymyr import EXAMPLE, QUESTION

from tablereason.cli import EXIT_MODEL, EXIT_OK, main
from tablereason.llm import RetryingLLM, RetryPolicy
from tablereason.llm.backends.server.client import ServerBackend
from tablereason.llm.resolve import resolve_llm

KEY = "sk-proj-abcdefghijklmnop0123456789"


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two attempts, no waiting: the CLI's retry policy would sleep for half a minute."""
    policy = RetryPolicy(max_attempts=2, base_delay=0.0, max_delay=0.0)
    monkeypatch.setattr(
        "tablereason.llm.resolve.RetryingLLM",
        lambda inner, retry=None: RetryingLLM(inner, policy, sleep=lambda s: None),
    )


@pytest.fixture(params=["http", "openai"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(ServerBackend, "_auto_transport", lambda self: request.param)
    return str(request.param)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize(
    "body",
    [
        {"choices": [{"index": 0, "message": "a bare string"}]},
        {"choices": ["strings", "not objects"]},
        {"choices": [{"index": 0, "message": {"content": None}}]},
        b"<html>502</html>",
    ],
    ids=["message-string", "choices-strings", "content-null", "html"],
)
def test_a_wrong_shape_is_a_clear_message_not_a_traceback(
    taymyr_server: ScriptedServer, transport: str, body: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    taymyr_server.inject(*[Fault("reply", body=body)] * 2)
    code, shown = _run(["ask", str(EXAMPLE), QUESTION], capsys)
    assert code == EXIT_MODEL  # the model failed (docs/cli.md: 4)
    assert "malformed reply from the server" in shown
    assert "Traceback" not in shown and "AttributeError" not in shown


def test_timeout_bounds_each_request_in_ask(
    taymyr_server: ScriptedServer, transport: str, capsys: pytest.CaptureFixture[str]
) -> None:
    taymyr_server.inject(*[Fault("trickle", 0.1)] * 2)  # ~30 s each if each read were bounded
    started = time.monotonic()
    code, shown = _run(["ask", str(EXAMPLE), QUESTION, "--timeout", "0.5"], capsys)
    assert time.monotonic() - started < 2 * 0.5 + 3.0
    assert code == EXIT_MODEL  # the model failed (docs/cli.md: 4)
    assert "no reply within the 0.5s timeout" in shown


@pytest.mark.parametrize("value", ["0", "-1", "abc", "inf", "nan", ""])
def test_bad_timeouts_are_usage_errors(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["ask", str(EXAMPLE), QUESTION], ["eval", "--dataset", "wikitq", "--out", "x"]):
        with pytest.raises(SystemExit) as info:
            main([*command, "--timeout", value])
        assert info.value.code == 2
        assert "--timeout" in capsys.readouterr().err


def test_eval_passes_the_timeout_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, Any] = {}

    def fake_run(spec: Any, **kwargs: Any) -> Any:
        seen["timeout"] = spec.timeout
        raise KeyboardInterrupt  # stop here: the spec is what this test is about

    monkeypatch.setattr("tablereason.evaluate.benchmark.run_benchmark", fake_run)
    data = ["--data-dir", str(tmp_path)]
    main(["eval", "--dataset", "wikitq", "--out", str(tmp_path), *data, "--timeout", "7.5"])
    assert seen["timeout"] == 7.5
    main(["eval", "--dataset", "wikitq", "--out", str(tmp_path), *data])
    assert seen["timeout"] is None  # the backend's own default (120 s) applies


def test_the_timeout_reaches_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    def bare(llm: Any) -> Any:
        while hasattr(llm, "inner"):
            llm = llm.inner
        return llm

    assert bare(resolve_llm("m", base_url="http://127.0.0.1:9/v1", timeout=7.5)).timeout == 7.5
    assert bare(resolve_llm("m", base_url="http://127.0.0.1:9/v1")).timeout == 120.0
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_MODEL", "m")  # else the server is asked which model it serves
    assert bare(resolve_llm(None, timeout=3.0, quiet=True)).timeout == 3.0


def test_a_rejected_key_is_not_shown_and_the_failed_step_is_timed_right(
    taymyr_server: ScriptedServer,
    transport: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    said = {"error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"}}
    for output in ([], ["--json"]):
        taymyr_server.inject(Fault("reply", status=401, body=said))
        started = time.monotonic()
        code, shown = _run(["ask", str(EXAMPLE), QUESTION, *output], capsys)
        took_ms = 1000 * (time.monotonic() - started)
        assert code == EXIT_MODEL  # the model failed (docs/cli.md: 4)
        assert KEY not in shown and "[redacted]" in shown
        assert "HTTP 401" in shown and "Traceback" not in shown
        if not output:
            times = [int(ms) for ms in re.findall(r"plan → \w+\s+\((\d+) ms\)", shown)]
            assert times and all(ms <= took_ms for ms in times), shown


def test_a_healthy_server_still_answers(
    taymyr_server: ScriptedServer, transport: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, shown = _run(["ask", str(EXAMPLE), QUESTION, "--timeout", "30"], capsys)
    assert code == EXIT_OK and "1985" in shown
