"""Large-table decisions follow the question: matches, the literals they allow, the chain.

The view finds the values of text columns a question names (``question matches``); the
condition grammar then compares text only with those, numbers and dates only with the
question's; a question that names a value the table holds gets a chain with a
select_row. Checked on drawn tables (hypothesis) and on a run with a scripted model
that enforces grammars.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp
from test_cot_grammars import ORACLE  # the independent grammar sampler
from test_cot_sql_grammar import _checked, draws
from test_cot_sql_grammar import tables as sql_tables

from tablereason.llm import Capabilities, Grammar, Request, ScriptedLLM, satisfies
from tablereason.llm.constraints.gbnf import Alt, parse
from tablereason.methods import ChainOfTable
from tablereason.methods.chain_of_table.grammars import chain_grammar, large_literals
from tablereason.methods.chain_of_table.large_view import question_matches
from tablereason.methods.chain_of_table.steps import END, GRAPH
from tablereason.methods.constraints.parts import grammar
from tablereason.methods.constraints.sql import Column, condition_rules
from tablereason.methods.constraints.sql_literals import STOPWORDS
from tablereason.operations import table_profile
from tablereason.table import Table

STATUS = ["shipped", "pending", "returned", "cancelled"]
REGIONS = ["north", "south", "west", "islands"]


def orders(n: int, seed: int = 0) -> Table:
    rng = random.Random(seed)
    rows = [
        [f"B{i:06d}", f"{2015 + i % 10}-0{1 + i % 9}-1{i % 10}", rng.choice(REGIONS),
         str(rng.randint(1, 50)), f"{rng.uniform(1, 500):.2f}",
         rng.choices(STATUS, weights=[80, 10, 6, 4])[0]]
        for i in range(n)
    ]  # fmt: skip
    return Table.from_records(
        ["order_id", "order_date", "region", "units", "price", "status"], rows
    )


class Enforcing(ScriptedLLM):
    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(constraints=frozenset({"choice", "regex", "json", "grammar"}))


def run(table: Table, question: str, plan: str) -> tuple[Any, list[Request]]:
    seen: list[Request] = []

    def reply(request: Request) -> str:
        seen.append(request)
        return plan if request.call_site.endswith("plan") else " 1"

    llm = Enforcing(fn=reply)
    prediction = ChainOfTable(llm, task="wikitq", large_table_rows=1000).run(table, question)
    return prediction, seen


@pytest.fixture(scope="module")
def big() -> Table:
    return orders(3000)


def _plan(seen: list[Request]) -> Request:
    return next(r for r in seen if r.call_site.endswith("plan"))


# ----------------------------------------------------------------------------- matches

WORD = st.text(st.sampled_from(list("abcdeor")), min_size=3, max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(WORD, min_size=2, max_size=4, unique=True),
    st.lists(WORD, min_size=1, max_size=4),
    st.lists(st.sampled_from(sorted(STOPWORDS)), max_size=2),
    st.integers(0, 10**6),
)
def test_every_match_is_held_by_its_column_and_every_named_value_is_found(
    few: list[str], words: list[str], idle: list[str], seed: int
) -> None:
    rng = random.Random(seed)
    rows = [[rng.choice(few), f"{rng.choice(few)}x{i}", str(i)] for i in range(40)]
    table = Table.from_records(["kind", "code", "n"], rows)
    question = " ".join(["how many", *words, *idle, "?"])
    summary = table_profile.profile(table)
    found = question_matches(table, question, summary)
    cells = {c: [r[i].casefold() for r in rows] for i, c in enumerate(table.columns)}
    for match in found:
        held = cells[match.column]
        if match.whole:
            assert match.value.casefold() in held, match
        else:
            assert any(match.value in cell for cell in held), match
        assert match.value.casefold() not in STOPWORDS
        assert match.column != "n"  # numbers are matched by range, never as text
    kinds = {r[0] for r in rows}
    for word in set(words) & kinds:  # a few-valued column's value the question names
        assert any(m.column == "kind" and m.value == word for m in found), (word, found)


def test_words_that_name_no_value_are_not_matched_even_by_spelling() -> None:
    table = Table.from_records(["region"], [["west"], ["east"], ["west"]])
    summary = table_profile.profile(table)
    assert question_matches(table, "what is the lowest price?", summary) == ()
    assert [m.value for m in question_matches(table, "orders from the west?", summary)] == ["west"]


def test_numbers_inside_codes_are_no_match() -> None:
    table = Table.from_records(["code"], [[f"A{i:07d}"] for i in range(3000)])
    summary = table_profile.profile(table)
    assert question_matches(table, "how many in 2019 of more than 45?", summary) == ()


# ----------------------------------------------------------------------------- literals


def test_the_condition_compares_only_with_the_values_the_question_names(big: Table) -> None:
    prediction, seen = run(big, "how many orders were returned?",
                           " f_select_row(where status = 'returned') -> <END>")  # fmt: skip
    plan = _plan(seen)
    assert "question matches : status = 'returned' (" in plan.as_text()
    grammar = plan.constraint
    assert isinstance(grammar, Grammar)
    ok = " f_select_row(where status = 'returned') -> <END>"
    assert satisfies(grammar, ok)
    for bad in ("contains(status, 'shipped')", "status = 'pending'", "region = 'north'",
                "contains(order_id, 'orders')", "order_id = 'B000001'"):  # fmt: skip
        assert not satisfies(grammar, f" f_select_row(where {bad}) -> <END>"), bad
    rows = next(
        s for s in prediction.trace.steps if s.kind == "operation" and s.name == "select_row"
    )
    assert rows.arguments["condition"] == "status = 'returned'" and rows.arguments["rows_after"]


def test_numbers_compare_with_the_questions_numbers(big: Table) -> None:
    question = "what was the total price of orders of more than 45 units in 2020?"
    _, seen = run(big, question, " f_select_row(where units > 45) -> <END>")
    grammar = _plan(seen).constraint
    for ok in ("units > 45", "units > 45 AND year(order_date) = 2020", "price > 45"):
        assert satisfies(grammar, f" f_select_row(where {ok}) -> <END>"), ok
    for bad in ("units <= 50", "year(order_date) = 2017", "order_id = 'B000001'"):
        assert not satisfies(grammar, f" f_select_row(where {bad}) -> <END>"), bad


def test_without_a_named_value_few_valued_columns_keep_their_values(big: Table) -> None:
    _, seen = run(big, "which region has the most orders?", " f_group_column(region) -> <END>")
    grammar = _plan(seen).constraint
    view = _plan(seen).as_text().rsplit("/*", 1)[1]  # the table's view, after the demos'
    assert "question matches" not in view
    assert satisfies(grammar, " f_group_column(region) -> <END>")  # no select_row needed
    assert satisfies(grammar, " f_select_row(where status = 'shipped') -> <END>")
    assert not satisfies(grammar, " f_select_row(where order_id = 'orders') -> <END>")


# ----------------------------------------------------------------------------- the chain


@pytest.mark.parametrize(("question", "condition"), [
    ("how many orders came from the islands region?", "region = 'islands'"),
    ("how many orders of more than 45 units?", "units > 45"),
])  # fmt: skip
def test_a_question_naming_a_value_gets_a_chain_with_select_row(
    big: Table, question: str, condition: str
) -> None:
    _, seen = run(big, question, f" f_select_row(where {condition}) -> <END>")
    grammar = _plan(seen).constraint
    for bad in (" f_group_column(region) -> <END>", " <END>",
                " f_add_column(name = ceil(ceil(price))) -> <END>"):  # fmt: skip
        assert not satisfies(grammar, bad), bad
    assert satisfies(grammar, f" f_add_column(x = units * 2) -> f_select_row(where {condition})"
                              " -> f_group_column(region) -> <END>")  # fmt: skip


OPS = [op for op in GRAPH[next(iter(GRAPH))]]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.sampled_from([*OPS, END]), min_size=1, unique=True),
    st.sets(st.sampled_from(OPS)),
    st.sampled_from(OPS),
    st.integers(0, 10**6),
)
def test_every_chain_holds_the_required_operation_when_it_can(
    allowed: list[str], skipped: set[str], must: str, seed: int
) -> None:
    allowed = [op for op in allowed if op not in skipped] or [END]
    grammar = chain_grammar(allowed, skipped, ["a", "b"], 3, must=must)
    reachable = must not in skipped and any(
        op == must or _leads(op, must, skipped) for op in allowed if op != END
    )
    rng, rules = random.Random(seed), parse(grammar.gbnf)
    for _ in range(6):
        text = ORACLE.sample(rules, rng, depth=12)
        if text is None:
            continue
        assert satisfies(grammar, text)
        if reachable:
            assert f"f_{must}(" in text, (text, must, allowed, skipped)


def _leads(op: str, target: str, skipped: set[str]) -> bool:
    nexts = [n for n in GRAPH.get(op, ()) if n != END and n not in skipped]
    return target in nexts or any(_leads(n, target, skipped) for n in nexts)


# ----------------------------------------------------------------------------- named only


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sql_tables(), st.booleans(), st.integers(0, 10**6))
def test_when_only_named_every_literal_is_one_the_question_names(
    drawn: Any, negated: bool, seed: int
) -> None:
    table, columns, question = drawn
    question = ("which were not " if negated else "which ") + question
    lits = large_literals(question, named=True)
    # the caller gives each text column only the values the question names
    named = [Column(c.name, c.type, c.values[:1], nullable=False) for c in columns]
    strings = {*lits.dates, *(v for c in named for v in c.values)}
    strings |= {s.lower() for s in strings}
    strings |= {w.title() for w in lits.said}  # day and month names the question says
    # with nothing to compare, IS NULL over every column keeps the grammar valid
    rules = condition_rules(named, literals=lits)
    comparable = isinstance(rules["pred-flat"], Alt)  # more than the IS NULL fallback
    for text in draws(rules, seed):
        parsed = _checked(table, text)
        negations = [n for n in parsed.find_all(exp.NEQ, exp.Not) if not isinstance(n.this, exp.Is)]
        assert negated or not negations, text
        assert not comparable or not any(parsed.find_all(exp.Is)), text  # no empty cells
        for literal in parsed.find_all(exp.Literal):
            if literal.is_string:
                value = literal.this  # a LIKE pattern: a value with % before or after
                bare = {value, value.removeprefix("%"), value.removesuffix("%")}
                bare.add(value.removeprefix("%").removesuffix("%"))
                assert bare & strings, (text, value)
            else:
                assert literal.this.lstrip("-") in lits.numbers, (text, literal.this)
        for node in parsed.find_all(exp.EQ, exp.GT, exp.LT, exp.GTE, exp.LTE):
            both = [isinstance(side, exp.Column) for side in (node.this, node.expression)]
            assert not all(both), text  # no column compared with another


def test_date_parts_and_negations_follow_the_question(big: Table) -> None:
    cols = [Column("order_date", "date", shown=("2015-01-01", "2024-12-30"), nullable=False),
            Column("status", "text", ("returned",), nullable=False),
            Column("note", "text", ("x",), nullable=True)]  # fmt: skip
    plain = grammar(condition_rules(cols, literals=large_literals("returned in 2019 month 3?",
                                                                  named=True)))  # fmt: skip
    for ok in ("month(order_date) = 3", "year(order_date) = 2019", "status = 'returned'",
               "note IS NULL"):  # fmt: skip
        assert satisfies(plain, ok), ok
    for bad in ("month(order_date) = 4", "quarter(order_date) = 2", "status <> 'returned'",
                "NOT (status = 'returned')", "status NOT LIKE 'returned'", "status IS NULL",
                "dayname(order_date) = 'Monday'"):  # fmt: skip
        assert not satisfies(plain, bad), bad
    negated = grammar(condition_rules(cols, literals=large_literals(
        "how many were not returned on a monday?", named=True)))  # fmt: skip
    for ok in ("status <> 'returned'", "NOT (status = 'returned')",
               "dayname(order_date) = 'Monday'"):  # fmt: skip
        assert satisfies(negated, ok), ok
    _, seen = run(big, "how many orders were not returned?",
                  " f_select_row(where status <> 'returned') -> <END>")  # fmt: skip
    plan = _plan(seen).constraint
    assert satisfies(plan, " f_select_row(where status <> 'returned') -> <END>")
    assert not satisfies(plan, " f_select_row(where order_id IS NULL) -> <END>")
