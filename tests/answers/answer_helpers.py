"""Scripted runs for the answer tests: a Chain-of-Table chain, a query, a program."""

from __future__ import annotations

from typing import Any

from tablereason.llm import Request, ScriptedLLM
from tablereason.methods import ChainOfTable
from tablereason.table import Table
from tablereason.trace import Prediction

WEATHER = Table.from_records(
    ["date", "weather", "mm", "wind"],
    [
        ["2012-01-01", "rain", "10.9", "4.7"],
        ["2012-01-02", "snow", "4.1", "5.3"],
        ["2012-01-03", "sun", "0", "2.2"],
        ["2013-01-04", "snow", "5.3", "3.2"],
        ["2013-01-05", "rain", "2.5", "6.1"],
        ["2013-01-06", "snow", "", "5.0"],
    ],
    caption="seattle weather",
)


def chain_llm(plan: str, answer: str, **sites: str) -> ScriptedLLM:
    """Replies of a Chain-of-Table run: the chain, each step's argument, the answer."""

    def reply(request: Request) -> str | list[str]:
        site = request.call_site.rsplit("/", 1)[-1]
        if site == "plan":
            return plan
        if site == "final_query":
            return answer
        text = sites.get(site, "")
        return [text] * request.n if request.n > 1 else text

    return ScriptedLLM(fn=reply)


def run_chain(
    table: Table, question: str, plan: str, answer: str, *, large: bool = False, **sites: str
) -> Prediction:
    """One scripted Chain-of-Table run; ``large`` runs it in the large-table mode."""
    options: dict[str, Any] = {"large_table_rows": 2} if large else {}
    method = ChainOfTable(chain_llm(plan, answer, **sites), task="wikitq", **options)
    return method.run(table, question)


def cells(prediction: Prediction) -> list[tuple[int, str]]:
    """The evidence cells of a prediction as ``(row, column)``."""
    assert prediction.evidence is not None
    return [(c.row, c.column) for c in prediction.evidence.cells]


def codes(prediction: Prediction) -> list[str]:
    """The warning codes of a prediction."""
    return [w.code for w in prediction.warnings or []]
