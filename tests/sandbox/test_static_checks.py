from __future__ import annotations

import fractions

import numpy as np
import pandas as pd
import pytest

from tablereason.errors import ConfigurationError, ExecutionError
from tablereason.sandbox import check_program, find_problems
from tablereason.sandbox.guards import make_audit_hook, safe_builtins
from tablereason.sandbox.values import decode_input, encode_input, is_empty, to_data


def test_clean_program_has_no_problems() -> None:
    code = "import pandas as pd\nfrom fractions import Fraction\nans = Fraction(1, 2) + 1"
    assert find_problems(code) == []
    check_program(code)


@pytest.mark.parametrize(
    ("code", "fragment"),
    [
        ("import os", "import of 'os' is not allowed"),
        ("from subprocess import run", "import of 'subprocess'"),
        ("x = open('f')", "'open' is not available"),
        ("x = ().__class__", "special attribute '__class__'"),
        ("x = __builtins__", "the name '__builtins__'"),
        ("g = (i for i in [1])\nf = g.gi_frame", "attribute 'gi_frame'"),
        ("s = '__cla' + 'ss__'", "strings containing '__'"),
        ("ans = (", "syntax error"),
        ("from . import x", "import of '.'"),
    ],
)
def test_problems_are_readable(code: str, fragment: str) -> None:
    problems = find_problems(code)
    assert any(fragment in p for p in problems), problems
    assert all(p.startswith("line ") or "parsed" in p for p in problems)


def test_check_program_raises_execution_error_with_all_problems() -> None:
    with pytest.raises(ExecutionError) as info:
        check_program("import os\nx = eval('1')")
    assert "line 1" in str(info.value) and "line 2" in str(info.value)


def test_safe_builtins_drop_dangerous_names() -> None:
    table = safe_builtins()
    for name in ("open", "eval", "exec", "compile", "getattr", "globals"):
        assert name not in table
    with pytest.raises(ImportError, match="not allowed"):
        table["__import__"]("definitely_not_loaded_module_xyz")


def test_audit_hook_rules(tmp_path) -> None:
    hook = make_audit_hook(["/usr/lib"], str(tmp_path))
    hook("open", (str(tmp_path / "f"), "w", 0))  # scratch: allowed
    hook("open", ("/usr/lib/os-release", "r", 0))  # read-only root: allowed
    for event, args in [
        ("open", ("/etc/passwd", "r", 0)),
        ("open", ("/usr/lib/x", "w", 0)),
        ("socket.connect", (None, ("127.0.0.1", 80))),
        ("subprocess.Popen", ("id", ["id"], None, None)),
        ("ctypes.dlopen", ("libc.so.6",)),
        ("os.listdir", ("/root",)),
        ("os.remove", ("/etc/hosts",)),
    ]:
        with pytest.raises(PermissionError):
            hook(event, args)
    with pytest.raises(ImportError):
        hook("import", ("socket", None, [], [], []))
    hook("import", ("pandas.io.formats", None, [], [], []))


def test_values_round_trip_and_conversion() -> None:
    frame = pd.DataFrame({"a": [1, 2], "when": pd.to_datetime(["2024-01-01", "2024-02-01"])})
    rebuilt = decode_input(encode_input(frame))
    assert rebuilt["a"].tolist() == [1, 2]
    assert str(rebuilt["when"].dtype).startswith("datetime64")
    assert to_data(np.float64(1.5)) == 1.5
    assert to_data(fractions.Fraction(1, 4)) == 0.25
    assert to_data({1: {3, 2}}) == {"1": [2, 3]}
    assert to_data(pd.Series([1, 2])) == [1, 2]
    assert to_data(object()).startswith("<object object")
    with pytest.raises(ConfigurationError):
        encode_input(object())
    assert is_empty(float("nan")) and is_empty({}) and not is_empty(False)
