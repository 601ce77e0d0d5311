"""Ordinary programs of the kind TabMWP needs run and return the right value."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from tablereason.errors import ConfigurationError
from tablereason.sandbox import Limits, PythonSandbox, run_python

TABLE = pd.DataFrame(
    {"Name": ["Ann", "Bo", "Cy", "Di"], "Score": [12, 7, 15, 9], "Price": [1.25, 0.5, 2.0, 3.75]}
)

PROGRAMS = [
    ("ans = 3 * 7 - 4", None, 17),
    ("from fractions import Fraction\nans = Fraction(3, 4) + Fraction(1, 6)", None, 11 / 12),
    ("import statistics\nans = statistics.median([4, 1, 9, 7])", None, 5.5),
    ("import statistics\nans = statistics.mode([3, 3, 1, 2])", None, 3),
    (
        "import datetime\nans = (datetime.date(2024, 3, 1) - datetime.date(2024, 2, 1)).days",
        None,
        29,
    ),
    (
        "import datetime\nans = datetime.date(2024, 3, 1) + datetime.timedelta(days=3)",
        None,
        "2024-03-04",
    ),
    ("scores = [12, 7, 15, 9]\nans = max(scores) - min(scores)", None, 8),
    ("ans = len([r for r in rows if r[1] > 8])", {"rows": [["Ann", 12], ["Bo", 7], ["Cy", 15]]}, 2),
    ("ans = sorted(names, key=len)[0]", {"names": ["Anna", "Bo", "Cyd"]}, "Bo"),
    ("ans = round(sum(p * 2 for p in prices), 2)", {"prices": [1.25, 0.5]}, 3.5),
    ("ans = df['Score'].sum()", {"df": TABLE}, 43),
    ("ans = df.loc[df['Score'].idxmax(), 'Name']", {"df": TABLE}, "Cy"),
    ("ans = float(df['Price'].mean())", {"df": TABLE}, 1.875),
    ("import pandas as pd\nans = pd.Series([1, 2, 3]).cumsum().tolist()", None, [1, 3, 6]),
    ("import numpy as np\nans = np.mean([1, 2, 3, 4])", None, 2.5),
    ("import numpy as np\nans = np.int64(7)", None, 7),
    ("import math\nans = math.gcd(12, 18) + math.floor(2.7)", None, 8),
    ("ans = {'a': 1, 'b': [2, 3]}", None, {"a": 1, "b": [2, 3]}),
    ("ans = 'yes' if 12 > 7 else 'no'", None, "yes"),
    ("ans = (1, 2)", None, [1, 2]),
    ("from decimal import Decimal\nans = Decimal('1.10') + Decimal('2.20')", None, 3.3),
    ("def rate(a, b):\n    return (b - a) / a\nans = rate(4, 6)", None, 0.5),
    ("import collections\nans = collections.Counter('abca').most_common(1)[0][0]", None, "a"),
]


@pytest.mark.parametrize(("code", "inputs", "expected"), PROGRAMS)
def test_program_returns_value(box: PythonSandbox, code: str, inputs, expected) -> None:
    result = box.run(code, inputs)
    assert result.error is None, result.error
    assert result.has_value
    if isinstance(expected, float):
        assert result.value == pytest.approx(expected)
    else:
        assert result.value == expected


def test_table_like_object_with_to_pandas(box: PythonSandbox) -> None:
    class FakeTable:
        def to_pandas(self) -> pd.DataFrame:
            return TABLE

    result = box.run("ans = list(df.columns)", {"df": FakeTable()})
    assert result.value == ["Name", "Score", "Price"]


def test_value_type_is_reported(box: PythonSandbox) -> None:
    result = box.run("from fractions import Fraction\nans = Fraction(1, 3)")
    assert result.value_type == "Fraction"
    assert result.value == pytest.approx(1 / 3)


def test_stdout_is_captured(box: PythonSandbox) -> None:
    result = box.run("print('hello', 3)\nans = 1")
    assert result.stdout == "hello 3\n"


def test_error_message_names_line_and_type(box: PythonSandbox) -> None:
    result = box.run("x = 1\ny = [1][5]\nans = x")
    assert result.error == "IndexError: list index out of range (line 2)"
    assert not result.has_value


def test_missing_answer_is_not_an_error(box: PythonSandbox) -> None:
    result = box.run("x = 5")
    assert result.error is None and not result.has_value and result.value is None


def test_answer_name_is_configurable(box: PythonSandbox) -> None:
    assert box.run("answer = 9", answer="answer").value == 9


def test_default_mode_shares_one_namespace(box: PythonSandbox) -> None:
    code = "t = 3\nxs = [1, 4, 5]\nans = len([x for x in xs if x > t])"
    assert box.run(code).value == 2


def test_paper_mode_reproduces_separate_scopes(box: PythonSandbox) -> None:
    code = "t = 3\nxs = [1, 4, 5]\nans = len([x for x in xs if x > t])"
    result = box.run(code, mode="paper")
    assert result.error is not None and "NameError" in result.error
    assert box.run("ans = 2 + 2", mode="paper").value == 4


def test_no_state_carries_between_programs(box: PythonSandbox) -> None:
    assert box.run("import math\nmath.tau = 1\nleak = 42\nans = math.tau").value == 1
    import math

    assert box.run("import math\nans = math.tau").value == pytest.approx(math.tau)
    result = box.run("ans = leak")
    assert result.error is not None and "NameError" in result.error


def test_value_size_is_capped(box: PythonSandbox) -> None:
    result = box.run("ans = 'x' * 200000")
    assert result.error is not None and "larger than" in result.error


def test_output_size_is_capped(box: PythonSandbox) -> None:
    result = box.run("for i in range(10**6):\n    print(i)", limits=Limits(output_bytes=1000))
    assert result.error is not None and "printed more than 1000" in result.error
    assert len(result.stdout) <= 1000


def test_invalid_limits_and_inputs_are_configuration_errors(box: PythonSandbox) -> None:
    with pytest.raises(ConfigurationError):
        Limits(wall_seconds=0)
    with pytest.raises(ConfigurationError):
        box.run("ans = 1", {"_secret": 1})
    with pytest.raises(ConfigurationError):
        box.run("ans = 1", {"x": object()})


def test_concurrent_callers_share_a_pool() -> None:
    results: dict[int, object] = {}

    with PythonSandbox(workers=2) as pool:

        def work(i: int) -> None:
            results[i] = pool.run("ans = n * n", {"n": i}).value

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert results == {i: i * i for i in range(8)}


def test_run_python_uses_default_pool() -> None:
    assert run_python("ans = sum(xs)", {"xs": [1, 2, 3]}).value == 6
