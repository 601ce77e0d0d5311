"""Values across the sandbox boundary, as JSON only (never pickle).

Inputs go in as tagged JSON: plain data as is, tables (pandas DataFrames or
anything with ``to_pandas()``) as columns and rows. The answer comes back as
plain data: numbers, strings, booleans, None, lists and dicts; numpy and pandas
values become their Python equivalents, fractions and decimals become floats,
dates become ISO strings, anything else becomes ``str(value)``.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import fractions
import json
import math
from collections.abc import Mapping
from typing import Any

from tablereason.errors import ConfigurationError


def encode_input(value: Any) -> dict[str, Any]:
    """Tag one input value for the trip into the sandbox.

    Args:
        value: JSON-able data, a pandas DataFrame, or an object with ``to_pandas()``.

    Returns:
        ``{"kind": "json", "value": ...}`` or ``{"kind": "frame", ...}``.

    Raises:
        ConfigurationError: The value cannot be sent as data.

    Example:
        >>> encode_input([1, 2])
        {'kind': 'json', 'value': [1, 2]}
    """
    if hasattr(value, "to_pandas") and not hasattr(value, "iloc"):
        value = value.to_pandas()
    if hasattr(value, "iloc") and hasattr(value, "columns"):
        frame = value
        columns = [str(c) for c in frame.columns]
        dtypes = {str(c): str(t) for c, t in frame.dtypes.items()}
        rows = json.loads(frame.to_json(orient="values", date_format="iso", double_precision=15))
        return {"kind": "frame", "columns": columns, "dtypes": dtypes, "rows": rows}
    try:
        json.dumps(value, allow_nan=True)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(
            f"sandbox inputs must be JSON data or tables, not {type(value).__name__}: {exc}"
        ) from exc
    return {"kind": "json", "value": value}


def encode_inputs(inputs: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Tag every input; names must be identifiers without leading underscores.

    Example:
        >>> encode_inputs({"x": 1})
        {'x': {'kind': 'json', 'value': 1}}
    """
    encoded: dict[str, dict[str, Any]] = {}
    for name, value in (inputs or {}).items():
        if not name.isidentifier() or name.startswith("_"):
            raise ConfigurationError(
                f"input name {name!r} must be a Python identifier not starting with '_'"
            )
        encoded[name] = encode_input(value)
    return encoded


def decode_input(tagged: Mapping[str, Any]) -> Any:
    """Rebuild one input inside the sandbox (a DataFrame for tables).

    Example:
        >>> decode_input({"kind": "json", "value": 3})
        3
    """
    if tagged["kind"] == "json":
        return tagged["value"]
    import pandas as pd

    frame = pd.DataFrame(tagged["rows"], columns=tagged["columns"])
    for column, dtype in tagged["dtypes"].items():
        if column in frame.columns and dtype.startswith("datetime64"):
            frame[column] = pd.to_datetime(frame[column])
    return frame


def to_data(value: Any, depth: int = 0) -> Any:
    """Convert an answer to plain JSON-able data.

    Example:
        >>> import fractions
        >>> to_data({"a": (1, fractions.Fraction(1, 4))})
        {'a': [1, 0.25]}
    """
    if depth > 20:
        return str(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, (fractions.Fraction, decimal.Decimal)):
        return float(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): to_data(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return [to_data(v, depth + 1) for v in items]
    module = type(value).__module__.split(".")[0]
    if module == "numpy" and hasattr(value, "tolist"):
        return to_data(value.tolist(), depth + 1)
    if module == "pandas":
        if hasattr(value, "to_dict") and hasattr(value, "columns"):
            return to_data(value.to_dict(orient="list"), depth + 1)
        if hasattr(value, "tolist"):
            return to_data(value.tolist(), depth + 1)
        if hasattr(value, "isoformat"):
            return value.isoformat()
    if isinstance(value, complex):
        return str(value)
    return str(value)


def dump_value(value: Any) -> str:
    """JSON text of converted data; NaN and infinities are kept as JSON extensions.

    Example:
        >>> dump_value(float("nan"))
        'NaN'
    """
    return json.dumps(value, allow_nan=True, ensure_ascii=False)


def is_empty(value: Any) -> bool:
    """Whether an answer counts as empty for verification (None, "", [], {}, NaN).

    Example:
        >>> is_empty([]), is_empty(0)
        (True, False)
    """
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, (str, list, dict)) and len(value) == 0
