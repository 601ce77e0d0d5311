"""Model-written row expressions against a table handed on without some of its columns.

A table made with ``select_columns`` still shares its storage with the columns it
dropped, and the hidden row id; a ``filter_rows`` condition or an ``add_column``
expression a model writes must not reach them by any name or position, and no error
message may quote one of their cells. Each hostile expression runs through every path:
``filter_rows``, ``add_column`` followed by every kind of read, and ``ask`` with a
scripted model (the large-table mode of Chain-of-Table, whose prompts and trace are
searched for the hidden cells). The last tests run the expression over the relation
with the allow-list switched off, which shows that the relation itself holds nothing
hidden: whatever the allow-list misses still reads only the expression's own inputs.
"""

from __future__ import annotations

import pytest

import tablereason as tr
from tablereason.errors import TableReasonError
from tablereason.llm import Request, ScriptedLLM
from tablereason.operations import table_profile
from tablereason.table import Table

SECRET = "S3CRET"
ROWS = 1_500  # past the large-table switch (1,000 rows) and the small-table size


def _full(n: int = ROWS) -> Table:
    return Table.from_records(
        ["id", "kind", "secret", "score"],
        [[str(i), ("snow", "rain")[i % 2], f"{SECRET}-{i}", str(i * 3)] for i in range(n)],
    )


FULL = _full()
VISIBLE = FULL.select_columns(["id", "kind", "score"])  # the secret column is dropped

# Every way a name or a position might reach the dropped column or the row id.
HIDDEN = [
    *(f"#{n}" for n in range(1, 7)),
    "CAST(#4 AS VARCHAR) || kind",
    "CAST(#3 AS INTEGER)",
    "CAST(#4 AS INTEGER)",
    "CAST(#4 AS DATE)",
    "COALESCE(#3, kind)",
    "CASE WHEN #1 > 0 THEN #3 END",
    "secret", '"secret"', "SECRET", '"Secret"', "t.secret", 't."secret"', " secret ",
    "\uff53\uff45\uff43\uff52\uff45\uff54",  # full-width letters
    "secre\u0442",  # a Cyrillic letter
    "secret\u200b",  # a zero-width space
    "c2", '"c2"', "b.c2", '"b"."c2"', "base_0.c2", "a1.c0", "p2", '"p2"', "s.p2", "k0.p2",
    "i.v0", "e.r", "x0", "__rid", '"__rid"', "t.__rid", "__pos", "rowid", '"rowid"',
    "COLUMNS('sec.*')", "COLUMNS(*)", "*", "t.*", "kind.*",
    "struct_pack(a := secret)", "{'a': kind}.a", "(kind).a", "kind.secret", "kind['secret']",
    "kind[1]", "list_transform([kind], x -> secret)", "[x FOR x IN [kind]]",
    "kind -> '$.secret'", "getvariable('secret')", "current_setting('threads')",
    "columns(c -> c LIKE 'sec%')", "(SELECT secret FROM t LIMIT 1)", "?", "$1", ":name",
    "kind COLLATE nocase", "unnest([secret])",
]  # fmt: skip


def _leaks(text: str) -> bool:
    return SECRET in text


def _condition(expression: str) -> str:
    return f"CAST(({expression}) AS VARCHAR) LIKE '%3CRE%'"  # no hidden cell in the text


def _refused_or_clean(run: object) -> object:
    """Run ``run()``: a project error whose message quotes no hidden cell, or its result."""
    try:
        return run()  # type: ignore[operator]
    except TableReasonError as error:
        assert not _leaks(str(error)), str(error)
        return None


def test_the_battery_is_large() -> None:
    assert len(HIDDEN) >= 60


@pytest.mark.parametrize("expression", HIDDEN)
def test_a_condition_reads_no_hidden_column(expression: str) -> None:
    kept = _refused_or_clean(lambda: VISIBLE.apply("filter_rows", condition=_condition(expression)))
    assert kept is None or kept.num_rows == 0  # type: ignore[attr-defined]


def _reads(table: Table) -> list[str]:
    """Every kind of read of a table with a computed column, as text."""
    profile = table_profile.profile(table, examples=5)
    return [
        repr(table.rows()),
        repr(table.rows(3)),
        repr(table.column_values("leak")),
        table.to_pipe(max_rows=20),
        repr(table.sql("SELECT * FROM t").rows()),
        repr(table.group_by("leak").rows()),
        repr(table.sort_by("leak", descending=True).rows(5)),
        repr(table.apply("filter_rows", condition="leak LIKE '%3CRE%'").rows()),
        repr(table.lookup_rows(["3cre"]).rows(5)),
        repr(profile),
    ]


@pytest.mark.parametrize("expression", HIDDEN)
def test_a_computed_column_reads_no_hidden_column(expression: str) -> None:
    added = _refused_or_clean(
        lambda: VISIBLE.apply(
            "add_column", name="leak", expression=f"CAST(({expression}) AS VARCHAR)"
        )
    )
    if added is None:
        return
    for text in _reads(added):  # type: ignore[arg-type]
        assert not _leaks(text), text[:300]


def test_an_error_quotes_only_visible_cells() -> None:
    """A failing cast quotes the cell it failed on: one the expression was allowed to read."""
    with pytest.raises(TableReasonError) as caught:
        VISIBLE.apply("filter_rows", condition="CAST(kind AS INTEGER) > 0")
    assert "snow" in str(caught.value) or "rain" in str(caught.value)
    assert not _leaks(str(caught.value))


def test_rows_left_out_upstream_are_not_read_either() -> None:
    """A row a filter dropped holds a cell that fails the cast; it is never evaluated."""
    rows = [[str(i), "ok"] for i in range(3000)] + [[f"{SECRET}-row", "hidden"]]
    table = Table.from_records(["n", "tag"], rows).apply("filter_rows", condition="tag = 'ok'")
    assert table.apply("filter_rows", condition="CAST(n AS INTEGER) >= 2998").num_rows == 2
    added = table.apply("add_column", name="m", expression="CAST(n AS INTEGER) + 1")
    assert added.column_values("m")[-1] == "3000"


# ------------------------------------------------------------------ through ask


ASKED = [
    "CAST(#4 AS VARCHAR) || kind", "#4", "CAST(#4 AS INTEGER)", "CAST(#3 AS INTEGER)", "secret",
    '"SECRET"', "t.__rid", "p2", "b.c2", "COLUMNS('sec.*')", "struct_pack(a := secret)",
    "(kind).a", "i.v0", "secre\u0442", "kind['secret']", "list_transform([kind], x -> secret)",
]  # fmt: skip


def _ask(plan: str, reply: str) -> tuple[object, list[Request]]:
    seen: list[Request] = []

    def answer(request: Request) -> str:
        seen.append(request)
        site = request.call_site.rsplit("/", 1)[-1]
        return {"plan": plan, "final_query": " 1"}.get(site, reply)

    prediction = tr.ask(VISIBLE, "how many snow days?", llm=ScriptedLLM(fn=answer))
    return prediction, seen


@pytest.mark.parametrize("expression", ASKED)
@pytest.mark.parametrize("operation", ["select_row", "add_column"])
def test_ask_shows_no_hidden_cell_in_any_prompt_or_trace(operation: str, expression: str) -> None:
    if operation == "select_row":
        text = f"{_condition(expression)})"
        plan = f" f_select_row(where {text} -> <END>"
    else:
        text = f"leak = CAST(({expression}) AS VARCHAR))"
        plan = f" f_add_column({text} -> f_group_column(leak) -> <END>"
    prediction, seen = _ask(plan, text)
    assert prediction.error is None or not _leaks(prediction.error)  # type: ignore[attr-defined]
    assert not _leaks(prediction.trace.to_json())  # type: ignore[attr-defined]
    assert not any(_leaks(request.as_text()) for request in seen)


# ------------------------------------------------------------------ the relation itself


@pytest.mark.parametrize(
    "expression",
    ["#1", "#2", "#3", "#4", "#6", "CAST(#3 AS INTEGER)", "CAST(#2 AS VARCHAR) || #1"],
)
def test_without_the_allow_list_a_position_reaches_only_the_inputs(
    monkeypatch: pytest.MonkeyPatch, expression: str
) -> None:
    """The relation an expression runs over holds its inputs alone (as v0, v1, ...)."""
    monkeypatch.setattr("tablereason.operations.row_expressions.check_nodes", lambda tree: None)
    full = f"CAST(({expression}) AS VARCHAR) || kind"  # kind is an input: one slot at least
    added = _refused_or_clean(lambda: VISIBLE.apply("add_column", name="leak", expression=full))
    if added is not None:
        for text in _reads(added):  # type: ignore[arg-type]
            assert not _leaks(text), text[:300]
    kept = _refused_or_clean(lambda: VISIBLE.apply("filter_rows", condition=_condition(full)))
    assert kept is None or kept.num_rows == 0  # type: ignore[attr-defined]
