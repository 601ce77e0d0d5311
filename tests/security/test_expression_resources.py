"""Model-written row expressions cannot make the process's own database grow without bound.

Row expressions run on the process's DuckDB database, not in the SQL worker, so what
they can produce is bounded before they run (per row, by the nesting of functions that
multiply a size, and by the memory of the rows evaluated at once), the text a table's
computed columns produce over its rows is bounded once they are measured, and every
read of a computed column runs under a time limit. Each bomb below is refused before it
runs (the process does not grow), through ``filter_rows``, ``add_column`` and ``ask``;
nesting that would exhaust the parser is refused before it parses; NaN and infinity
reach a prompt as text; and every failure is one of the project's errors.
"""

from __future__ import annotations

import dataclasses
import time

import pytest

import tablereason as tr
from tablereason.errors import SQLError, TableReasonError
from tablereason.llm import Request, ScriptedLLM
from tablereason.operations import table_profile
from tablereason.table import Table

ROWS = 3_000
WIDE = "x" * 600


def _table(n: int = ROWS) -> Table:
    return Table.from_records(
        ["id", "kind", "day"],
        [[str(i), ("snow", "rain")[i % 2], f"2013-02-{1 + i % 28:02d}"] for i in range(n)],
    )


TABLE = _table()


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


BOMBS = [
    f"replace(replace(replace(kind, 'o', '{WIDE}'), 'x', '{WIDE}'), 'x', '{WIDE}')",
    f"replace(replace(kind, 'n', '{WIDE}'), 'x', '{WIDE}')",
    "replace(replace(replace(replace(kind, 's', 'ss'), 's', 'ss'), 's', 'ss'), 's', 'ss')",
    f"regexp_replace(regexp_replace(kind, '', '{WIDE}', 'g'), '', '{WIDE}', 'g')",
    "regexp_replace(regexp_replace(regexp_replace(kind, '(.*)', '" + "\\1" * 60 + "', 'g'), "
    "'(.*)', '" + "\\1" * 60 + "', 'g'), '(.*)', '" + "\\1" * 60 + "', 'g')",
    "regexp_replace(regexp_replace(kind, '.', '"
    + "\\0" * 300
    + "', 'g'), '.', '"
    + "\\0" * 300
    + "', 'g')",
    f"regexp_replace(replace(kind, 'o', '{WIDE}'), '', '{WIDE}', 'g')",
    "upper(" * 22 + "kind" + ")" * 22,
    "lower(upper(" * 11 + "kind" + "))" * 11,
    f"replace(regexp_replace(kind, '', '{WIDE}', 'g'), 'x', '{WIDE}')",
    "replace(kind, 'o', kind)",  # a replacement that is not a quoted text
    "regexp_replace(kind, 'o', kind || kind, 'g')",
    "repeat(kind, 1000000000)",
    "lpad(kind, 1000000000, 'x')",
    "printf('%1000000000s', kind)",
    "format('{:>1000000000}', kind)",
    "array_to_string(range(100000000), ',')",
    "string_agg(kind, ',')",
]


def test_the_bombs_are_many() -> None:
    assert len(BOMBS) >= 18


@pytest.mark.parametrize("expression", BOMBS)
def test_a_bomb_is_refused_before_it_runs(expression: str) -> None:
    before, started = _rss(), time.perf_counter()
    with pytest.raises(SQLError):
        TABLE.apply("add_column", name="bomb", expression=expression)
    with pytest.raises(SQLError):
        TABLE.apply("filter_rows", condition=f"length({expression}) > 0")
    assert time.perf_counter() - started < 5
    assert _rss() - before < 64 * 2**20


def test_growth_across_computed_columns_is_refused_before_it_runs() -> None:
    """Each column doubles the one before; the bound carries through the chain, and the
    process grows by about the memory allowed, not by what the chain would build."""
    from tablereason.operations.expression_bounds import ExpressionLimits, set_expression_limits

    set_expression_limits(ExpressionLimits(memory=32 * 2**20))
    try:
        for grow in ("{s} || {s}", "replace({s}, 'o', 'oooo')", "upper({s}) || lower({s})"):
            table, before = TABLE, _rss()
            with pytest.raises(SQLError, match=r"memory|per row|nests"):
                for i in range(40):
                    source = "kind" if i == 0 else f"c{i - 1}"
                    table = table.apply(
                        "add_column", name=f"c{i}", expression=grow.format(s=source)
                    )
            assert _rss() - before < 96 * 2**20
    finally:
        set_expression_limits(None)


def test_ordinary_expressions_still_run() -> None:
    for expression in [
        "replace(replace(kind, 'o', '0'), 'n', 'N')",
        "regexp_replace(kind, '(s)(n)', '\\2\\1', 'g')",
        "upper(kind) || '-' || lower(kind) || '-' || id",
        "concat_ws(', ', kind, id, day)",
        "strftime(CAST(day AS DATE), '%A %d %B %Y')",
        "CASE WHEN id > 10 THEN replace(kind, 's', 'S') ELSE kind END",
        "concat(" + ", ".join([f"replace(kind, 'o', '{'y' * 60}')"] * 20) + ")",
        "strftime(CAST(day AS DATE), '" + "%d" * 500 + "')",
    ]:
        added = TABLE.apply("add_column", name="v", expression=expression)
        assert len(added.column_values("v")) == ROWS


def test_the_text_of_a_table_s_computed_columns_is_bounded() -> None:
    from tablereason.operations.expression_bounds import ExpressionLimits, set_expression_limits

    long = Table.from_records(["t"], [[f"{i:04d}" + "w" * 400] for i in range(ROWS)])
    set_expression_limits(ExpressionLimits(max_output_bytes=2 * 2**20))
    try:
        once = long.apply("add_column", name="a", expression="t || '!'")  # 1.2 MB
        with pytest.raises(SQLError, match=r"produces .* of text"):
            once.apply("add_column", name="b", expression="t || '?'")  # 2.4 MB together
    finally:
        set_expression_limits(None)
    assert len(once.column_values("a")) == ROWS


def _ask(plan: str, reply: str, table: Table = TABLE) -> tuple[object, list[Request]]:
    seen: list[Request] = []

    def answer(request: Request) -> str:
        seen.append(request)
        site = request.call_site.rsplit("/", 1)[-1]
        return {"plan": plan, "final_query": " 1"}.get(site, reply)

    return tr.ask(table, "how many snow days?", llm=ScriptedLLM(fn=answer)), seen


@pytest.mark.parametrize("expression", BOMBS[:8])
def test_ask_refuses_a_bomb_and_answers(expression: str) -> None:
    before = _rss()
    prediction, _ = _ask(f" f_add_column(v = {expression}) -> <END>", f"v = {expression})")
    assert prediction.error is None  # type: ignore[attr-defined]
    steps = prediction.trace.steps  # type: ignore[attr-defined]
    step = next(s for s in steps if s.kind == "operation" and s.name == "add_column")
    assert step.error
    assert _rss() - before < 64 * 2**20


# ------------------------------------------------------------------ every read is timed


def test_every_read_of_a_computed_column_runs_under_its_time_limit() -> None:
    """A computed column whose reads may take 0.2 s: each kind of read (about 1 s) stops."""
    big = _table(200_000).apply(
        "add_column",
        name="v",
        expression="regexp_replace(kind || day || id, '([0-9])', '<\\1>', 'g')",
    )
    column = big.column("v")
    assert column.computed is not None
    hurried = dataclasses.replace(
        column, computed=dataclasses.replace(column.computed, seconds=0.2)
    )
    table = big.kernel.derive(big.step, columns=[*big.kernel.refs[:-1], hurried])  # type: ignore[arg-type]
    reads = {
        "rows": lambda: table.rows(),
        "column values": lambda: table.column_values("v"),
        "sql": lambda: table.sql("SELECT count(*) FROM t"),
        "group": lambda: table.group_by("v"),
        "sort": lambda: table.sort_by("v"),
        "filter": lambda: table.apply("filter_rows", condition="v LIKE '%<9>%'"),
        "lookup": lambda: table.lookup_rows(["<7>"]),
        "profile": lambda: table_profile.profile(table),
        "add over it": lambda: table.apply("add_column", name="w", expression="length(v)"),
    }
    for name, read in reads.items():
        with pytest.raises(SQLError, match=r"longer than 0\.2 s"):
            read()
        assert name


# ------------------------------------------------------------------ nesting and typed errors


DEEP = [
    "(" * 900 + "id" + ")" * 900,
    "NOT " * 400 + "id = 1",
    "- " * 600 + "id",
    "~" * 600 + "id",
    "abs(" * 300 + "id" + ")" * 300,
    "CAST(" * 150 + "id" + " AS INT)" * 150,
    "CASE WHEN true THEN " * 90 + "id" + " END" * 90,
    "^".join(["2"] * 990),
    "[" * 300 + "1" + "]" * 300,
    "{'a': " * 200 + "1" + "}" * 200,
    "+".join(["id"] * 660),
    "coalesce(" + ", ".join(["id"] * 600) + ")",
    "id IN (" + ", ".join(["1"] * 900) + ")",
    "x" * 5000,
]


@pytest.mark.parametrize("expression", DEEP, ids=range(len(DEEP)))
def test_deep_or_long_input_is_a_project_error(expression: str) -> None:
    for run in (
        lambda: TABLE.apply("filter_rows", condition=expression),
        lambda: TABLE.apply("add_column", name="d", expression=expression),
    ):
        try:
            run()
        except TableReasonError as error:
            assert str(error)


@pytest.mark.parametrize("expression", DEEP[:8], ids=range(8))
def test_ask_survives_deep_input(expression: str) -> None:
    prediction, _ = _ask(f" f_select_row(where {expression}) -> <END>", f"{expression})")
    assert prediction.error is None  # type: ignore[attr-defined]


ODD_TEXT = ["kind = 'sn\ud800ow'", "kind = 'snow'\ud800", "\udfff", "kind = 'a\x00'", "\x00"]


@pytest.mark.parametrize("text", ODD_TEXT, ids=range(len(ODD_TEXT)))
def test_text_that_is_not_text_is_a_project_error(text: str) -> None:
    with pytest.raises(SQLError):
        TABLE.apply("filter_rows", condition=text)
    with pytest.raises(SQLError):
        TABLE.apply("add_column", name="v", expression=text)
    for plan in (f" f_select_row(where {text}) -> <END>", f" f_add_column(v = {text}) -> <END>"):
        prediction, _ = _ask(plan, plan.split("(", 1)[1])
        assert isinstance(prediction, tr.Prediction)


@pytest.mark.parametrize(
    ("expression", "shown"), [("id / 0", "sum nan"), ("2 ** (id * 1000)", "sum inf")]
)
def test_nan_and_infinity_reach_the_view_as_text(expression: str, shown: str) -> None:
    prediction, seen = _ask(f" f_add_column(v = {expression}) -> <END>", f"v = {expression})")
    assert prediction.error is None  # type: ignore[attr-defined]
    final = next(r.as_text() for r in seen if r.call_site.endswith("final_query"))
    line = next(line for line in final.splitlines() if line.startswith("column v :"))
    assert shown in line
