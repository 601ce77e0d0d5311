"""Reading SQL and Python out of model replies: examples seen from small models, and properties.

The properties wrap a valid query or program in what small models add around code
(fences, leading prose, ``#`` comment lines, ``--`` comments, a trailing explanation)
and check that extraction gives back the same code, and that a second query makes the
reply come back whole for the guard to refuse; and that extraction never raises on any
text. Hostile replies (a statement hidden around the query) are in
``tests/security/test_sql_salvage.py``.
"""

from __future__ import annotations

import ast

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.methods.code_extraction import extract_python, extract_sql, sql_parses
from tablereason.table.sqlguard import SQLGuardError, check_select

# ---------------------------------------------------------------- SQL, seen in replies


def test_echoed_comment_lines_are_left_out_and_a_second_query_is_kept_for_the_guard() -> None:
    echoed = "# The previous attempt failed: the SQL does not parse\n# Write a corrected version.\n"
    query = 'SELECT "Name"\nFROM t\nORDER BY "Name"'
    assert extract_sql(echoed + query + "\n") == query
    # A second query (here after a repeated ORDER BY) is not cut away: the whole reply is
    # the statement, and the guard refuses it.
    reply = echoed + query + '\nORDER BY "Name"\nSELECT *\nFROM t\n'
    got = extract_sql(reply)
    assert got == reply.removeprefix(echoed).strip()
    assert not sql_parses(got)


def test_a_continuation_of_the_prompts_select_gets_the_keyword_back() -> None:
    assert extract_sql(' "Year" FROM t WHERE "Venue" LIKE \'%Japan%\'', prefix="SELECT") == (
        'SELECT "Year" FROM t WHERE "Venue" LIKE \'%Japan%\''
    )
    # a reply that writes the whole query again keeps its own SELECT
    assert extract_sql('\nSELECT "a" FROM t', prefix="SELECT") == 'SELECT "a" FROM t'
    # an inner SELECT of a continuation is not taken for the start of the query
    reply = ' "a" FROM t WHERE "b" IN (SELECT "b" FROM t)'
    assert extract_sql(reply, prefix="SELECT").startswith('SELECT "a" FROM t WHERE')
    # a continuation over several lines stays whole, even where a line begins a SELECT
    assert extract_sql(" name,\nscore FROM t", prefix="SELECT") == "SELECT name,\nscore FROM t"
    union = " name AS x UNION\nSELECT 2"
    assert extract_sql(union, prefix="SELECT") == "SELECT name AS x UNION\nSELECT 2"
    # an opening sentence is prose; the continuation starts after it
    assert extract_sql('Sure!\n"a" FROM t', prefix="SELECT") == 'SELECT "a" FROM t'


def test_prose_and_fences_are_stripped_and_comments_kept() -> None:
    reply = (
        "Sure! Here is the query you asked for:\n```sql\n"
        "SELECT COUNT(*) -- how many\nFROM t /* the table */ WHERE \"Time\" < '05:00';\n```\n"
        "This counts the rows whose time is below five minutes."
    )
    assert extract_sql(reply) == (
        "SELECT COUNT(*) -- how many\nFROM t /* the table */ WHERE \"Time\" < '05:00'"
    )
    assert extract_sql("The query is `SELECT 1`.") == "SELECT 1"
    assert extract_sql('SELECT "a" FROM t\nThis returns the a.') == 'SELECT "a" FROM t'


def test_comment_markers_inside_quotes_are_kept() -> None:
    query = 'SELECT "a--b" FROM t WHERE "c" = \'#1 -- x; y\''
    assert extract_sql(query + "; -- done") == query


def test_prose_that_says_with_or_select_is_not_the_query() -> None:
    reply = 'I will select the rows with the most wins.\nSELECT "Team" FROM t'
    assert extract_sql(reply) == 'SELECT "Team" FROM t'


def test_no_sql_at_all_returns_the_text_for_the_error_message() -> None:
    assert extract_sql("# nothing useful here\nThe answer is 3.") == "The answer is 3."
    assert not sql_parses(extract_sql("# only a comment"))


# ---------------------------------------------------------------- SQL properties

_NAMES = st.text(
    alphabet=st.characters(codec="ascii", categories=("L", "N", "Zs"), include_characters="_()-"),
    min_size=1,
    max_size=12,
)
_VALUES = st.text(alphabet=st.characters(codec="ascii", exclude_characters="\x00\r"), max_size=12)


@st.composite
def queries(draw: st.DrawFn) -> str:
    """A valid SELECT over ``t``, built with sqlglot (quoted names, literals of any text)."""
    column = draw(_NAMES)
    other = draw(_NAMES)
    select = sqlglot.select(sqlglot.exp.column(column, quoted=True)).from_("t")
    if draw(st.booleans()):
        value = sqlglot.exp.Literal.string(draw(_VALUES))
        select = select.where(sqlglot.exp.column(other, quoted=True).eq(value))
    if draw(st.booleans()):
        cast = sqlglot.exp.cast(sqlglot.exp.column(other, quoted=True), "INT")
        select = select.order_by(sqlglot.exp.Ordered(this=cast, desc=True)).limit(1)
    return select.sql(dialect="duckdb", pretty=draw(st.booleans()))


_PROSE = st.sampled_from([
    "Sure! Here is the query:", "Here it is.", "The answer needs one query:", "Okay.",
])  # fmt: skip
_EXPLANATIONS = st.sampled_from([
    "This query returns the answer.", "Explanation: it sorts the rows first.",
    "The result is the first row.", "Note that the column holds text.",
])  # fmt: skip


def _same(a: str, b: str) -> bool:
    return sqlglot.parse_one(a, read="duckdb") == sqlglot.parse_one(b, read="duckdb")


@settings(max_examples=150, deadline=None)
@given(
    query=queries(),
    prose=st.lists(_PROSE, max_size=2),
    hashes=st.lists(st.sampled_from(["# The previous attempt failed.", "#  fix it"]), max_size=2),
    fence=st.sampled_from(["", "sql", "SQL", "none"]),
    comment=st.booleans(),
    semicolon=st.booleans(),
    explanation=st.one_of(st.none(), _EXPLANATIONS),
    second=st.booleans(),
    leading=st.sampled_from(["", "\n", "\n\n", "  "]),
)
def test_the_query_survives_what_small_models_write_around_it(
    query: str,
    prose: list[str],
    hashes: list[str],
    fence: str,
    comment: bool,
    semicolon: bool,
    explanation: str | None,
    second: bool,
    leading: str,
) -> None:
    body = query + (" -- the answer" if comment else "") + (";" if semicolon else "")
    if second:
        body += '\nSELECT "x" FROM t'
    if fence != "none":
        body = f"```{fence}\n{body}\n```"
    parts = [*prose, *hashes, body] + ([explanation] if explanation else [])
    reply = leading + "\n".join(parts)
    got = extract_sql(reply)
    if second:  # two statements: both come back, and the guard refuses them
        assert query in got and '"x"' in got, (reply, got)
        with pytest.raises(SQLGuardError):
            check_select(got, ["t"])
        return
    assert sql_parses(got), (reply, got)
    assert _same(got, query), (reply, got)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.sampled_from(["", "SELECT"]))
def test_extract_sql_never_raises(text: str, prefix: str) -> None:
    out = extract_sql(text, prefix=prefix)
    assert isinstance(out, str)
    assert extract_sql(out, prefix=prefix) == out or not sql_parses(out)


# ---------------------------------------------------------------- Python


def test_a_program_of_comments_only_stays_without_an_answer() -> None:
    reply = "# Python Code, return 'ans'.\n# The table is df.\n# ans is a number"
    assert "ans =" not in extract_python(reply)


def test_the_closing_fence_of_an_opened_block_ends_the_program() -> None:
    reply = 'in_japan = df[df["Venue"].str.contains("Japan")]\nans = in_japan["Year"].iloc[0]\n```'
    assert extract_python(reply + "\n\nTable:\ncol : a | b") == reply.removesuffix("\n```")


def test_a_fenced_program_after_prose_and_a_print_of_the_answer() -> None:
    reply = "Here is the code:\n```python\nx = df['n'].astype(int)\nprint(x.max())\n```\nDone."
    assert extract_python(reply) == "x = df['n'].astype(int)\nans = x.max()"
    assert extract_python("print('thinking')") == "print('thinking')"
    assert extract_python("ans = 1\nprint(ans)") == "ans = 1\nprint(ans)"


def test_trailing_prose_after_the_code_is_left_out() -> None:
    reply = "ans = len(df)\nThis counts the rows of the table."
    assert extract_python(reply) == "ans = len(df)"


_IDENTIFIERS = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda s: s not in {"ans", "print", "python", "df"} and not __import__("keyword").iskeyword(s)
)


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A small program that ends by assigning ``ans``."""
    names = draw(st.lists(_IDENTIFIERS, min_size=1, max_size=3, unique=True))
    lines = [f"{name} = {draw(st.integers(-99, 99))}" for name in names]
    if draw(st.booleans()):
        lines.append(f"for i in range(3):\n    {names[0]} += i")
    lines.append(f"ans = {' + '.join(names)}")
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(
    program=programs(),
    prose=st.lists(st.sampled_from(["Sure, here is the code:", "Here it is:"]), max_size=1),
    fence=st.sampled_from(["python", "", "closing", "none"]),
    explanation=st.one_of(st.none(), _EXPLANATIONS),
)
def test_the_program_survives_what_small_models_write_around_it(
    program: str, prose: list[str], fence: str, explanation: str | None
) -> None:
    if fence == "closing":  # the prompt opened the fence
        body = f"{program}\n```"
        prose = []
    elif fence == "none":
        body = program
    else:
        body = f"```{fence}\n{program}\n```"
    reply = "\n".join([*prose, body] + ([explanation] if explanation else []))
    assert ast.dump(ast.parse(extract_python(reply))) == ast.dump(ast.parse(program)), reply


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_extract_python_never_raises(text: str) -> None:
    assert isinstance(extract_python(text), str)
