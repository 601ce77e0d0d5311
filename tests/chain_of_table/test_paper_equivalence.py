"""The paper profile takes the reference algorithm's decisions on the same replies."""

from __future__ import annotations

import cot_reference
from cot_helpers import fixture_table, load_fixture
from cot_replies import Counter, ReplyScript
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablereason.llm import ScriptedLLM
from tablereason.methods import ChainOfTable

RECORDS = load_fixture("tabfact")


def _compare(seed: int, which: int) -> None:
    record = RECORDS[which]
    script = ReplyScript(seed, record["header"], record["rows"])
    theirs = Counter(script)
    ours = Counter(script)
    table = fixture_table(record)
    records = [record["header"], *record["rows"]]
    try:
        expected = cot_reference.run(records, record["question"], record["question"], theirs.reply)
    except cot_reference.Lost:
        expected = None
    llm = ScriptedLLM(fn=ours.for_request)
    prediction = ChainOfTable(llm, task="tabfact", profile="paper").run(table, record["question"])
    if expected is None:
        assert prediction.error and prediction.error.startswith("example lost")
        return
    assert prediction.error is None
    final = prediction.trace.steps[-1]
    assert final.arguments["chain"] == expected["chain"]
    assert final.table.to_records() == expected["table"]
    assert prediction.answer == expected["answer"]
    group = expected["group"]
    assert final.arguments.get("group") == (
        None if group is None else [group[0], [list(g) for g in group[1]]]
    )
    assert dict(ours.calls) == dict(theirs.calls)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(0, len(RECORDS) - 1))
def test_paper_profile_matches_the_reference_algorithm(seed: int, which: int) -> None:
    _compare(seed, which)
