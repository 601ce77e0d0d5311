"""Efficient profile: arguments the generated chain already gives cost no further call."""

from __future__ import annotations

from typing import Any

from cot_helpers import fixture_table, load_fixture

from tablereason.llm import ScriptedLLM
from tablereason.methods import ChainOfTable

RECORD = load_fixture("tabfact")[0]  # date | site | sport | winning team | series, 8 rows


def _run(replies: list[str], **settings: Any) -> tuple[ScriptedLLM, Any]:
    llm = ScriptedLLM(replies=replies)
    method = ChainOfTable(llm, task="tabfact", profile="efficient", **settings)
    return llm, method.run(fixture_table(RECORD), RECORD["question"])


def _operations(prediction: Any) -> list[Any]:
    return [s for s in prediction.trace.steps if s.kind == "operation"]


def test_select_arguments_from_the_chain_need_no_call() -> None:
    plan = " f_select_row(row 1, row 3) -> f_select_column(site, date) -> <END>"
    llm, pred = _run([plan, " yes"])
    assert [r.call_site.rsplit("/", 1)[-1] for r in llm.requests] == ["plan", "final_query"]
    rows, columns = _operations(pred)
    assert rows.arguments["rows"] == [1, 3] and rows.usage.requests == 0
    assert rows.prompt_name is None and rows.arguments["from_chain"] is True
    assert "from the generated chain" in (rows.note or "")
    assert columns.arguments["columns"] == ["date", "site"]
    final = pred.trace.tables[-1]
    assert final.columns == ["date", "site"]
    assert final.rows() == [[RECORD["rows"][i][0], RECORD["rows"][i][1]] for i in (0, 2)]
    assert pred.answer == "yes"


def test_unusable_arguments_take_the_reference_fallback_without_a_call() -> None:
    plan = " f_select_row(row 99) -> f_group_column(no such column) -> <END>"
    llm, pred = _run([plan, " no"])
    assert [r.call_site.rsplit("/", 1)[-1] for r in llm.requests] == ["plan", "final_query"]
    rows, group = _operations(pred)
    assert rows.arguments["plan_arguments"] == "row 99" and rows.arguments["rows"] == ["*"]
    assert rows.usage.requests == 0 and "all rows kept" in (rows.note or "")
    assert group.arguments["plan_arguments"] == "no such column" and group.usage.requests == 0
    assert "names no column" in (group.error or "")
    chain = pred.trace.steps[-1].arguments["chain"]
    assert chain == ["f_select_row(*)", "skip f_group_column()"]
    assert pred.trace.tables[-1].rows() == fixture_table(RECORD).rows()
    assert pred.answer == "no"


def test_unknown_columns_keep_every_column_and_unknown_sort_skips() -> None:
    plan = " f_select_column(opponent) -> f_sort_column(attendance, large to small) -> <END>"
    llm, pred = _run([plan, " yes"])
    assert len(llm.requests) == 2
    columns, sort = _operations(pred)
    assert columns.arguments["columns"] == ["*"] and columns.usage.requests == 0
    assert sort.usage.requests == 0 and "names no column" in (sort.error or "")
    assert pred.trace.tables[-1].columns == fixture_table(RECORD).columns


def test_unusable_arguments_ask_when_the_setting_says_so() -> None:
    plan = " f_select_row(row 99) -> f_group_column(no such column) -> <END>"
    llm, pred = _run([plan, "row 2])", "site)", " no"], ask_when_plan_unusable=True)
    assert len(llm.requests) == 4
    rows, group = _operations(pred)
    assert rows.arguments["plan_arguments"] == "row 99" and rows.arguments["rows"] == [2]
    assert group.arguments["plan_arguments"] == "no such column"
    assert group.arguments["column"] == "site" and group.usage.requests == 1


def test_a_used_up_chain_ends_without_asking_again() -> None:
    plan = " f_select_row(row 1, row 2) -> f_select_row(row 3)"
    llm, pred = _run([plan, " yes"])
    assert [r.call_site.rsplit("/", 1)[-1] for r in llm.requests] == ["plan", "final_query"]
    last_plan = [s for s in pred.trace.steps if s.kind == "plan"][-1]
    assert last_plan.name == "<END>" and "used up" in (last_plan.note or "")
    llm, pred = _run([plan, " <END>", " yes"], replan_after_chain=True)
    assert [r.call_site.rsplit("/", 1)[-1] for r in llm.requests] == [
        "plan",
        "plan",
        "final_query",
    ]


def test_sort_uses_the_chain_only_when_it_names_the_order() -> None:
    ordered = " f_sort_column(date, large to small) -> <END>"
    llm, pred = _run([ordered, " yes"])
    (sort,) = _operations(pred)
    assert len(llm.requests) == 2 and sort.arguments["order"] == "large to small"
    bare = " f_sort_column(date) -> <END>"
    llm, pred = _run([bare, 'date), the order is "small to large".', " yes"])
    (sort,) = _operations(pred)
    assert len(llm.requests) == 3 and sort.arguments["order"] == "small to large"


def test_the_setting_turns_it_off() -> None:
    plan = " f_select_row(row 1, row 3) -> <END>"
    llm, pred = _run([plan, "row 2])", " yes"], plan_arguments=False)
    assert len(llm.requests) == 3
    assert _operations(pred)[0].arguments["rows"] == [2]
