"""Golden prompts: every Chain-of-Table call site rendered against fixture tables.

A prompt change shows up as a diff of tests/chain_of_table/golden/. After an intended
change, regenerate the files and review the diff:

    TABLEREASON_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/chain_of_table/test_golden.py
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cot_helpers import fixture_table, load_fixture
from support import golden

from tablereason.llm import Request, ScriptedLLM
from tablereason.methods import ChainOfTable

GOLDEN = Path(__file__).parent / "golden"
PLAN = (
    " f_add_column(x) -> f_select_row(x) -> f_select_column(x) -> f_group_column(x)"
    " -> f_sort_column(x) -> <END>"
)


def _replies(profile: str, task: str, header: list[str], rows: list[list[str]]):
    """Canned replies that keep every operation, so each prompt shows a longer chain."""
    src = 0 if task == "tabfact" else 1  # tabfact: date; wikitq (nu-22): Rider
    values = [r[src].split()[0] for r in rows]
    if profile == "paper" and task == "wikitq":
        values = [v.lower() for v in values]  # the paper profile lower-cases WikiTQ tables
    group_col = header[3]  # winning team / Team
    sort_col = header[0] if task == "tabfact" else "Wins"
    cols = list(dict.fromkeys([header[src], group_col, sort_col, "part"]))
    picked = "row 3, row 4, row 5" if task == "tabfact" else "row 1, row 2, row 4"
    calls: dict[str, int] = {}

    def reply(request: Request) -> str | list[str]:
        site = request.call_site.rsplit("/", 1)[-1]
        index = calls[site] = calls.get(site, -1) + 1
        if site == "plan":  # the efficient profile names its new column after the chain
            return PLAN if profile == "paper" else PLAN.replace("add_column(x)", "add_column(part)")
        if site == "add_column" and profile == "paper":
            if index:
                return " " + values[index + 2]
            return (
                f'We extract the value from column "{header[src]}" and create a different '
                f'column "part" for each row. The datatype is String.\nTherefore, the answer '
                f"is: f_add_column(part). The value: {' | '.join(values[:3])}"
            )
        if site == "add_column":
            return " part\n" + "\n".join(f"row {i} : {v}" for i, v in enumerate(values, 1))
        if site == "select_row":
            return [f"f_row([{picked}])"] * request.n if profile == "paper" else picked
        if site == "select_column":
            lowered = [c.lower() for c in cols] if profile == "paper" else cols
            return (
                ["f_col([" + ", ".join(lowered) + "])"] * request.n
                if profile == "paper"
                else (", ".join(cols))
            )
        if site == "group_column":
            col = group_col.lower() if profile == "paper" else group_col
            return f"f_group({col})." if profile == "paper" else f"{col})"
        if site == "sort_column":
            col = sort_col.lower() if profile == "paper" else sort_col
            tail = f'f_sort({col}), the order is "small to large".'
            if profile == "paper":
                return "The datatype is Numerical. " + tail
            return tail[len("f_sort(") :]
        return " yes" if task == "tabfact" else " 7"

    return reply


CASES = [(p, t) for p in ("paper", "efficient") for t in ("tabfact", "wikitq")]


@pytest.mark.parametrize(("profile", "task"), CASES)
def test_golden_prompts(profile: str, task: str) -> None:
    record = load_fixture(task)[0 if task == "tabfact" else 2]
    header, rows = record["header"], record["rows"][:6]
    table = fixture_table({**record, "rows": rows})
    llm = ScriptedLLM(fn=_replies(profile, task, header, rows))
    # The canned chain's arguments (x) name nothing, and the efficient profile is told
    # to ask for them, so that every operation's own prompt is rendered.
    ask = {"ask_when_plan_unusable": True} if profile == "efficient" else {}
    method = ChainOfTable(llm, task=task, profile=profile, **ask)
    pred = method.run(table, record["question"])
    chain = pred.trace.steps[-1].arguments["chain"]
    assert all(not c.startswith("skip") for c in chain), chain
    assert len(chain) == 5
    seen: dict[str, str] = {}
    for request in llm.requests:
        site = request.call_site.rsplit("/", 1)[-1]
        key = site if site not in seen else f"{site}_{sum(k.startswith(site) for k in seen)}"
        if site == "add_column" and site in seen:
            continue  # per-row prompts: the first is enough
        seen[key] = request.as_text()
    golden.check_folder(
        GOLDEN,
        {f"{profile}_{task}_{key}.txt": text for key, text in seen.items()},
        pattern=f"{profile}_{task}_*.txt",
    )
