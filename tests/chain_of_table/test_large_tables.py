"""Chain-of-Table on large tables: the bounded view, conditions, expressions, the mode switch.

A scripted model gives the decisions; the tests check what the prompts show, that
the operations reach every row, that refused conditions go through the bounded
re-ask, and that no step copies the whole table into Python.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest
from sqlglot import exp

from tablereason.llm import Request, ScriptedLLM
from tablereason.methods import ChainOfTable
from tablereason.methods.chain_of_table.large import GROUP_ROWS
from tablereason.methods.chain_of_table.large_view import column_line, view_text
from tablereason.operations.table_profile import lowercased
from tablereason.table import Table
from tablereason.trace import Prediction, TraceStep

KINDS = ["sun", "rain", "fog", "drizzle", "snow"]


def weather(n: int, seed: int = 0) -> Table:
    """A synthetic daily weather table of ``n`` rows (snow about 2% of days)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        kind = rng.choices(KINDS, weights=[48, 28, 18, 4, 2])[0]
        rows.append(
            [
                f"{2000 + i // 365}-{1 + i % 365 // 31 % 12:02d}-{1 + i % 28:02d}",
                f"{rng.uniform(0, 30):.1f}",
                f"{rng.uniform(-5, 35):.1f}",
                kind,
            ]
        )
    return Table.from_records(["date", "precipitation", "temp_max", "weather"], rows)


def script(plan: str, answer: str = " 1", **sites: str) -> tuple[ScriptedLLM, list[Request]]:
    """A model that plans ``plan``, answers ``answer`` and replies ``sites[name]`` elsewhere."""
    seen: list[Request] = []

    def reply(request: Request) -> str:
        seen.append(request)
        site = request.call_site.rsplit("/", 1)[-1]
        if site == "plan":
            return plan
        if site == "final_query":
            return answer
        return sites[site]

    return ScriptedLLM(fn=reply), seen


def operation(prediction: Prediction, name: str) -> TraceStep:
    return next(s for s in prediction.trace.steps if s.kind == "operation" and s.name == name)


def final_prompt(seen: list[Request]) -> str:
    return next(r.as_text() for r in seen if r.call_site.endswith("final_query"))


@pytest.fixture(scope="module")
def big() -> Table:
    return weather(3000)


def test_small_tables_keep_the_efficient_view() -> None:
    llm, seen = script(" f_select_row(row 1) -> <END>")
    prediction = ChainOfTable(llm, task="wikitq").run(weather(1000), "how many days had snow?")
    assert prediction.trace.steps[0].note is None
    assert seen[0].call_site == "chain_of_table/plan"
    assert "column weather" not in seen[0].as_text() and "row 1 : 2000-01-01" in seen[0].as_text()


def test_efficient_switches_past_the_documented_size(big: Table) -> None:
    llm, seen = script(" f_select_row(where weather = 'snow') -> <END>")
    prediction = ChainOfTable(llm, task="wikitq").run(big, "how many days had snow?")
    assert "large-table mode: 3000 rows (more than 1000)" in (prediction.trace.steps[0].note or "")
    plan = seen[0].as_text()
    assert "f_select_row(where condition)" in plan and "rows : 3000" in plan
    snow = sum(r[3] == "snow" for r in big.rows())
    assert f"rows : {snow}\n" in final_prompt(seen)
    step = operation(prediction, "select_row")
    assert step.arguments["condition"] == "weather = 'snow'"
    assert (step.arguments["rows_before"], step.arguments["rows_after"]) == (3000, snow)
    assert step.table.num_rows == snow and step.table.step.operation == "filter_rows"


def test_the_switch_is_a_setting(big: Table) -> None:
    llm, seen = script(" f_select_row(row 1) -> <END>")
    ChainOfTable(llm, task="wikitq", large_table_rows=None).run(big, "how many days had snow?")
    assert "column weather" not in seen[0].as_text()
    llm, seen = script(" f_select_row(where weather = 'fog') -> <END>")
    ChainOfTable(llm, task="wikitq", large_table_rows=10).run(weather(50), "fog?")
    assert "rows : 50" in seen[0].as_text()


def test_paper_keeps_the_first_rows_and_says_so(big: Table) -> None:
    replies = {"select_row": "f_row([row 1])", "select_column": "f_col([weather])"}

    def reply(request: Request) -> str | list[str]:
        site = request.call_site.rsplit("/", 1)[-1]
        if site == "plan":
            return " f_select_row(row 1) -> <END>"
        if site in replies:
            return [replies[site]] * request.n
        return " yes"

    prediction = ChainOfTable(ScriptedLLM(fn=reply), profile="paper").run(big, "snow fell")
    assert prediction.trace.steps[0].note == (
        "paper profile: prompts show the first 100 of 3000 rows, as the reference does"
    )
    assert prediction.answer == "yes"


def test_view_is_bounded_and_holds_the_schema(big: Table) -> None:
    huge = weather(30_000)
    first = view_text(big, "how many days had snow?", caption=None, budget=30)
    second = view_text(huge, "how many days had snow?", caption=None, budget=30)
    assert len(first.split("\n")) == len(second.split("\n")) <= 30 + 3
    assert second.startswith("rows : 30000\ncol : date | precipitation | temp_max | weather\n")
    assert re.search(r"^column weather : text ; 5 distinct ; sun \(\d+\) , ", second, re.M)
    assert re.search(r"^column temp_max : decimal ; \d+ distinct ; from -?\d", second, re.M)
    shown = [line for line in second.split("\n") if line.startswith("row ")]
    assert shown[:3] == [f"row {i} : " + " | ".join(huge.rows(3)[i - 1]) for i in (1, 2, 3)]
    assert sum(line.endswith("| snow") for line in shown) == len(shown) - 3


def test_view_names_values_spelled_like_question_words(big: Table) -> None:
    text = view_text(big, "how many snowy days were there?", caption=None, budget=30)
    snow = sum(r[3] == "snow" for r in big.rows())
    assert f"close match : snowy ~ weather = snow ({snow} rows)" in text


def test_no_step_reads_the_whole_table_into_python(monkeypatch: pytest.MonkeyPatch) -> None:
    table = weather(20_000)
    largest: list[int] = []
    fetch: Callable[..., list[list[str]]] = Table._fetch

    def spy(self: Table, max_rows: int | None) -> list[list[str]]:
        rows = fetch(self, max_rows)
        largest.append(len(rows))
        return rows

    monkeypatch.setattr(Table, "_fetch", spy)
    monkeypatch.setattr(Table, "column_values", lambda *a: pytest.fail("column_values"))
    llm, seen = script(
        " f_add_column(year = year(date)) -> f_select_row(where temp_max > 30)"
        " -> f_group_column(year) -> f_sort_column(precipitation) -> <END>",
        sort_column='precipitation), the order is "large to small".',
    )
    prediction = ChainOfTable(llm, task="wikitq").run(table, "which year had most hot days?")
    assert prediction.error is None
    assert prediction.trace.to_dict()["steps"][0]["table"]["num_rows"] == 20_000
    assert largest and max(largest) <= 100
    assert "Group 1 |" in final_prompt(seen)


def test_no_query_costs_memory_in_proportion_to_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """No COUNT(DISTINCT) over the rows (each DuckDB thread would hash every value) and
    no table the run creates holds a row per input row (a computed column is evaluated
    where it is read, not stored)."""
    from tablereason.table import storage

    table = weather(20_000)
    table.rows(1)
    rendered: list[str] = []
    render = storage.render

    def spy(expression: exp.Expr) -> str:
        rendered.append(render(expression))
        return rendered[-1]

    monkeypatch.setattr(storage, "render", spy)

    def sizes() -> dict[str, int]:
        with table.kernel.store.connection() as conn:
            found = conn.execute("SELECT table_name, estimated_size FROM duckdb_tables()")
            return dict(found.fetchall())

    before = sizes()
    llm, _ = script(
        " f_add_column(year = year(date)) -> f_select_row(where temp_max > 30)"
        " -> f_group_column(year) -> <END>"
    )
    prediction = ChainOfTable(llm, task="wikitq").run(table, "which year had most hot days?")
    assert prediction.error is None
    assert operation(prediction, "add_column").error is None
    assert rendered and not [q for q in rendered if "COUNT(DISTINCT" in q.upper()]
    created = {k: v for k, v in sizes().items() if k not in before}
    assert all(rows <= 100 for rows in created.values()), created


def test_model_written_condition_and_bounded_reask(big: Table) -> None:
    seen: list[Request] = []
    replies = iter(["1 = 1; DROP TABLE t)", "weather = 'fog')"])

    def reply(request: Request) -> str:
        seen.append(request)
        site = request.call_site.rsplit("/", 1)[-1]
        return {"plan": " f_select_row() -> <END>", "final_query": " 1"}.get(site) or next(replies)

    # Not from a chain: the chain's own arguments are not used, so the bounded re-ask applies.
    method = ChainOfTable(ScriptedLLM(fn=reply), task="wikitq", plan_arguments=False)
    prediction = method.run(big, "foggy days?")
    step = operation(prediction, "select_row")
    asks = [r for r in seen if r.call_site.endswith("select_row")]
    assert asks[0].as_text().endswith("The answer is : f_select_row(where")
    assert "expected one expression" in asks[1].as_text()
    assert step.arguments["condition"] == "weather = 'fog'"
    assert step.note and "re-ask" in step.note
    assert step.table.num_rows == sum(r[3] == "fog" for r in big.rows())


@pytest.mark.parametrize(
    "hostile",
    [
        "read_csv('/etc/passwd') IS NOT NULL)",
        "getenv('HOME') <> '')",
        "weather IN (SELECT weather FROM t))",
        "count(*) > 1)",
    ],
)
def test_hostile_conditions_are_refused_and_the_table_kept(big: Table, hostile: str) -> None:
    def reply(request: Request) -> str:
        site = request.call_site.rsplit("/", 1)[-1]
        return {"plan": f" f_select_row(where {hostile} -> <END>", "final_query": " 1"}.get(
            site, hostile
        )

    prediction = ChainOfTable(ScriptedLLM(fn=reply), task="wikitq").run(big, "x?")
    step = operation(prediction, "select_row")
    assert step.error and "skipped" in (step.note or "")
    assert step.table is big
    assert prediction.error is None


def test_expression_column_reaches_the_group_facts(big: Table) -> None:
    llm, seen = script(" f_add_column(year = year(date)) -> f_group_column(year) -> <END>")
    prediction = ChainOfTable(llm, task="wikitq").run(big, "which year had the most days?")
    years = {}
    for row in big.rows():
        years[row[0][:4]] = years.get(row[0][:4], 0) + 1
    best = sorted(years.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    assert f"Group 1 | {best[0]} | {best[1]}" in final_prompt(seen)
    add = operation(prediction, "add_column")
    assert add.arguments["expression"] == "year(date)" and add.arguments["from_chain"]


def test_group_block_says_how_many_groups_there_are(big: Table) -> None:
    llm, seen = script(" f_group_column(date) -> <END>")
    table = weather(3000).apply("select_columns", names=["date", "weather"])
    ChainOfTable(llm, task="wikitq", group_threshold=1.0).run(table, "which date?")
    text = final_prompt(seen)
    assert f"Group {GROUP_ROWS} |" in text and f"Group {GROUP_ROWS + 1} |" not in text
    assert f"groups in all; the {GROUP_ROWS} largest are shown." in text


def test_sort_puts_the_top_rows_first(big: Table) -> None:
    llm, seen = script(
        " f_sort_column(temp_max) -> <END>", sort_column='temp_max), the order is "large to small".'
    )
    ChainOfTable(llm, task="wikitq").run(big, "which day was the hottest?")
    hottest = max(big.rows(), key=lambda r: float(r[2]))
    assert f"row 1 : {' | '.join(hottest)}\n" in final_prompt(seen)


def test_refused_expression_is_skipped(big: Table) -> None:
    llm, _ = script(" f_add_column(x = temperature + 1) -> <END>", add_column="x = 1 +)")
    prediction = ChainOfTable(llm, task="wikitq", repairs=0).run(big, "x?")
    step = operation(prediction, "add_column")
    assert "unknown column 'temperature'" in (step.note or "")
    assert step.error and step.table is big


def test_large_lowercasing_matches_python(big: Table) -> None:
    mixed = Table.from_records(["Name", "City"], [["Ann", "OSLO"], ["Bo", "Rome"]] * 800, "Cap")
    lowered = lowercased(mixed)
    assert lowered.to_records() == [["name", "city"]] + [["ann", "oslo"], ["bo", "rome"]] * 800
    assert lowered.caption == "cap" and lowered.parent is None


def test_trace_page_shows_a_window_and_the_condition(big: Table) -> None:
    llm, _ = script(" f_select_row(where weather <> 'snow') -> <END>")
    prediction = ChainOfTable(llm, task="wikitq").run(big, "how many days without snow?")
    page = prediction.to_html()
    kept = sum(r[3] != "snow" for r in big.rows())
    assert "(3,000 rows × 4 columns)" in page and f"({kept:,} rows × 4 columns)" in page
    assert "where <code>weather &lt;&gt; &#x27;snow&#x27;</code>" in page
    assert f"3,000 → {kept:,} rows" in page
    assert all(len(s["table"]["rows"]) <= 100 for s in prediction.trace.to_dict()["steps"][:1])
    assert f"… {3000 - 60:,} more rows not shown" in page


def test_seattle_weather_snow_days() -> None:
    """The issue's example: 1,461 days of Seattle weather, 23 with snow."""
    vega = pytest.importorskip("vega_datasets")
    from pathlib import Path

    path = Path(vega.__file__).parent / "_data" / "seattle-weather.csv"
    table = Table.from_csv(path, escape=None)
    llm, seen = script(" f_select_row(where weather = 'snow') -> <END>")
    ChainOfTable(llm, task="wikitq").run(table, "how many days had snow?")
    assert "rows : 1461" in seen[0].as_text() and "snow (23)" in seen[0].as_text()
    assert "rows : 23\n" in final_prompt(seen)


def test_mostly_unique_columns_of_huge_tables_get_an_estimate() -> None:
    from tablereason.operations import table_profile as TP

    rows = [[f"id{i:06d}", KINDS[i % 5]] for i in range(TP.APPROX_ROWS + 10)]
    summary = TP.profile(Table.from_records(["id", "kind"], rows), examples=3)
    ids, kinds = summary.columns
    assert ids.approximate and ids.top == [("id000000", 1), ("id000001", 1), ("id000002", 1)]
    assert not kinds.approximate and kinds.distinct == 5
    assert kinds.top[0] == ("drizzle", (TP.APPROX_ROWS + 10) // 5)  # ties: alphabetical
    assert re.match(r"column id : text ; about \d+ distinct ; e\.g\. id000000 , ", column_line(ids))


def test_a_condition_without_a_column_is_refused(big: Table) -> None:
    llm, _ = script(" f_select_row(where 1911) -> <END>", select_row="1 = 1)")
    prediction = ChainOfTable(llm, task="wikitq").run(big, "how many in 1911?")
    step = operation(prediction, "select_row")
    assert "names no column" in (step.note or "") and "names no column" in (step.error or "")
    assert step.table is big


def test_paper_lowercases_large_wikitq_tables_in_duckdb(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [[f"Day {i}", "SNOW" if i % 7 == 0 else "Sun"] for i in range(1500)]
    table = Table.from_records(["Day", "Weather"], rows, caption="Seattle")
    monkeypatch.setattr(Table, "rows", _bounded_rows(Table.rows, 100))

    def reply(request: Request) -> str | list[str]:
        site = request.call_site.rsplit("/", 1)[-1]
        if site == "plan":
            return " <END>"
        return " 1"

    prediction = ChainOfTable(ScriptedLLM(fn=reply), task="wikitq", profile="paper").run(
        table, "How many SNOW days?"
    )
    source = prediction.trace.steps[0].table
    assert source.columns == ["day", "weather"] and source.caption == "seattle"
    assert source.rows(2) == [["day 0", "snow"], ["day 1", "sun"]]
    assert prediction.trace.steps[0].note == (
        "paper profile: prompts show the first 100 of 1500 rows, as the reference does"
    )


def _bounded_rows(
    rows: Callable[..., list[list[str]]], limit: int
) -> Callable[..., list[list[str]]]:
    """Table.rows that fails when asked for more than ``limit`` rows of a large table."""

    def bounded(self: Table, max_rows: int | None = None) -> list[list[str]]:
        if self.num_rows > limit and (max_rows is None or max_rows > limit):
            pytest.fail(f"read {self.num_rows} rows into Python")
        return rows(self, max_rows)

    return bounded


def test_the_large_planning_prompt_never_ends_in_a_space(big: Table) -> None:
    llm, seen = script(" f_select_row(where weather = 'snow') -> <END>")
    ChainOfTable(llm, task="wikitq").run(big, "how many days had snow?")
    assert seen[0].as_text().endswith("\nFunction Chain:")


def test_no_large_table_prompt_ends_in_a_space(big: Table) -> None:
    """A prompt that ends in a space leaves a small model to start a word without its
    leading space, an unusual token path (Gemma 3 270M then wrote digits)."""
    llm, seen = script(
        " f_add_column() -> f_select_row() -> f_group_column(weather) -> <END>",
        add_column=" year = year(date)) -> f_select_row()",
        select_row=" weather = 'snow')",
    )
    ChainOfTable(llm, task="wikitq").run(big, "how many days had snow?")
    sites = [r.call_site.rsplit("/", 1)[-1] for r in seen]
    assert {"plan", "add_column", "select_row", "final_query"} <= set(sites), sites
    for request in seen:
        assert request.as_text() == request.as_text().rstrip(), request.call_site
    select = next(r for r in seen if r.call_site.endswith("select_row"))
    assert select.as_text().endswith("f_select_row(where")
