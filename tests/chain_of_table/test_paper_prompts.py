"""Prompt shape details of the paper profile that the reference's code decides."""

from __future__ import annotations

from tablereason.llm import Request, ScriptedLLM
from tablereason.methods import ChainOfTable
from tablereason.table import Table


def _prompts(table: Table) -> dict[str, str]:
    plan = " f_select_row(x) -> f_group_column(x) -> f_sort_column(x) -> <END>"

    def reply(request: Request) -> str | list[str]:
        site = request.call_site.rsplit("/", 1)[-1]
        if site == "select_row":
            return ["f_row([*])"] * request.n
        return {
            "plan": plan,
            "group_column": "f_group(b).",
            "sort_column": 'The datatype is Numerical. f_sort(a), the order is "small to large".',
        }.get(site, " yes")

    llm = ScriptedLLM(fn=reply)
    ChainOfTable(llm, task="tabfact", profile="paper").run(table, "a statement")
    return {r.call_site.rsplit("/", 1)[-1]: r.as_text() for r in llm.requests}


def test_row_group_and_sort_prompts_strip_the_table_text() -> None:
    # The last row ends in an empty cell: "row 3 : 3 | x | " keeps its final space in the
    # planner and final prompts, and loses it where the reference strips the table string.
    table = Table.from_records(["a", "b", "c"], [["2", "x", "p"], ["1", "y", "q"], ["3", "x", ""]])
    prompts = _prompts(table)
    for site in ("select_row", "group_column", "sort_column"):
        assert "row 3 : 3 | x |\n*/\n" in prompts[site], site
    for site in ("plan", "final_query"):
        assert "row 3 : 3 | x | \n*/\n" in prompts[site], site
