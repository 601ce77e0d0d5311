"""Chain-of-Table's grammars: what they let a model write is always a decision the table allows.

Texts are drawn from each grammar (the independent sampler of the grammar tests) over
generated tables whose column names hold quotes, commas, brackets, dashes and non-ASCII
letters; each drawn text must satisfy the grammar, parse with the step's own parser, and
name only rows and columns the table has. Texts outside the table (an unknown column, a
row past the end, an operation the graph does not allow) are refused.
"""

from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path
from types import ModuleType

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason.llm.constraints import Grammar, satisfies
from tablereason.llm.constraints.gbnf import parse
from tablereason.methods.chain_of_table import grammars
from tablereason.methods.chain_of_table.parse import (
    END,
    column_list,
    leading_column,
    list_body,
    parse_add_column_rows,
    parse_chain,
    parse_chain_arguments,
    parse_group,
    parse_rows,
    parse_short_answer,
    parse_sort,
    parse_verdict,
    shown,
)
from tablereason.methods.chain_of_table.steps import GRAPH, INIT, OPERATION_NAMES, allowed_after


def _oracle() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "llm" / "grammar_oracle.py"
    spec = importlib.util.spec_from_file_location("cot_grammar_oracle", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ORACLE = _oracle()
NAME = (
    st.text(st.sampled_from(list("abcXYZ 09,_-'\"()[]/|:éü\n")), min_size=1, max_size=12)
    .map(str.strip)
    # a header of punctuation alone is no name; "])" ends a selection reply (its stop)
    .filter(lambda n: any(c.isalnum() for c in n) and "])" not in shown(n))
)
COLUMNS = st.lists(NAME, min_size=1, max_size=6, unique_by=lambda n: shown(n).casefold())
"""Headers as tables have them: line breaks inside names too (WikiTQ has many)."""


def draws(grammar: Grammar, seed: int, count: int = 12) -> list[str]:
    """Texts the grammar generates (each checked to satisfy it)."""
    rules, rng, out = parse(grammar.gbnf), random.Random(seed), []
    for _ in range(count * 3):
        text = ORACLE.sample(rules, rng, depth=14)
        if text is not None:
            assert satisfies(grammar, text), text
            out.append(text)
        if len(out) == count:
            break
    assert out
    return out


def test_every_rule_name_is_one_llama_cpp_reads() -> None:
    # llama.cpp reads rule names of letters, digits and dashes only (an underscore
    # fails its parser, and the embedded model then crashes)
    g = grammars.chain_grammar(list(OPERATION_NAMES), set(), ["a_b", "c"], 3)
    names = re.findall(r"^([^ ]+) ::=", g.gbnf, flags=re.M)
    assert names and all(re.fullmatch(r"[A-Za-z0-9-]+", n) for n in names), names


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    COLUMNS,
    st.integers(1, 40),
    st.sampled_from([INIT, *OPERATION_NAMES]),
    st.sets(st.sampled_from(OPERATION_NAMES), max_size=2),
    st.integers(0, 10**6),
)
def test_a_chain_follows_the_graph_and_its_arguments_name_the_table(
    columns, rows, last, skipped, seed
) -> None:
    allowed = allowed_after(last, skipped)
    ops = [o for o in allowed if o != END]
    if not ops:
        return
    g = grammars.chain_grammar(allowed, set(skipped), columns, rows)
    for text in draws(g, seed):
        names = parse_chain(text)
        assert names[0] in allowed and names[-1] == END
        for before, after in zip([last, *names[:-1]], names, strict=False):
            assert after in GRAPH[before] and after not in skipped
        for op, argument in parse_chain_arguments(text).items():
            if op == "select_row":
                assert argument == "*" or parse_rows(argument, rows)
            elif op in ("group_column", "sort_column"):
                assert leading_column(argument, columns) is not None, argument
            elif op == "select_column":
                assert column_list(argument, columns), argument
            if op == "sort_column":
                assert parse_sort(argument, columns).column in columns


def test_a_chain_outside_the_table_or_the_graph_is_refused() -> None:
    g = grammars.chain_grammar(
        ["select_column", "group_column", END], {"sort_column"}, ["Year", "Team"], 4
    )
    assert satisfies(g, " f_select_column(Year, Team) -> f_group_column(Team) -> <END>")
    assert satisfies(g, "<END>")
    for text in (
        " f_select_column(Venue) -> <END>",  # no such column
        " f_select_column(year) -> <END>",  # names are exact
        " f_group_column(Team) -> f_select_column(Year) -> <END>",  # against the graph
        " f_select_column(Year) -> f_sort_column(Team, small to large) -> <END>",  # skipped
        " f_select_row(row 1) -> <END>",  # not allowed now
        " f_select_column(Year)",  # a chain ends with <END>
    ):
        assert not satisfies(g, text), text
    rows = grammars.chain_grammar(["select_row", END], set(), ["a"], 4)
    assert satisfies(rows, " f_select_row(row 4) -> <END>")
    assert not satisfies(rows, " f_select_row(row 5) -> <END>")
    assert not satisfies(rows, " f_select_row(row 0) -> <END>")


def test_after_add_column_a_chain_names_only_what_the_table_has() -> None:
    g = grammars.chain_grammar(list(OPERATION_NAMES), set(), ["score"], 3)
    assert satisfies(g, " f_add_column(total) -> f_sort_column(score, large to small) -> <END>")
    assert not satisfies(g, " f_add_column(total) -> f_sort_column(total, large to small) -> <END>")
    assert not satisfies(g, " f_add_column(total) -> f_select_column(opponent) -> <END>")


class _Table:
    def __init__(self, columns: list[str], rows: int) -> None:
        self.columns, self.num_rows = columns, rows


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(COLUMNS, st.integers(1, 60), st.integers(0, 10**6))
def test_each_step_reply_parses_and_names_the_table(columns, rows, seed) -> None:
    table = _Table(columns, rows)
    for text in draws(grammars.rows(None, table=table), seed):  # type: ignore[arg-type]
        picked = parse_rows(text, rows)
        assert picked is None or all(0 <= i < rows for i in picked)
        assert picked is not None or list_body(text).strip() == "*"
    for text in draws(grammars.columns(None, table=table), seed):  # type: ignore[arg-type]
        body = text.removesuffix("])")
        assert _known_names(body, [shown(c) for c in columns]) and column_list(text, columns)
        assert "\n" not in text  # a name is written as shown, on the reply's one line
    for text in draws(grammars.group(None, table=table), seed):  # type: ignore[arg-type]
        assert parse_group(text, columns) in columns
    for text in draws(grammars.sort(None, table=table), seed):  # type: ignore[arg-type]
        reply = parse_sort(text, columns)
        assert reply.column in columns


def _known_names(body: str, columns: list[str]) -> bool:
    """Whether ``body`` is known column names joined by ``", "`` (and nothing else)."""
    ends = [False] * (len(body) + 1)
    ends[0] = True
    for i in range(len(body) + 1):
        if not ends[i]:
            continue
        at = i + 2 if i and body.startswith(", ", i) else i
        for column in columns:
            if (i == 0 or body.startswith(", ", i)) and body.startswith(column, at):
                ends[at + len(column)] = True
    return ends[len(body)]


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, 200), min_size=1, max_size=8, unique=True),
    st.booleans(),
    st.integers(0, 999),
)
def test_add_column_rows_cover_exactly_the_rows_asked(numbers, named, seed) -> None:
    numbers = sorted(numbers)
    g = grammars.add_column_rows(None, numbers=numbers, named=named)  # type: ignore[arg-type]
    for text in draws(g, seed, count=4):
        reply = parse_add_column_rows(text, numbers, name="given" if named else None)
        assert len(reply.values) == len(numbers) and all(v.strip() for v in reply.values)


def test_answers_are_yes_or_no_and_answer_lists() -> None:
    verdict = grammars.verdict(None, task="tabfact")  # type: ignore[arg-type]
    assert {parse_verdict(t) for t in draws(verdict, 1)} <= {"yes", "no"}
    assert not satisfies(verdict, " maybe")
    answers = grammars.answers(None, task="wikitq")  # type: ignore[arg-type]
    for text in draws(answers, 2):
        assert parse_short_answer(text)
    assert satisfies(answers, " Karen Andrew | Naomi Thomas\n")
    assert not satisfies(answers, " \n") and not satisfies(answers, " a | ")


def test_the_paper_slots_come_after_the_references_markers() -> None:
    table = _Table(["party", "total"], 5)
    rows = grammars.paper_rows(None, table=table)  # type: ignore[arg-type]
    assert rows.after == "f_row(["
    assert satisfies(rows, "Row 3 says so. The answer is : f_row([row 3, row 5])")
    assert not satisfies(rows, "The answer is : f_row([row 6])")
    sort = grammars.paper_sort(None, table=table)  # type: ignore[arg-type]
    assert satisfies(
        sort, 'The datatype is Numerical. f_sort(total), the order is "large to small".'
    )
    cols = grammars.paper_columns(None, table=_Table(["Party", "Total"], 2))  # type: ignore[arg-type]
    assert satisfies(cols, "f_col([party, total])") and not satisfies(cols, "f_col([Party])")


def test_a_name_with_a_line_break_is_offered_as_shown_and_read_back() -> None:
    columns = ["Date", "Water level\ncm"]
    g = grammars.chain_grammar(list(OPERATION_NAMES), set(), columns, 3)
    assert satisfies(g, " f_select_column(Water level cm) -> <END>")
    assert not satisfies(g, " f_select_column(Water level\ncm) -> <END>")  # the stop cuts it
    assert column_list("Water level cm])", columns) == ["Water level\ncm"]
    assert parse_group("Water level cm)", columns) == "Water level\ncm"
    assert parse_sort('Water level cm), the order is "large to small".', columns).column == (
        "Water level\ncm"
    )
