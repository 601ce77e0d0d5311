"""Chain-of-Table with constraints: what is sent, what a broken one costs, the paper profile.

A scripted model that declares it enforces constraints (``Enforcing``) gets every
constraint the door would send to such a model, and checks its own replies against
them, as a server that ignores constraints would be caught: a reply that breaks one
is re-asked and counted.
"""

from __future__ import annotations

import random

import pytest
from cot_helpers import fixture_table, load_fixture

from tablereason.llm import Capabilities, Grammar, Request, ScriptedLLM, satisfies
from tablereason.methods import ChainOfTable
from tablereason.table import Table

IOWA = load_fixture("tabfact")[0]  # date | site | sport | winning team | series


class Enforcing(ScriptedLLM):
    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            constraints=frozenset({"choice", "regex", "json", "grammar"}), after=True
        )


def scripted(replies: dict[str, list[str]], *, enforcing: bool = True) -> ScriptedLLM:
    """Replies by call site, in order (the last repeats)."""
    calls: dict[str, int] = {}

    def reply(request: Request) -> str | list[str]:
        site = request.call_site.rsplit("/", 1)[-1]
        index = calls[site] = calls.get(site, -1) + 1
        texts = replies[site]
        text = texts[min(index, len(texts) - 1)]
        return [text] * request.n if request.n > 1 else text

    return (Enforcing if enforcing else ScriptedLLM)(fn=reply)


def test_an_efficient_constrained_run_sends_a_grammar_with_every_decision() -> None:
    chain = " f_select_row(row 1, row 3) -> f_select_column(site, sport) -> <END>"
    llm = scripted({"plan": [chain], "final_query": [" YES"]})
    pred = ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
    assert pred.answer == "yes" and pred.error is None
    assert len(llm.requests) == 2  # the chain's arguments are used: plan and answer only
    plan, final = llm.requests
    assert isinstance(plan.constraint, Grammar) and plan.max_tokens == 128
    assert satisfies(final.constraint, " NO") and not satisfies(final.constraint, " maybe")
    steps = pred.trace.steps
    assert steps[1].constraint == "the given GBNF grammar" and steps[1].violations == 0
    assert steps[-1].table.columns == ["site", "sport"] and steps[-1].table.num_rows == 2


def test_a_reply_that_breaks_its_grammar_is_re_asked_and_counted() -> None:
    llm = scripted({
        "plan": [" f_select_row(row 99) -> <END>", " f_select_row(row 2) -> <END>"],
        "final_query": [" perhaps", " NO"],
    })  # fmt: skip
    pred = ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
    plan = pred.trace.steps[1]
    assert (plan.violations, plan.reasks) == (1, 1) and "breaks its constraint" in plan.prompts[1]
    final = pred.trace.steps[-1]
    assert (final.violations, final.reasks) == (1, 1) and pred.answer == "no"
    assert pred.trace.steps[2].arguments["rows"] == [2]


def test_the_paper_profile_sends_no_constraint_unless_asked() -> None:
    replies = {"plan": [" f_select_row(row 1) -> <END>", " <END>"],
               "select_row": ["f_row([row 1])"], "final_query": ["YES"]}  # fmt: skip
    llm = scripted(replies)
    ChainOfTable(llm, task="tabfact", profile="paper").run(fixture_table(IOWA), IOWA["question"])
    assert llm.requests and all(r.constraint is None for r in llm.requests)
    asked = scripted(replies)
    pred = ChainOfTable(asked, task="tabfact", profile="paper", constrain=True).run(
        fixture_table(IOWA), IOWA["question"]
    )
    by_site = {r.call_site.rsplit("/", 1)[-1]: r for r in asked.requests}
    assert by_site["select_row"].constraint.after == "f_row(["  # the slot after the reasoning
    assert by_site["select_row"].n == 8 and by_site["plan"].constraint.after is None
    assert pred.answer == "yes" and sum(s.violations for s in pred.trace.steps) == 0


def test_a_chain_that_names_add_column_without_a_name_skips_it_without_a_call() -> None:
    llm = scripted({"plan": [" f_add_column() -> f_select_row(row 1) -> <END>"],
                    "final_query": [" yes"]}, enforcing=False)  # fmt: skip
    pred = ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
    assert [r.call_site for r in llm.requests] == [
        "chain_of_table/plan",
        "chain_of_table/final_query",
    ]
    add = next(s for s in pred.trace.steps if s.kind == "operation" and s.name == "add_column")
    assert add.error == "the generated chain names no column to add" and not add.raw
    assert pred.trace.steps[-1].arguments["chain"] == ["skip f_add_column()", "f_select_row(row 1)"]


def test_a_chain_named_step_without_an_argument_is_asked_once() -> None:
    llm = scripted({"plan": [" f_select_row() -> <END>"], "select_row": ["nothing", "row 1])"],
                    "final_query": [" yes"]}, enforcing=False)  # fmt: skip
    pred = ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
    step = next(s for s in pred.trace.steps if s.kind == "operation" and s.name == "select_row")
    assert len(step.raw) == 1 and step.reasks == 0 and step.arguments["rows"] == ["*"]


def test_a_sort_named_with_its_column_but_no_order_is_asked_once() -> None:
    llm = scripted({"plan": [" f_sort_column(site) -> <END>"], "sort_column": ["site)", "x"],
                    "final_query": [" yes"]}, enforcing=False)  # fmt: skip
    pred = ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
    step = next(s for s in pred.trace.steps if s.kind == "operation" and s.name == "sort_column")
    assert len(step.raw) == 1 and step.note and step.note.startswith("skipped")


def test_the_chains_column_selection_keeps_the_column_its_add_column_made() -> None:
    llm = scripted({
        "plan": [" f_add_column(month = regexp_extract(date, '[A-Za-z]+'))"
                 " -> f_select_column(date) -> <END>"],
        "final_query": [" YES"],
    })  # fmt: skip
    pred = ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
    assert [r.call_site.rsplit("/", 1)[-1] for r in llm.requests] == ["plan", "final_query"]
    assert pred.trace.steps[-1].table.columns == ["date", "month"]
    months = {row[1] for row in pred.trace.steps[-1].table.rows()}
    assert months and all(m.isalpha() for m in months)


def test_a_chain_that_only_names_its_new_column_asks_for_the_values_once() -> None:
    """Without a grammar a chain may give add_column a name only: one call, under it."""
    values = "\n".join(f"row {i} : {r[0].split()[0]}" for i, r in enumerate(IOWA["rows"], 1))
    llm = scripted({
        "plan": [" f_add_column(month) -> f_select_column(date) -> <END>"],
        "add_column": [values],
        "final_query": [" YES"],
    }, enforcing=False)  # fmt: skip
    pred = ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
    assert llm.requests[1].prompt.endswith("New column: month\n")  # the chain named it
    assert len(llm.requests) == 3
    assert pred.trace.steps[-1].table.columns == ["date", "month"]


@pytest.mark.parametrize("enforcing", [True, False])
@pytest.mark.parametrize(
    ("call", "kept"),
    [
        ("f_add_column(month = regexp_extract(date, '[A-Za-z]+'))", True),
        ("f_add_column(site = lower(sport))", False),  # the table has that column
        ("f_add_column(sport2 = lower(sport))", True),
        ("f_add_column(same = length(series) * 0)", False),  # every value identical
    ],
)
def test_an_efficient_add_column_from_the_chain_costs_no_call(
    call: str, kept: bool, enforcing: bool
) -> None:
    llm = scripted({"plan": [f" {call} -> <END>"], "final_query": [" YES"]}, enforcing=enforcing)
    pred = ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
    assert [r.call_site.rsplit("/", 1)[-1] for r in llm.requests] == ["plan", "final_query"]
    step = next(s for s in pred.trace.steps if s.kind == "operation" and s.name == "add_column")
    assert step.arguments["from_chain"] is True and not step.raw
    assert bool(step.note and step.note.startswith("skipped")) is not kept
    assert (len(pred.trace.steps[-1].table.columns) == 6) is kept


def test_an_efficient_add_column_whose_expression_does_not_run_skips_without_a_call() -> None:
    """Without a grammar the expression may name what the table lacks or what may not run."""
    for call in ("f_add_column(x = nosuch + 1)", "f_add_column(x = read_csv('/etc/passwd'))",
                 "f_add_column(x = )", "f_add_column(= lower(sport))"):  # fmt: skip
        llm = scripted({"plan": [f" {call} -> <END>"], "final_query": [" YES"]}, enforcing=False)
        pred = ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
        assert len(llm.requests) == 2, call
        assert pred.trace.steps[-1].table.columns == fixture_table(IOWA).columns, call
        assert pred.error is None


def test_the_efficient_plan_grammar_asks_add_column_for_an_expression() -> None:
    llm = scripted({"plan": [" <END>"], "final_query": [" YES"]})
    ChainOfTable(llm, task="tabfact").run(fixture_table(IOWA), IOWA["question"])
    grammar = llm.requests[0].constraint
    assert satisfies(grammar, " f_add_column(month = regexp_extract(date, '[A-Za-z]+')) -> <END>")
    two = " f_add_column(n = length(sport) + 1) -> f_select_row(row 1) -> <END>"
    assert satisfies(grammar, two)
    assert not satisfies(grammar, " f_add_column(month) -> <END>")
    assert not satisfies(grammar, " f_add_column(month = lower(nosuch)) -> <END>")
    assert not satisfies(grammar, " f_add_column(month = read_csv('x')) -> <END>")


def weather(n: int) -> Table:
    rng = random.Random(0)
    kinds = ["sun", "rain", "snow"]
    rows = [[f"2012-01-{1 + i % 28:02d}", f"{rng.uniform(-5, 35):.1f}", rng.choice(kinds)]
            for i in range(n)]  # fmt: skip
    return Table.from_records(["date", "temp max", "weather"], rows)


def test_large_table_conditions_compare_text_with_the_columns_values() -> None:
    table = weather(1500)
    llm = scripted({
        "plan": [" f_select_row(where weather = 'hail') -> <END>",
                 " f_select_row(where weather = 'snow' AND \"temp max\" > 10) -> <END>"],
        "final_query": [" 3"],
    })  # fmt: skip
    pred = ChainOfTable(llm, task="wikitq").run(table, "how many snowy days were above 10?")
    plan = pred.trace.steps[1]
    assert plan.violations == 1  # 'hail' is no value of the column
    rows = next(s for s in pred.trace.steps if s.kind == "operation" and s.name == "select_row")
    assert rows.arguments["condition"] == "weather = 'snow' AND \"temp max\" > 10"
    assert 0 < rows.arguments["rows_after"] < 1500
    grammar = llm.requests[0].constraint
    assert not satisfies(grammar, " f_select_row(where \"temp max\" = 'snow') -> <END>")


@pytest.mark.parametrize("profile", ["paper", "efficient"])
def test_without_enforcement_nothing_changes_in_the_requests(profile: str) -> None:
    replies = {"plan": [" f_select_row(row 1) -> <END>"], "select_row": ["f_row([row 1])"],
               "final_query": ["yes"]}  # fmt: skip
    plain = scripted(replies, enforcing=False)
    ChainOfTable(plain, task="tabfact", profile=profile, constrain=True).run(
        fixture_table(IOWA), IOWA["question"]
    )
    assert all(r.constraint is None for r in plain.requests)


def test_a_column_whose_name_holds_a_line_break_is_chosen_as_the_prompt_shows_it() -> None:
    table = Table.from_records(["Date", "Water level\ncm"], [["1 May", "90"], ["2 May", "120"]])
    chain = " f_select_column(Water level cm) -> f_sort_column(Water level cm, large to small)"
    llm = scripted({"plan": [chain + " -> <END>"], "final_query": [" 120"]})
    pred = ChainOfTable(llm, task="wikitq").run(table, "highest water level?")
    assert "col : Date | Water level cm" in llm.requests[0].prompt
    assert sum(s.violations + s.unparsed for s in pred.trace.steps) == 0
    assert len(llm.requests) == 2  # the chain's arguments were used as they were
    assert pred.trace.steps[-1].table.columns == ["Water level\ncm"]
    assert pred.trace.steps[-1].table.rows()[0] == ["120"]


@pytest.mark.parametrize("constrain", [True, False])
def test_no_efficient_planning_prompt_ends_in_a_space(constrain: bool) -> None:
    """After a lone space token the small model writes digits; under the plan's grammar,
    which forbids them, it took the first operation listed (add_column) instead."""
    llm = scripted({
        # the first chain names no argument for select_column: the planner asks again
        "plan": [" f_select_row(row 1) -> f_select_column() -> <END>",
                 " f_select_column(site) -> <END>"],
        "select_column": ["site])"],
        "final_query": [" YES"],
    }, enforcing=constrain)  # fmt: skip
    ChainOfTable(llm, task="tabfact", ask_when_plan_unusable=True).run(
        fixture_table(IOWA), IOWA["question"]
    )
    plans = [r for r in llm.requests if r.call_site.endswith("plan")]
    assert plans and plans[0].as_text().endswith("\nFunction Chain:")
    for request in plans:
        assert request.as_text() == request.as_text().rstrip(), request.as_text()[-60:]
    grammar = plans[0].constraint
    if constrain:  # the chain may still open with the space the prompt no longer ends in
        assert grammar is not None and satisfies(grammar, " f_select_row(row 1) -> <END>")
