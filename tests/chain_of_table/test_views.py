from __future__ import annotations

import json

from cot_helpers import fixture_table
from hypothesis import given
from hypothesis import strategies as st

from tablereason.methods.chain_of_table import views
from tablereason.table import Table


def test_pipe_block_matches_the_table_text_form(tabfact_records) -> None:
    for record in tabfact_records:
        table = fixture_table(record)
        block = views.pipe_block(table.caption, table.columns, table.rows())
        assert block == "/*\n" + table.to_pipe() + "\n*/\n"


def test_pipe_block_keeps_empty_cells_as_double_space() -> None:
    assert "row 1 :  | 5" in views.pipe_block(None, ["a", "b"], [["", "5"]])


def test_json_block_escapes_only_inside_column_lines() -> None:
    block = views.json_block("olé", ["name", "city"], [["olé", "x"], ["b", "y"]])
    lines = block.split("\n")
    assert lines[:3] == ["/*", "table = {", '  "table_caption": "olé",']
    assert lines[3] == '  "columns": ["name", "city"],'
    assert lines[5] == '    ["name", "ol\\u00e9", "b"],'
    assert lines[6] == '    ["city", "x", "y"]'
    assert block.endswith("  ]\n}\n*/\n")
    inner = block[len("/*\ntable = ") : -len("\n*/\n")]
    assert json.loads(inner)["table_column_priority"][0] == ["name", "olé", "b"]


def test_json_block_drops_the_caption_key_without_caption() -> None:
    assert "table_caption" not in views.json_block(None, ["a"], [["1"]])


@given(st.lists(st.sampled_from(["a", "b", "", "c "]), min_size=1, max_size=12))
def test_count_groups_matches_table_group_by(values: list[str]) -> None:
    groups = views.count_groups(values)
    assert sum(c for _, c in groups) == len(values)
    counts = [c for _, c in groups]
    assert counts == sorted(counts, reverse=True)
    table = Table.from_records(["v"], [[v] for v in values]).group_by("v")
    assert [(r[0], int(r[1])) for r in table.rows()] == groups


def test_group_ratio_and_empty_columns() -> None:
    assert views.group_ratio(["a", "a", "b", "b", "c"]) == 0.6
    assert views.group_ratio(["", " "]) is None


def test_reference_number() -> None:
    assert views.reference_number("1.5.3") == 1.53
    assert views.reference_number("- 4") == -4.0
    assert views.reference_number(".") is None
    assert views.reference_number("12th (q)") == 12.0


@given(st.integers(1, 60), st.integers(1, 20))
def test_view_rows_is_bounded_ordered_and_keeps_mentions(num_rows: int, limit: int) -> None:
    rows = [[f"name{i}", str(i)] for i in range(num_rows)]
    target = num_rows - 1
    chosen = views.view_rows(rows, f"what did name{target} score?", limit)
    assert chosen == sorted(set(chosen))
    assert len(chosen) == min(num_rows, limit)
    if limit > 3 or num_rows <= limit:
        assert target in chosen
