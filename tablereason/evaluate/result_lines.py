"""The lines of a result file, checked: valid JSON objects, not too deep, of the right shape.

A result file may have been edited, truncated or planted, and every reader of it (the
report, ``show``, ``merge``, a resumed run) relies on its records' shape. Each line is
checked once, when it is read, and any problem is a :class:`ResultFileError` that names
the file and the line, instead of a ``RecursionError``, ``KeyError`` or ``TypeError``
later on.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

import numpy as np

from tablereason.errors import TableReasonError

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects in one line; real records stay under 10."""
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NUMBERS = ("score", "duration_s", "cost", "operations", "table_rows")  # or null
_COUNTS = ("prompt_tokens", "completion_tokens", "requests")  # never null
_KINDS = (
    ("groups", list),
    ("companion_scores", dict),
    ("trace", dict),
    ("error", str),
    ("value", dict),
    ("evidence", dict),
    ("warnings", list),
)
_STEP_KINDS = (("arguments", dict), ("raw", list), ("usage", dict), ("table", dict))


class ResultFileError(TableReasonError, ValueError):
    """A result file is damaged (not just a torn last line) or belongs to another run."""


def depth(line: bytes) -> int:
    """How deeply arrays and objects nest in one line of JSON (strings are skipped).

    Example:
        >>> depth(b'{"a": [[1], "]]]"]}')
        3
    """
    brackets = _STRINGS.sub(b"", line).translate(None, _NOT_BRACKETS)
    if brackets.count(b"[") + brackets.count(b"{") <= MAX_DEPTH:  # cannot be too deep
        return min(brackets.count(b"[") + brackets.count(b"{"), MAX_DEPTH)
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def parse_line(raw: bytes, path: str | os.PathLike[str], number: int) -> dict[str, Any]:
    """One line of a result file as a JSON object.

    Raises:
        ResultFileError: When the line is not JSON, nests deeper than :data:`MAX_DEPTH`
            or is not an object.
    """
    if depth(raw) > MAX_DEPTH:
        raise _damaged(path, number, f"it nests deeper than {MAX_DEPTH} levels")
    try:
        record = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResultFileError(
            f"{path}: line {number} is not valid JSON ({exc}); the file is damaged beyond "
            "a torn last line. Move it aside and rerun, or merge the good lines by hand."
        ) from exc
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise _damaged(path, number, "it nests too deeply") from exc
    if not isinstance(record, dict):
        raise _damaged(path, number, f"it is a JSON {type(record).__name__}, not an object")
    return record


def check_record(record: dict[str, Any], path: str | os.PathLike[str], number: int) -> None:
    """Check the fields of a result record that readers rely on.

    ``id`` must be text or a number; scores, times and costs finite numbers or null,
    token and request counts numbers;
    ``groups`` a list, ``companion_scores`` an object of numbers, ``trace`` an object
    whose ``steps`` are objects, each with a table of a list ``header`` and list ``rows``;
    the answer's ``value`` and ``evidence`` objects, and ``warnings`` a list of objects.

    Raises:
        ResultFileError: Naming the file, the line and the field.
    """
    example = record.get("id")
    if isinstance(example, bool) or not isinstance(example, (str, int, float)):
        raise _damaged(path, number, f"its id is {example!r:.40}, not text")
    for key in _NUMBERS:
        _number(record.get(key), path, number, key)
    for key in _COUNTS:
        _number(record.get(key, 0), path, number, key, nullable=False)
    for key, kind in _KINDS:
        if record.get(key) is not None and not isinstance(record[key], kind):
            raise _damaged(path, number, f"its {key} is not a JSON {_name(kind)}")
    for name, value in (record.get("companion_scores") or {}).items():
        _number(value, path, number, f"companion_scores.{name}")
    if not all(isinstance(w, dict) for w in record.get("warnings") or []):
        raise _damaged(path, number, "its warnings are not JSON objects")
    steps = (record.get("trace") or {}).get("steps")
    if steps is None:
        return
    if not isinstance(steps, list):
        raise _damaged(path, number, "its trace.steps is not a JSON array")
    for position, step in enumerate(steps, start=1):
        where = f"trace step {position}"
        if not isinstance(step, dict):
            raise _damaged(path, number, f"its {where} is not a JSON object")
        for key, kind in _STEP_KINDS:
            if step.get(key) is not None and not isinstance(step[key], kind):
                raise _damaged(path, number, f"its {where} {key} is not a JSON {_name(kind)}")
        _number(step.get("duration_s"), path, number, f"{where} duration_s")
        for name, value in (step.get("usage") or {}).items():
            _number(value, path, number, f"{where} usage.{name}")
        table = step.get("table")
        if table is not None and not (
            isinstance(table.get("header"), list)
            and isinstance(table.get("rows") or [], list)
            and all(isinstance(row, list) for row in table.get("rows") or [])
        ):
            raise _damaged(path, number, f"its {where} table needs a header list and row lists")


def _number(
    value: Any, path: str | os.PathLike[str], number: int, key: str, *, nullable: bool = True
) -> None:
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _damaged(path, number, f"its {key} is {value!r:.40}, not a number")


def _name(kind: type) -> str:
    names: dict[type, str] = {list: "array", dict: "object", str: "string"}
    return names[kind]


def _damaged(path: str | os.PathLike[str], number: int, why: str) -> ResultFileError:
    return ResultFileError(
        f"{path}: line {number}: {why}; the file was edited or damaged: fix or delete that "
        "line, or move the file aside and rerun"
    )
