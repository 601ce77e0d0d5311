"""Trace rendering: table diffs, the HTML page, notebook HTML, the terminal, JSON round trip."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser

import pytest

from tablereason.trace import Prediction, Trace, TraceStep
from tablereason.trace.console import print_trace
from tablereason.trace.html import diff_tables, render_page, table_html


def t(header: list[str], *rows: list[str]) -> dict:
    return {"header": header, "rows": [list(r) for r in rows], "caption": None}


class Cells(HTMLParser):
    """Collects each data table's header and rows, with the classes of cells and rows."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict] = []
        self._row: list | None = None
        self._cell: list | None = None
        self._inside = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("class") == "data":
            self.tables.append({"rows": []})
            self._inside = True
        elif tag == "tr" and self._inside:
            self._row = [attrs.get("class"), []]
        elif tag in ("td", "th") and self._row is not None:
            self._cell = [attrs.get("class"), ""]

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data

    def handle_endtag(self, tag):
        if tag == "table":
            self._inside = False
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row[1].append(tuple(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1]["rows"].append(tuple(self._row))
            self._row = None


def parse(page: str) -> list[dict]:
    parser = Cells()
    parser.feed(page)
    return parser.tables


def test_diff_select_rows_marks_dropped_rows_only() -> None:
    before = t(["a", "b"], ["1", "x"], ["2", "y"], ["3", "z"])
    after = t(["a", "b"], ["3", "z"], ["1", "x"])
    d = diff_tables(before, after)
    assert d.dropped_rows == {1} and not d.added_rows and not d.reordered
    assert not d.added_columns and not d.dropped_columns


def test_diff_sort_is_a_reorder_and_duplicates_count() -> None:
    before = t(["a"], ["2"], ["1"], ["2"])
    assert diff_tables(before, t(["a"], ["1"], ["2"], ["2"])).reordered
    d = diff_tables(before, t(["a"], ["2"], ["1"]))
    assert d.dropped_rows == {2} and d.changed


def test_diff_add_and_drop_columns() -> None:
    before = t(["a", "b"], ["1", "x"])
    after = t(["a", "c"], ["1", "new"])
    d = diff_tables(before, after)
    assert d.added_columns == {"c"} and d.dropped_columns == {"b"}
    assert not d.added_rows and not d.dropped_rows
    assert not diff_tables(before, before).changed


def test_diff_group_by_adds_rows_in_a_new_shape() -> None:
    before = t(["team"], ["a"], ["a"], ["b"])
    after = t(["team", "Count"], ["a", "2"], ["b", "1"])
    d = diff_tables(before, after)
    assert d.added_columns == {"Count"} and d.dropped_rows == {1}


def test_page_shows_each_step_with_before_and_after(taymyr_prediction: Prediction) -> None:
    page = taymyr_prediction.to_html()
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org", "")
    tables = parse(page)
    # input; select_row before+after; select_column before+after; answer (unchanged)
    assert len(tables) == 6
    header, *rows = tables[0]["rows"]
    assert [c[1] for c in header[1]][1:4] == [
        "Column 1",
        "Average population (x 1000)",
        "Live births",
    ]
    assert len(rows) == 21
    # select_row: before has 20 struck-through rows, after has the single kept row
    before_rows = tables[1]["rows"][1:]
    assert sum(1 for klass, _ in before_rows if klass == "dropped") == 20
    kept = [cells for klass, cells in before_rows if klass != "dropped"]
    assert [c[1] for c in kept[0]][1:4] == ["1985", "51", "1 104"]
    assert len(tables[2]["rows"]) == 2
    # select_column: six dropped columns on the left, none added on the right
    dropped_headers = [c[1] for c in tables[3]["rows"][0][1] if c[0] == "dropped"]
    assert len(dropped_headers) == 6 and "Deaths" in dropped_headers
    assert [c[1] for c in tables[4]["rows"][0][1]] == ["#", "Column 1", "Live births"]
    assert "Table unchanged." in page
    assert re.search(r"Answer: <span class='answer'>1985</span>", page)
    # the raw output of each of the 3 model calls (plan, columns, answer: the row came
    # with the generated chain, so the select_row step shows where its argument came from)
    assert page.count("<details>") == 3
    assert "arguments from the generated chain (row 4); no model call" in page
    assert "Chain: select_row → select_column" in page


def test_added_columns_and_rows_are_highlighted() -> None:
    steps = [
        {"kind": "input", "name": "table", "table": t(["a"], ["1"], ["2"])},
        {"kind": "operation", "name": "add_column", "table": t(["a", "b"], ["1", "x"], ["2", "y"])},
        {"kind": "operation", "name": "group_by", "table": t(["b", "n"], ["x", "1"], ["y", "1"])},
    ]
    tables = parse(render_page({"question": "q", "steps": steps}))
    after_add = tables[2]["rows"][0][1]
    assert [c for c in after_add if c[0] == "added"] == [("added", "b")]
    after_group = tables[4]["rows"]
    assert [c[1] for c in after_group[0][1] if c[0] == "added"] == ["n"]


def test_cells_are_escaped_and_long_tables_are_cut() -> None:
    evil = t(["<b>x</b>"], ["<script>alert(1)</script>"], *[[str(i)] for i in range(100)])
    html = table_html(evil, max_rows=10)
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;" in html
    assert "91 more rows not shown" in html


def test_notebook_html_and_json_round_trip(taymyr_prediction: Prediction) -> None:
    fragment = taymyr_prediction._repr_html_()
    assert fragment.startswith("<div class='trt'>") and "<html" not in fragment
    assert "1985" in fragment
    assert "<table class='data'>" in taymyr_prediction.trace._repr_html_()
    again = Trace.from_dict(taymyr_prediction.trace.to_dict())
    assert again.to_dict() == taymyr_prediction.trace.to_dict()
    assert [x.shape for x in again.tables] == [x.shape for x in taymyr_prediction.tables]


def test_failed_step_and_prediction_error_are_shown() -> None:
    trace = Trace(question="q", steps=[TraceStep(kind="operation", name="sort_by", error="bad")])
    page = Prediction(answer="", trace=trace, error="model failed").to_html()
    assert "class='step failed'" in page and "Failed: model failed" in page


@pytest.mark.parametrize("plain", [True, False])
def test_terminal_rendering(taymyr_prediction: Prediction, plain: bool) -> None:
    out = io.StringIO()
    print_trace(
        taymyr_prediction.trace.to_dict(), file=out, answer=taymyr_prediction.answer, plain=plain
    )
    text = out.getvalue()
    assert "select_row" in text and "select_column" in text and "1 104" in text
    assert "(table unchanged)" in text
    assert text.rstrip().endswith("Answer: 1985")
    assert text.count("Deaths") == 2  # the input table and the selected row, not after columns


def test_the_page_and_the_json_keep_each_steps_exact_prompts() -> None:
    prompt = "Read the table.\n/*\ncol : a | <b>\n*/\nQuestion: a & b?\nThe answer is:"
    trace = Trace()
    trace.add(TraceStep(kind="answer", name="final", prompts=[prompt, prompt + " x"], raw=["1"]))
    page = Prediction(answer=["1"], trace=trace).to_html()
    assert "<summary>Prompt (2)</summary>" in page
    assert "col : a | &lt;b&gt;" in page and "Question: a &amp; b?" in page
    again = Trace.from_dict(trace.to_dict())
    assert again.steps[0].prompts == [prompt, prompt + " x"]
    out = io.StringIO()
    print_trace(trace.to_dict(), file=out, answer=["1"], plain=True, prompts=True)
    assert out.getvalue().count("--- prompt") == 2 and "Question: a & b?" in out.getvalue()
