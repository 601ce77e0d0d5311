"""The bound on what a row expression produces holds: DuckDB never writes more than it says.

Expressions are drawn from the text functions a row expression may call (nested, over
cells holding multi-byte characters whose case mapping grows them, with patterns that
match the empty string and replacements with back-references); each is compiled, its
bound taken, then evaluated over every row, and the longest cell DuckDB wrote is
compared with the bound. Limits and the refusal messages are checked too.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason.errors import ConfigurationError, SQLError
from tablereason.operations.expression_bounds import (
    TEXT_OF_VALUE_BYTES,
    ExpressionLimits,
    expression_limits,
    set_expression_limits,
)
from tablereason.operations.row_expressions import compile_expression
from tablereason.table import Table

CELLS = ["", "a", "snow", "Straße", "ɐɐɐ", "ȺȾ", "ıiİ", "ﬀ", "😀x😀", "12,5", "  pad  ", "a.b.c"]
TABLE = Table.from_records(
    ["t", "u", "d"], [[c, CELLS[(i * 5) % len(CELLS)], "2020-03-04"] for i, c in enumerate(CELLS)]
)

_LITERALS = st.sampled_from(["", "a", "ß", "ɐ", "xyz", "😀", "--", "\\1", "<\\0>", "\\0\\0\\0"])
_PATTERNS = st.sampled_from(["", ".", "(.)", "a*", "(s)(n)", "[^a]", "x*", "^", "$", "(.*)"])


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _expressions() -> st.SearchStrategy[str]:
    leaves = st.sampled_from(["t", "u", "'lit'", "'ß😀'"])

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        one = st.tuples(inner)
        two = st.tuples(inner, inner)
        return st.one_of(
            st.builds(
                lambda e, f, r: f"replace({e}, {_quote(f)}, {_quote(r)})",
                inner, _LITERALS, _LITERALS,
            ),
            st.builds(
                lambda e, p, r, g: f"regexp_replace({e}, {_quote(p)}, {_quote(r)}{g})",
                inner, _PATTERNS, _LITERALS, st.sampled_from(["", ", 'g'"]),
            ),
            one.map(lambda a: f"upper({a[0]})"),
            one.map(lambda a: f"lower({a[0]})"),
            one.map(lambda a: f"trim({a[0]})"),
            one.map(lambda a: f"reverse({a[0]})"),
            one.map(lambda a: f"substring({a[0]}, 2, 3)"),
            one.map(lambda a: f"left({a[0]}, 2)"),
            one.map(lambda a: f"split_part({a[0]}, '.', 2)"),
            st.builds(lambda e, p: f"regexp_extract({e}, {_quote(p)})", inner, _PATTERNS),
            two.map(lambda a: f"({a[0]} || {a[1]})"),
            two.map(lambda a: f"concat({a[0]}, {a[1]})"),
            two.map(lambda a: f"concat_ws('--', {a[0]}, {a[1]})"),
            two.map(lambda a: f"coalesce(nullif({a[0]}, ''), {a[1]})"),
            two.map(lambda a: f"CASE WHEN length({a[0]}) > 2 THEN {a[0]} ELSE {a[1]} END"),
            two.map(lambda a: f"greatest({a[0]}, {a[1]})"),
            one.map(lambda a: f"CAST({a[0]} AS VARCHAR)"),
        )  # fmt: skip

    return st.recursive(leaves, extend, max_leaves=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expressions())
def test_no_cell_is_longer_than_the_bound(expression: str) -> None:
    try:
        compiled = compile_expression(TABLE, expression)
        added = TABLE.apply("add_column", name="v", expression=expression)
    except SQLError as error:  # refused (too large, too deeply nested): nothing ran
        assert "not allowed" not in str(error), (expression, str(error))
        return
    written = max(len(v.encode("utf-8")) for v in added.column_values("v"))
    assert written <= max(compiled.bound.value_bytes, TEXT_OF_VALUE_BYTES), expression
    computed = added.column("v").computed
    assert computed is not None and computed.max_bytes == written


def test_dates_and_numbers_written_as_text_fit_their_bound() -> None:
    for expression in ["strftime(CAST(d AS DATE), '%A, %d %B %Y %c %x')", "length(t) * 1e300"]:
        compiled = compile_expression(TABLE, expression)
        added = TABLE.apply("add_column", name="v", expression=expression)
        written = max(len(v.encode("utf-8")) for v in added.column_values("v"))
        assert written <= max(compiled.bound.value_bytes, TEXT_OF_VALUE_BYTES)


def test_refusals_say_which_limit() -> None:
    wide = "w" * 800
    twice = f"regexp_replace(regexp_replace(t, '', '{wide}', 'g'), '', '{wide}', 'g')"
    with pytest.raises(SQLError, match=r"can produce up to .* per row"):
        TABLE.apply("filter_rows", condition=f"length({twice}) > 1")
    grown = "replace(" * 4 + "t" + ", 'a', 'aa')" * 4
    with pytest.raises(SQLError, match="nests 4 functions"):
        TABLE.apply("add_column", name="v", expression=grown)
    set_expression_limits(ExpressionLimits(memory=2**16))
    try:
        with pytest.raises(SQLError, match=r"may need .* of memory"):
            TABLE.apply("add_column", name="v", expression=f"replace(t, 'a', '{'z' * 900}')")
    finally:
        set_expression_limits(None)


def test_limits_are_checked_and_restored() -> None:
    with pytest.raises(ConfigurationError):
        ExpressionLimits(seconds=0)
    with pytest.raises(ConfigurationError):
        ExpressionLimits(memory=-1)
    set_expression_limits(ExpressionLimits(max_chars=10))
    try:
        with pytest.raises(SQLError, match="keep it under 10"):
            TABLE.apply("filter_rows", condition="t = 'abcdefghijk'")
    finally:
        set_expression_limits(None)
    assert expression_limits() == ExpressionLimits()
