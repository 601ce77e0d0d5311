"""The large-table SQL grammars: what a model may write is a bounded, checked condition.

Over generated tables (column names with spaces, quotes and non-ASCII letters; text
columns of few and of many values, number and date columns) and questions, texts drawn
from each grammar (the independent sampler of the grammar tests) must parse, pass the
row-expression guard, name only the table's columns, run in DuckDB, nest a bounded
number of functions and groups, and, with the question's literals, compare only with
literals drawn from the table, its view and the question.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp
from test_cot_grammars import ORACLE  # the independent grammar sampler

from tablereason.llm.constraints import satisfies
from tablereason.methods.constraints.parts import grammar
from tablereason.methods.constraints.sql import (
    MOST_NESTED,
    Column,
    condition_rules,
    expression_rules,
    grammar_type,
    select_rules,
)
from tablereason.methods.constraints.sql_literals import question_literals, years_of
from tablereason.operations.expression_bounds import expression_limits
from tablereason.operations.filter_rows import FilterRowsArgs, filter_rows
from tablereason.operations.row_expressions import parse_expression, resolve_columns
from tablereason.table import Table

NAME = st.text(st.sampled_from(list("abXY z_'\"é1")), min_size=1, max_size=8).filter(
    lambda n: n.strip() == n and any(c.isalpha() for c in n)
)
WORD = st.text(st.sampled_from(list("abcdeé'% ")), min_size=1, max_size=6).map(str.strip)
WORD = WORD.filter(lambda w: any(c.isalpha() for c in w))
KINDS = ("closed", "open", "number", "date")


@st.composite
def tables(draw: Any) -> tuple[Table, list[Column], str]:
    """A table, its columns as the grammar sees them, and a question about it."""
    names = draw(st.lists(NAME, min_size=1, max_size=4, unique_by=str.casefold))
    kinds = [draw(st.sampled_from(KINDS)) for _ in names]
    rows = draw(st.integers(2, 12))
    few = draw(st.lists(WORD, min_size=1, max_size=4, unique=True))
    cells: list[list[str]] = []
    for kind in kinds:
        if kind == "closed":
            cells.append([draw(st.sampled_from(few)) for _ in range(rows)])
        elif kind == "open":
            cells.append([f"{draw(WORD)} {i}" for i in range(rows)])
        elif kind == "number":
            cells.append([str(draw(st.integers(-50, 3000))) for _ in range(rows)])
        else:
            cells.append(
                [f"{draw(st.integers(2010, 2024))}-0{draw(st.integers(1, 9))}-1{i % 10}"
                 for i in range(rows)]
            )  # fmt: skip
    table = Table.from_records(names, [list(r) for r in zip(*cells, strict=True)])
    columns = []
    for name, kind, column in zip(names, kinds, cells, strict=True):
        shown = tuple(dict.fromkeys(column[:3]))
        values = tuple(sorted(set(column))) if kind == "closed" else ()
        columns.append(Column(name, grammar_type(table.types[name]), values, shown=shown))
    words = draw(st.lists(st.one_of(WORD, st.sampled_from(few)), max_size=4))
    numbers = draw(st.lists(st.integers(0, 2030).map(str), max_size=3))
    question = " ".join(["how many", *words, "were above", *numbers, "?"])
    return table, columns, question


LONGEST = 600
"""Drawn texts longer than this are left out: a large-mode reply is cut by its token limit
(48 or 64 tokens) before, and the guard's own limit is longer still."""
assert expression_limits().max_chars > LONGEST


def draws(rules: dict[str, Any], seed: int, count: int = 6) -> list[str]:
    g, rng, out = grammar(rules), random.Random(seed), []
    for _ in range(count * 4):
        text = ORACLE.sample(rules, rng, depth=16)
        if text is not None and len(text) <= LONGEST:
            assert satisfies(g, text), text
            out.append(text)
        if len(out) == count:
            break
    assert out
    return out


def _depth(node: exp.Expr, kind: type, skip: tuple[type, ...] = ()) -> int:
    """Most ``kind`` nodes on one path down from ``node`` (``skip`` kinds not counted)."""
    below = max((_depth(c, kind, skip) for c in node.iter_expressions()), default=0)
    return below + int(isinstance(node, kind) and not isinstance(node, skip))


def _checked(table: Table, text: str) -> exp.Expr:
    """The condition parsed and guarded; it names only the table's columns and runs."""
    parsed = parse_expression(text)  # raises SQLError if the guard refuses it
    assert set(resolve_columns(table, parsed)) <= set(table.columns)
    filter_rows(table, FilterRowsArgs(condition=text))  # DuckDB runs it over every row
    assert _depth(parsed, exp.Paren) <= 2  # a group, and the one a BETWEEN... may add
    assert _depth(parsed, exp.Func, skip=(exp.Cast, exp.Connector, exp.Binary)) <= (
        MOST_NESTED + 1  # the terms' functions, inside a test such as contains(...)
    )
    return parsed


def _offered(columns: list[Column], question: str) -> tuple[set[str], set[str]]:
    """Every text and number literal a bound condition may hold."""
    lits = question_literals(question)
    strings = {*lits.words, *lits.dates}
    numbers = set(lits.numbers) | {str(n) for n in range(0, 32)}
    for c in columns:
        strings |= {*c.values, *c.shown} if c.type == "text" else set()
        strings |= {d[:10] for d in c.shown} if c.type == "date" else set()
        numbers |= set(c.shown) if c.type == "number" else set()
        numbers |= set(years_of(c.shown)) if c.type == "date" else set()
    strings |= {s.lower() for s in strings}
    numbers |= {n.lstrip("-") for n in numbers}  # sqlglot reads -39 as -(39)
    strings |= {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
    strings |= {"January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December"}  # fmt: skip
    return strings, numbers


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(0, 10**6))
def test_bound_conditions_use_only_offered_literals(drawn: Any, seed: int) -> None:
    table, columns, question = drawn
    rules = condition_rules(columns, literals=question_literals(question))
    strings, numbers = _offered(columns, question)
    for text in draws(rules, seed):
        parsed = _checked(table, text)
        for literal in parsed.find_all(exp.Literal):
            if literal.is_string:  # a LIKE pattern: a value with % before or after
                value = literal.this
                bare = {value, value.removeprefix("%"), value.removesuffix("%")}
                bare.add(value.removeprefix("%").removesuffix("%"))
                assert bare & strings, (text, value)
            else:
                assert literal.this.lstrip("-") in numbers, (text, literal.this)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(0, 10**6))
def test_free_conditions_and_expressions_are_bounded_and_checked(drawn: Any, seed: int) -> None:
    table, columns, _ = drawn
    for text in draws(condition_rules(columns), seed):
        _checked(table, text)
    for text in draws(expression_rules(columns), seed, count=3):
        parsed = parse_expression(text)
        assert set(resolve_columns(table, parsed)) <= set(table.columns)


def test_a_few_valued_column_compares_only_with_its_values_in_every_form() -> None:
    cols = [Column("status", "text", ("returned", "shipped")), Column("units", "number")]
    g = grammar(condition_rules(cols, literals=question_literals("how many were returned?")))
    for form in ("status = '{}'", "status IN ('{}')", "contains(status, '{}')",
                 "status LIKE '%{}%'", "lower(status) = '{}'", "status ILIKE '{}'",
                 "starts_with(status, '{}')"):  # fmt: skip
        assert satisfies(g, form.format("returned")), form
        assert not satisfies(g, form.format("1911")), form
        assert not satisfies(g, form.format("year")), form


def test_numbers_dates_and_date_parts_come_from_the_question_the_view_or_their_range() -> None:
    cols = [
        Column("order_date", "date", shown=("2015-01-01", "2024-12-30")),
        Column("units", "number", shown=("1", "50")),
        Column("order_id", "text", shown=("A0000001",)),
    ]
    lits = question_literals("what was the total price of orders of more than 45 units in 2020?")
    g = grammar(condition_rules(cols, literals=lits))
    for ok in ("units > 45", "units <= 50", "year(order_date) = 2020", "quarter(order_date) = 4",
               "year(order_date) = 2017", "order_date >= '2020-01-01'", "month(order_date) = 12",
               "contains(order_id, 'orders')", "order_id = 'A0000001'",
               "dayname(order_date) = 'Monday'"):  # fmt: skip
        assert satisfies(g, ok), ok
    for bad in ("units > 46", "quarter(order_date) = 199999999999", "year(order_date) = 2031",
                "month(order_date) = 13", "order_date >= '2019-05-05'",
                "contains(order_id, 'year')", "ceil(ceil(units)) > 45"):  # fmt: skip
        assert not satisfies(g, bad), bad


@pytest.mark.parametrize("bound", [True, False])
def test_nesting_is_bounded(bound: bool) -> None:
    cols = [Column("price", "number", shown=("3",)), Column("name", "text", shown=("x",))]
    lits = question_literals("price 3") if bound else None
    g = grammar(condition_rules(cols, literals=lits))
    assert not satisfies(g, "ceil(ceil(ceil(price))) > 3")
    assert not satisfies(g, "((price > 3))") and satisfies(g, "(price > 3)")
    assert not satisfies(g, "NOT (NOT (price > 3))")
    free = grammar(condition_rules(cols))
    assert satisfies(free, "round(abs(price)) > 3")
    assert not satisfies(free, "round(abs(ceil(price))) > 3")
    assert not satisfies(free, "lower(trim(upper(name))) = 'x'")
    select = grammar(select_rules(cols))
    assert not satisfies(select, " price FROM t WHERE ceil(ceil(ceil(price))) > 3")
