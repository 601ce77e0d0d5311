from __future__ import annotations

import cot_reference
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablereason.errors import ParseError
from tablereason.methods.chain_of_table import parse, reference_parse

OPS = st.sampled_from(parse.OPERATION_NAMES)
# Cell-like text: no separators the formats use.
WORD = (
    st.text(
        alphabet=st.characters(blacklist_characters='|()[],\n\r"', blacklist_categories=("Cs",)),
        min_size=1,
        max_size=12,
    )
    .map(str.strip)
    .filter(bool)
)


@given(st.lists(OPS, max_size=5), st.booleans(), st.lists(WORD, max_size=3))
def test_plan_round_trip(names: list[str], end: bool, args: list[str]) -> None:
    parts = [f"f_{n}({', '.join(args)})" for n in names] + (["<END>"] if end else [])
    assert parse.parse_chain(" " + " -> ".join(parts)) == names + (["<END>"] if end else [])


def test_plan_takes_the_first_match_of_each_part_and_drops_junk() -> None:
    text = "f_select_row(row 1) and f_sort_column(x) -> nonsense -> <END> -> f_group_column(a)"
    assert parse.parse_chain(text) == ["select_row", "<END>", "group_column"]


@given(
    st.lists(st.sampled_from([*parse.OPERATION_NAMES, parse.END]), max_size=6),
    st.lists(OPS, min_size=1),
)
def test_first_allowed_is_the_first_generated_allowed_name(names, allowed) -> None:
    chosen = parse.first_allowed(names, allowed)
    expected = next((n for n in names if n in allowed), None)
    assert chosen == expected


@given(WORD, st.lists(WORD, min_size=3, max_size=3), st.text(max_size=20))
def test_add_column_paper_round_trip(name: str, values: list[str], junk: str) -> None:
    text = (
        f'{junk.replace("|", "")} We extract the value from column "x" and create a different '
        f'column "{name}" for each row. The datatype is String.\n'
        f"Therefore, the answer is: f_add_column({name}). The value: {' | '.join(values)}"
    )
    reply = reference_parse.parse_add_column_paper(text)
    assert reply.name == name and list(reply.values) == values


@pytest.mark.parametrize(
    "text",
    [
        "f_add_column(a). The value: 1 | 2 | 3",  # no "We extract the value from"
        "We extract the value from x. f_add_column(a). The value: 1 | 2",  # 2 values
        "We extract the value from x. f_add_column(a). The value: 1 | 2 | 3 | 4",
        "We extract the value from x. The value: 1 | 2 | 3",  # no call
    ],
)
def test_add_column_paper_rejects(text: str) -> None:
    with pytest.raises(ParseError) as info:
        reference_parse.parse_add_column_paper(text)
    assert info.value.raw == text and info.value.expected


def test_add_column_paper_trailing_text_leaks_into_the_third_value() -> None:
    text = "We extract the value from c. f_add_column(a). The value: 1 | 2 | 3\n\nmore"
    assert reference_parse.parse_add_column_paper(text).values[2] == "3\n\nmore"


@given(st.text(max_size=30))
def test_add_column_row_paper_keeps_text_before_the_first_pipe(text: str) -> None:
    value = reference_parse.parse_add_column_row_paper(text)
    assert "|" not in value and value == value.strip()
    assert value in text


@given(WORD, st.lists(WORD, min_size=1, max_size=6), st.integers(1, 50))
def test_add_column_rows_round_trip(name: str, values: list[str], first: int) -> None:
    numbers = list(range(first, first + len(values)))
    body = "\n".join(f"row {n} : {v}" for n, v in zip(numbers, values, strict=True))
    reply = parse.parse_add_column_rows(f" {name}\n{body}", numbers)
    assert reply.name == name and list(reply.values) == values
    assert parse.parse_add_column_rows(body, numbers, name=name).values == reply.values


def test_add_column_rows_needs_every_row() -> None:
    with pytest.raises(ParseError, match=r"row\(s\) \[2\]"):
        parse.parse_add_column_rows(" x\nrow 1 : a", [1, 2])


@given(st.lists(st.integers(1, 60), min_size=1, max_size=8))
def test_row_key_paper(rows: list[int]) -> None:
    text = "The answer is : f_row([" + ", ".join(f"row {r}" for r in rows) + "])"
    assert reference_parse.parse_row_key_paper(text) == tuple(sorted(str(r) for r in rows))


def test_row_key_paper_star_and_missing() -> None:
    assert reference_parse.parse_row_key_paper("f_row([*])") == ("*",)
    assert reference_parse.parse_row_key_paper("row 1 and row 2") is None


@given(st.lists(st.integers(-3, 30), min_size=1, max_size=8), st.integers(1, 20))
def test_parse_rows_keeps_only_valid_rows(rows: list[int], num_rows: int) -> None:
    text = ", ".join(f"row {r}" for r in rows) + "])"
    valid = sorted({r - 1 for r in rows if 1 <= r <= num_rows})
    if valid:
        assert parse.parse_rows(text, num_rows) == valid
    else:
        with pytest.raises(ParseError):
            parse.parse_rows(text, num_rows)


# Messy replies as a small model writes them: separators with or without a space, a
# trailing separator, padding inside the brackets or parentheses, line breaks.
PAD = st.sampled_from(["", "", " ", "  ", "\n", " \n"])
SEP = st.sampled_from([", ", ", ", ",", ",\n", " , ", ",  "])
TRAIL = st.sampled_from(["", "", ", ", ",", " ", "\n"])
ROW_ITEM = st.one_of(
    st.integers(0, 40).map(lambda r: f"row {r}"),
    st.integers(0, 40).map(lambda r: f"row  {r}"),
    st.integers(0, 40).map(str),
    st.just("*"),
    WORD,
)


@st.composite
def list_replies(draw: st.DrawFn, call: str, item: st.SearchStrategy[str]) -> str:
    items = draw(st.lists(item, max_size=4))
    body = draw(PAD) + draw(SEP).join(items) + draw(TRAIL) + draw(PAD)
    return draw(st.sampled_from(["", "The answer is : ", "explain :\n"])) + f"{call}([{body}])"


@given(list_replies("f_row", ROW_ITEM))
def test_row_key_paper_matches_the_reference(text: str) -> None:
    key = cot_reference.list_key(text, cot_reference.ROW_LIST, last_token=True)
    assert reference_parse.parse_row_key_paper(text) == (None if key is None else tuple(key))


@given(list_replies("f_col", st.one_of(WORD, st.sampled_from(["pop (2010)", "a b", ""]))))
def test_column_key_paper_matches_the_reference(text: str) -> None:
    key = cot_reference.list_key(text, cot_reference.COL_LIST, last_token=False)
    assert reference_parse.parse_column_key_paper(text) == (None if key is None else tuple(key))


SORT_HEADER = ["total", "pop (2010)", "margin of victory"]


@st.composite
def sort_replies(draw: st.DrawFn) -> str:
    dtype = draw(st.sampled_from(["Numerical", "String", "DateType", "numerical", ""]))
    end = draw(st.sampled_from([".", ".", "\n", ".\n", " "]))
    gap = draw(st.sampled_from([" ", " ", "\n", "\nTherefore "]))
    column = draw(PAD) + draw(st.sampled_from([*SORT_HEADER, "nope"])) + draw(PAD)
    order = draw(PAD) + draw(st.sampled_from([*parse.SORT_ORDERS, "up"])) + draw(PAD)
    tail = draw(st.sampled_from(["", "", "\n(see above).", ' or "small to large".', ")"]))
    return (
        f"The datatype is {dtype}{end}Therefore, the answer is:{gap}"
        f'f_sort({column}),{gap}the order is "{order}".{tail}'
    )


@given(sort_replies())
def test_sort_paper_matches_the_reference(text: str) -> None:
    key = cot_reference.sort_key(text, SORT_HEADER)
    try:
        reply = reference_parse.parse_sort_paper(text, SORT_HEADER)
    except ParseError:
        assert key is None
    else:
        assert (reply.column, reply.order, reply.datatype) == key


@given(
    st.one_of(WORD, st.sampled_from(["", " ", " part ", "\npart", "a (b)"])),
    st.lists(st.one_of(WORD, st.just("")), min_size=2, max_size=4),
    st.sampled_from(["", "\n", "\n\nmore"]),
)
def test_add_column_paper_matches_the_reference(name: str, values: list[str], tail: str) -> None:
    text = (
        'We extract the value from column "x" and create a different column "y" for each row. '
        f"The datatype is String.\nTherefore, the answer is: f_add_column({name}). "
        f"The value: {' | '.join(values)}{tail}"
    )
    key = cot_reference.add_column_key(text)
    try:
        reply = reference_parse.parse_add_column_paper(text)
    except ParseError:
        assert key is None
    else:
        assert key == (reply.name, list(reply.values))


def test_parse_rows_star_means_all() -> None:
    assert parse.parse_rows("*])", 4) is None


@given(st.lists(st.sampled_from(["Year", "Name, full", "pop (2010)", "Team"]), min_size=1))
def test_parse_columns_matches_names_with_commas(picked: list[str]) -> None:
    columns = ["Year", "Name, full", "pop (2010)", "Team"]
    text = ", ".join(p.lower() for p in picked) + "])"
    assert parse.parse_columns(text, columns) == [c for c in columns if c in picked]


def test_column_key_paper_splits_on_comma_space() -> None:
    assert reference_parse.parse_column_key_paper("f_col([b, a,c])") == ("a,c", "b")


def test_rank_votes_uses_rank_weights() -> None:
    # weights for n=4: 1, .75, .5, .25
    keys = [("a",), ("b",), ("b",), None]
    assert reference_parse.rank_votes(keys) == [("b",), ("a",)]


def test_group_parsers() -> None:
    header = ["party", "Electrical system", "pop (2010)"]
    assert reference_parse.parse_group_paper("so f_group(party).", header) == "party"
    with pytest.raises(ParseError):
        reference_parse.parse_group_paper(
            "f_group(Party)", header
        )  # the reference needs the exact name
    assert parse.parse_group(" electrical system)", header) == "Electrical system"
    assert parse.parse_group("pop (2010))", header) == "pop (2010)"
    with pytest.raises(ParseError):
        parse.parse_group("votes)", header)


def test_sort_parsers() -> None:
    text = 'The datatype is Numerical. Therefore f_sort(pop (2010)), the order is "large to small".'
    reply = reference_parse.parse_sort_paper(text, ["pop (2010)"])
    assert (reply.column, reply.descending, reply.datatype) == ("pop (2010)", True, "Numerical")
    with pytest.raises(ParseError):
        reference_parse.parse_sort_paper(
            'f_sort(a), the order is "up".  The datatype is Numerical.', ["a"]
        )
    with pytest.raises(ParseError):  # no datatype sentence
        reference_parse.parse_sort_paper('f_sort(a), the order is "small to large".', ["a"])
    assert parse.parse_sort('points), the order is "Small to large".', ["Points"]).order == (
        "small to large"
    )


@pytest.mark.parametrize(
    ("text", "paper", "efficient"),
    [(" YES", "yes", "yes"), ("True", "yes", "yes"), ("no.", "no.", "no"), ("False", "no", "no")],
)
def test_verdicts(text: str, paper: str, efficient: str) -> None:
    assert reference_parse.parse_verdict_paper(text) == paper
    assert parse.parse_verdict(text) == efficient


def test_verdict_efficient_rejects_other_words() -> None:
    with pytest.raises(ParseError):
        parse.parse_verdict("maybe")


@given(st.lists(WORD, min_size=1, max_size=4))
def test_short_answer_round_trip(items: list[str]) -> None:
    assert parse.parse_short_answer(" " + " | ".join(items) + "\nnext line") == items


ALL_PARSERS = [
    parse.parse_chain,
    reference_parse.parse_add_column_paper,
    reference_parse.parse_add_column_row_paper,
    lambda t: parse.parse_add_column_rows(t, [1, 2]),
    reference_parse.parse_row_key_paper,
    reference_parse.parse_column_key_paper,
    lambda t: parse.parse_rows(t, 5),
    lambda t: parse.parse_columns(t, ["a", "B"]),
    lambda t: reference_parse.parse_group_paper(t, ["a"]),
    lambda t: parse.parse_group(t, ["a"]),
    lambda t: reference_parse.parse_sort_paper(t, ["a"]),
    lambda t: parse.parse_sort(t, ["a"]),
    reference_parse.parse_verdict_paper,
    parse.parse_verdict,
    parse.parse_short_answer,
]


@settings(max_examples=60)
@given(st.text(max_size=80), st.sampled_from(range(len(ALL_PARSERS))))
def test_parsers_only_raise_parse_errors(text: str, which: int) -> None:
    try:
        ALL_PARSERS[which](text)
    except ParseError as err:
        assert err.raw == text
