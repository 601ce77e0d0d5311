"""Chain-of-Table with the embedded Gemma 3 270M model on real benchmark examples.

Every example must produce an answer of the right type and a full trace, with no
exception, in both profiles. Accuracy is not checked (a 270M model is weak).

    .venv/bin/python -m pytest tests/chain_of_table/test_cot_real_model.py -m real_model
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from tablereason.methods import ChainOfTable
from tablereason.methods.chain_of_table.demos import DEMO_TABLE_IDS
from tablereason.table import Table


@pytest.fixture(scope="module")
def local_llm() -> Any:
    from tablereason.llm import LocalLlama

    llm = LocalLlama(n_ctx=16384)
    llm.load()
    return llm


def smallest_tabfact(data: Path, n: int) -> list[tuple[Table, str]]:
    lines = (data / "tabfact" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    seen, out = set(), []
    for line in lines:
        r = json.loads(line)
        if r["table_id"] in DEMO_TABLE_IDS or r["table_id"] in seen:
            continue
        seen.add(r["table_id"])
        out.append(
            (
                Table.from_records(r["table_text"][0], r["table_text"][1:], r["table_caption"]),
                r["statement"],
            )
        )
    out.sort(key=lambda item: item[0].num_rows * len(item[0].columns))
    return out[:n]


def smallest_wikitq(data: Path, n: int) -> list[tuple[Table, str]]:
    with open(data / "wikitq" / "data" / "test.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    tables: dict[str, Table] = {}
    out = []
    for row in rows:
        if row["context"] not in tables:
            tables[row["context"]] = Table.from_csv(data / "wikitq" / row["context"])
            out.append((tables[row["context"]], row["utterance"]))
    out.sort(key=lambda item: item[0].num_rows * len(item[0].columns))
    return out[:n]


def _check(llm: Any, task: str, profile: str, examples: list[tuple[Table, str]]) -> None:
    method = ChainOfTable(llm, task=task, profile=profile)
    for table, question in examples:
        prediction = method.run(table, question)  # must not raise
        assert prediction.error is None, prediction.error
        steps = prediction.trace.steps
        assert steps[0].kind == "input" and steps[-1].kind == "answer"
        assert steps[-1].raw, "the final query got no completion"
        assert isinstance(prediction.answer, str if task == "tabfact" else list)
        assert prediction.trace.usage.requests >= 2
        for step in steps[1:]:
            # Every model call names its prompt; a step without one took its arguments
            # from the generated chain, or fell back because they named nothing usable.
            no_call = step.arguments.get("from_chain") or "plan_arguments" in step.arguments
            assert step.prompt_name or step.kind == "plan" or (no_call and not step.raw)
        json.loads(prediction.trace.to_json())


LOADERS = {"tabfact": smallest_tabfact, "wikitq": smallest_wikitq}
CASES = [(t, p) for t in ("tabfact", "wikitq") for p in ("efficient", "paper")]
# The paper profile makes many sampled calls per step (minutes per example on two
# cores), so every CI run covers the efficient profile and the paper one is slow.
SHORT_CASES = [
    pytest.param(t, p, marks=[pytest.mark.slow] if p == "paper" else []) for t, p in CASES
]


@pytest.mark.real_model
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(("task", "profile"), SHORT_CASES)
def test_real_model_two_examples(local_llm, fixture_data: Path, task: str, profile: str) -> None:
    _check(local_llm, task, profile, LOADERS[task](fixture_data, 2))


@pytest.mark.real_model
@pytest.mark.slow
@pytest.mark.timeout(7200)
@pytest.mark.parametrize(("task", "profile"), CASES)
def test_real_model_ten_examples(local_llm, fixture_data: Path, task: str, profile: str) -> None:
    _check(local_llm, task, profile, LOADERS[task](fixture_data, 10))
