from __future__ import annotations

import pytest
from cot_helpers import fixture_table, load_fixture

from tablereason.llm import ScriptedLLM
from tablereason.methods import ChainOfTable
from tablereason.methods.chain_of_table.planner import GRAPH, allowed_next, options_text
from tablereason.methods.chain_of_table.state import ChainEntry

END = "<END>"
REFERENCE_GRAPH = {
    "<init>": ["add_column", "select_row", "select_column", "group_column", "sort_column"],
    "add_column": ["select_row", "select_column", "group_column", "sort_column", END],
    "select_row": ["select_column", "group_column", "sort_column", END],
    "select_column": ["group_column", "sort_column", END],
    "group_column": ["sort_column", END],
    "sort_column": [END],
}
RECORDS = load_fixture("tabfact")
RECORD = RECORDS[0]
PARTY = RECORDS[1]  # "total" is numeric and not sorted


def _chain(*entries: tuple[str, bool]) -> list[ChainEntry]:
    return [ChainEntry(op=op, kept=kept, text=f"f_{op}()") for op, kept in entries]


@pytest.mark.parametrize("last", list(REFERENCE_GRAPH))
def test_every_graph_edge(last: str) -> None:
    assert list(GRAPH[last]) == REFERENCE_GRAPH[last]
    chain = [] if last == "<init>" else [(last, True)]
    assert allowed_next(_chain(*chain)) == REFERENCE_GRAPH[last]


def test_skipped_operations_leave_every_later_choice_and_do_not_advance() -> None:
    chain = _chain(("add_column", False), ("select_row", True), ("sort_column", False))
    assert allowed_next(chain) == ["select_column", "group_column", END]


def test_options_text() -> None:
    assert options_text(["select_row", END]) == "f_select_row() or <END>"


def _plan_prompts(llm: ScriptedLLM) -> list[str]:
    return [r.as_text() for r in llm.requests if r.call_site.endswith("/plan")]


def _run(replies: list[object], profile: str = "paper", record=RECORD, **kw: object):
    llm = ScriptedLLM(replies=replies)
    method = ChainOfTable(llm, task="tabfact", profile=profile, **kw)
    return llm, method.run(fixture_table(record), record["question"])


SORT_OK = 'The datatype is Numerical. f_sort({col}), the order is "large to small".'


def test_single_option_costs_no_call_after_sort() -> None:
    replies = [" f_sort_column(x) -> <END>", SORT_OK.format(col="total"), "YES"]
    llm, pred = _run(replies, record=PARTY)
    assert pred.trace.steps[2].note is None  # the sort was applied
    kinds = [(s.kind, s.name, s.note) for s in pred.trace.steps]
    assert ("plan", END, "single option; no model call") in kinds
    assert len(llm.requests) == 3 and pred.answer == "yes"


def test_disallowed_names_are_passed_over_and_end_is_not_allowed_at_init() -> None:
    # At <init>, END is not an option: "<END> -> f_group_column" picks group_column.
    llm, pred = _run([" <END> -> f_group_column(a)", "no group here", " <END>", "NO"])
    plans = [s for s in pred.trace.steps if s.kind == "plan"]
    assert plans[0].name == "group_column"
    # group_column was skipped (unparsable), so it leaves the options; <init> stays.
    assert _plan_prompts(llm)[1].endswith(
        "must be one of f_add_column() or f_select_row() or f_select_column() or "
        "f_sort_column().\nFunction Chain:"
    )


def test_paper_planning_prompt_never_ends_in_a_space() -> None:
    # Continued as raw text, a trailing space is a lone token after which a small model
    # writes digits; the chain so far ends in "->" and the empty chain at the colon.
    llm, _pred = _run([" f_select_row(x) -> <END>", ["f_row([row 1])"] * 8, " <END>", "NO"])
    first, second = _plan_prompts(llm)
    assert first.endswith("\nFunction Chain:")
    assert second.endswith("\nFunction Chain: f_select_row(row 1) ->")


def test_no_allowed_name_ends_the_chain_with_a_recorded_error() -> None:
    _llm, pred = _run(["nothing useful", "YES"])
    plan = pred.trace.steps[1]
    assert plan.name == END and "no allowed operation" in (plan.error or "")
    assert pred.answer == "yes"


def test_paper_planning_prompt_holds_only_the_allowed_demos() -> None:
    llm, _ = _run([" f_select_column(a)", "f_col([*])", " <END>", "NO"], select_samples=1)
    first, second = _plan_prompts(llm)
    assert "use f_add_column()" in first and "use f_add_column()" not in second
    assert second.rstrip().endswith("Function Chain: f_select_column(*) ->")
    assert (
        "The next operation must be one of f_group_column() or f_sort_column() or <END>." in second
    )


def test_efficient_profile_follows_the_generated_chain_without_asking_again() -> None:
    replies = [" f_select_row(row 1) -> f_select_column(a) -> <END>", "row 1])", "*])", " yes"]
    llm, pred = _run(replies, profile="efficient", plan_arguments=False)
    assert len(_plan_prompts(llm)) == 1
    notes = [s.note for s in pred.trace.steps if s.kind == "plan"]
    assert notes[1:] == ["followed the previously generated chain; no model call"] * 2


def test_efficient_planner_asks_again_when_the_chain_runs_out() -> None:
    replies = [" f_select_column(a)", "nope])", " f_group_column(x) -> <END>", "nope)", " no"]
    llm, pred = _run(
        replies, profile="efficient", repairs=0, plan_arguments=False, replan_after_chain=True
    )
    assert len(_plan_prompts(llm)) == 2
    assert [s.name for s in pred.trace.steps if s.kind == "plan"] == [
        "select_column",
        "group_column",
        END,
    ]
