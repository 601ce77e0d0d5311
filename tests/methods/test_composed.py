"""The composed methods: self-consistency, Mix-SC and the table critic, over scripted models."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from support.noisy_votes import (
    critic_llm,
    example_of,
    interval,
    noisy_llm,
    predicted_accuracy,
    questions,
    score,
)

from tablereason.datasets import Example
from tablereason.errors import ConfigurationError
from tablereason.llm import (
    CachedLLM,
    Capabilities,
    Completion,
    Request,
    ScriptedLLM,
    UsageTracker,
)
from tablereason.methods import build_method
from tablereason.table import Table
from tablereason.trace import Prediction, Trace

Z_TEST = 3.29
"""The reduced runs check within the 99.9% interval: nine checks at 95% would fail by chance."""


def _accuracy(method: str, p: float, n: int, p_code: float | None = None, **options: Any) -> float:
    asked = questions(n, 2, seed=11)
    llm = noisy_llm(asked, p, p_code)
    built = build_method(method, llm, task="wikitq", workers=1, **options)
    return sum(score(built.run(example_of(q)).answer, example_of(q)) for q in asked) / n


@pytest.mark.parametrize("p", [0.3, 0.5, 0.7])
def test_self_consistency_scores_the_vote_prediction(p: float) -> None:
    predicted = predicted_accuracy(p, ["sample"] * 5, 2, None)
    accuracy = _accuracy("self_consistency", p, 300, inner="chain_of_table", k=5)
    assert abs(accuracy - predicted) <= interval(predicted, 300, Z_TEST), (accuracy, predicted)


@pytest.mark.parametrize(("p", "p_code"), [(0.3, 0.3), (0.7, 0.3)])
def test_mix_sc_scores_the_vote_prediction_with_its_tie_rule(p: float, p_code: float) -> None:
    kinds = ["text"] * 3 + ["code"] * 3
    predicted = predicted_accuracy([p] * 3 + [p_code] * 3, kinds, 2, "text")
    accuracy = _accuracy("mix_sc", p, 100, p_code, symbolic="text_to_sql", k=3)
    assert abs(accuracy - predicted) <= interval(predicted, 100, Z_TEST), (accuracy, predicted)


def test_the_prediction_tells_the_tie_rules_apart() -> None:
    # Where the paths differ in accuracy, the textual tie rule is worth something.
    kinds = ["text"] * 3 + ["code"] * 3
    chances = [0.7] * 3 + [0.3] * 3
    text_first = predicted_accuracy(chances, kinds, 2, "text")
    code_first = predicted_accuracy(chances, kinds, 2, "code")
    assert text_first - code_first > 0.02


def test_one_sample_scores_p_and_each_sample_draws_for_itself() -> None:
    asked = questions(400, 2, seed=3)
    llm = noisy_llm(asked, 0.5)
    method = build_method("self_consistency", llm, task="wikitq", k=3, workers=1)
    runs = [method.run(example_of(q)).trace.runs for q in asked]
    right = [
        [score(run.answer, example_of(q)) for run in r] for q, r in zip(asked, runs, strict=False)
    ]
    first = sum(r[0] for r in right) / len(right)
    assert abs(first - 0.5) < interval(0.5, 400, Z_TEST)
    assert any(len(set(r)) > 1 for r in right)  # the samples differ within a question


def test_table_critic_fixes_planted_steps_and_keeps_right_chains() -> None:
    table = Table.from_records(["city", "n"], [["c1", "1"], ["c2", "2"], ["c3", "3"]])
    plant = {f"q{i}": i % 2 == 0 for i in range(40)}
    critic = build_method("table_critic", critic_llm(plant), task="wikitq", rounds=2)
    first = build_method("chain_of_table", critic_llm(plant), task="wikitq")
    fixed = kept = planted = right = 0
    for question, wrong in plant.items():
        text = f"what is the city of {question}?"
        expected = [f"c{int(question[1:]) % 3 + 1}"]
        before = first.run(table, text).answer
        after = critic.run(table, text)
        assert (before == expected) is not wrong, (question, before)
        if wrong:
            planted += 1
            fixed += after.answer == expected
        else:
            right += 1
            kept += after.answer == before and len(after.trace.runs) == 1
    assert planted == right == 20
    assert fixed >= 0.95 * planted and kept == right


def test_the_critique_is_in_the_trace() -> None:
    table = Table.from_records(["city", "n"], [["c1", "1"], ["c2", "2"], ["c3", "3"]])
    prediction = build_method("table_critic", critic_llm({"q0": True}), task="wikitq").run(
        table, "what is the city of q0?"
    )
    kinds = [s.kind for s in prediction.trace.steps]
    assert kinds == ["input", "judge", "critic", "judge", "answer"]
    assert prediction.trace.steps[2].arguments == {"round": 1, "step": 1, "of": 2}
    assert [r.method for r in prediction.trace.runs] == [
        "chain_of_table", "chain_of_table refined from step 1 (round 1)",
    ]  # fmt: skip
    assert prediction.trace.steps[-1].table.rows() == [["c1", "1"]]


def test_requests_and_tokens_are_the_exact_sums_of_the_samples() -> None:
    asked = questions(6, 2)
    tracker = UsageTracker()
    llm = tracker.wrap(noisy_llm(asked, 0.5))
    method = build_method("mix_sc", llm, task="wikitq", k=2, symbolic="text_to_sql", workers=3)
    total = 0
    for q in asked:
        with tracker.scope(q.id):
            prediction = method.run(example_of(q))
        usage = prediction.trace.usage
        parts = [run.usage for run in prediction.trace.runs]
        assert usage.requests == sum(u.requests for u in parts) > 0
        assert usage.prompt_tokens == sum(u.prompt_tokens for u in parts)
        assert usage.completion_tokens == sum(u.completion_tokens for u in parts)
        # the model's own count of this question, across the sample threads
        seen = tracker.by_scope()[q.id]
        assert (seen.requests, seen.total_tokens) == (usage.requests, usage.total_tokens)
        total += usage.requests
    assert tracker.total().requests == total


class Offline:
    """A model that must not be asked: a replay answers everything from the cache."""

    name, model = "scripted", "noisy"

    def complete(self, request: Request) -> Completion:
        raise AssertionError(f"the replay asked the model: {request.call_site}")


class Enforcing(ScriptedLLM):
    """A scripted model that claims to enforce grammars (its replies are still checked)."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(constraints=frozenset({"grammar"}), after=True)


def test_a_run_whose_replies_broke_their_grammar_replays_exactly(tmp_path: Path) -> None:
    def reply(request: Request) -> str:
        if "could not be read" in request.as_text():  # a re-ask after a broken reply
            return ' "city" FROM t WHERE "city" = \'Rome\''
        if request.call_site == "baselines/text_to_sql":
            return "I would look at the table."  # breaks the SQL grammar: re-asked
        return "<END>"

    path = tmp_path / "cache.sqlite"
    table = Table.from_records(["city"], [["Oslo"], ["Rome"]])

    def run(llm: Any) -> dict[str, Any]:
        method = build_method("mix_sc", llm, task="wikitq", k=2, workers=1,
                              symbolic="text_to_sql")  # fmt: skip
        return method.run(table, "which city?").trace.to_dict()

    live = Enforcing(fn=reply)
    live.model = "noisy"
    recorded = run(CachedLLM(live, path))
    replayed = run(CachedLLM(EnforcingOffline(), path, offline=True))  # type: ignore[arg-type]
    steps = [s for r in recorded["runs"] for s in r["steps"]]
    assert sum(s["violations"] for s in steps) >= 2  # both symbolic paths broke it once
    strip = lambda t: [(r["answer"], r["usage"], [s["raw"] for s in r["steps"]])  # noqa: E731
                       for r in t["runs"]]  # fmt: skip
    assert strip(replayed) == strip(recorded)
    assert replayed["steps"][-1]["arguments"] == recorded["steps"][-1]["arguments"]


class EnforcingOffline(Offline):
    """The replay's stand-in for :class:`Enforcing`: the same requests, never asked."""

    @property
    def capabilities(self) -> Capabilities:
        return Enforcing(replies=[]).capabilities


def test_a_recorded_k_sample_run_replays_exactly(tmp_path: Path) -> None:
    asked = questions(8, 2, seed=5)
    live = noisy_llm(asked, 0.5)
    live.model = "noisy"
    path = tmp_path / "cache.sqlite"

    def run(llm: Any) -> list[dict[str, Any]]:
        method = build_method("self_consistency", llm, task="wikitq", k=5, workers=4)
        return [method.run(example_of(q)).trace.to_dict() for q in asked]

    recorded = run(CachedLLM(live, path))
    replayed = run(CachedLLM(Offline(), path, offline=True))  # type: ignore[arg-type]
    strip = lambda runs: [[(r["answer"], r["usage"]) for r in t["runs"]] for t in runs]  # noqa: E731
    assert strip(replayed) == strip(recorded)
    assert [t["steps"][-1]["arguments"] for t in replayed] == [
        t["steps"][-1]["arguments"] for t in recorded
    ]
    # the k samples of one prompt are k entries: five different seeds, five recordings
    answers = {tuple(map(str, r["answer"])) for t in recorded for r in t["runs"]}
    assert len(answers) > 5


def test_samples_run_concurrently_within_the_workers() -> None:
    running, peak, lock = [0], [0], threading.Lock()
    release = threading.Event()

    def reply(request: Request) -> str:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            if running[0] >= 3:
                release.set()
        release.wait(2)
        with lock:
            running[0] -= 1
        return "<END>" if "f_" in request.as_text() else " 1"

    method = build_method("self_consistency", ScriptedLLM(fn=reply), k=6, workers=3)
    prediction = method.run(Table.from_records(["a"], [["1"]]), "a?")
    assert peak[0] == 3 and prediction.answer == ["1"] and len(prediction.trace.runs) == 6


def test_a_failing_sample_is_kept_and_the_others_vote() -> None:
    calls = {"n": 0}

    def reply(request: Request) -> str:
        if request.seed == 1:
            raise RuntimeError("the sample's model broke")
        return "<END>" if "f_" in request.as_text() else " 2"

    method = build_method("self_consistency", ScriptedLLM(fn=reply), k=3, workers=1)
    prediction = method.run(Table.from_records(["a"], [["2"]]), "a?")
    assert prediction.answer == ["2"] and calls["n"] == 0
    assert [bool(r.error) for r in prediction.trace.runs] == [False, True, False]
    assert prediction.trace.steps[-1].arguments["abstained"] == [2]


def test_composed_options_are_checked() -> None:
    llm = ScriptedLLM(replies=[])
    for options in ({"k": 0}, {"k": "5"}, {"temperature": -1}, {"inner": "no_such"},
                    {"inner_options": {"no_such_setting": 1}}):  # fmt: skip
        with pytest.raises(Exception) as caught:
            build_method("self_consistency", llm, **options)
        assert isinstance(caught.value, ConfigurationError | LookupError), options
    with pytest.raises(ConfigurationError):
        build_method("table_critic", llm, rounds=0)
    with pytest.raises(ConfigurationError):
        build_method("mix_sc", llm, symbolic="")


def test_a_composed_trace_reads_back_and_shows_its_runs(capsys: pytest.CaptureFixture[str]) -> None:
    asked = questions(1, 2)
    method = build_method("self_consistency", noisy_llm(asked, 0.5), task="wikitq", k=3)
    prediction = method.run(example_of(asked[0]))
    again = Trace.from_dict(prediction.trace.to_dict())
    assert [r.answer for r in again.runs] == [r.answer for r in prediction.trace.runs]
    assert again.usage == prediction.trace.usage
    prediction.print()
    out = capsys.readouterr().out
    assert "Run 3 of 3: chain_of_table #3" in out and "Vote: " in out
    assert "── run 2: chain_of_table #2" in out
    page = prediction.to_html()
    assert "<h2>Runs</h2>" in page and "Vote: " in page
    assert all(f"<summary>Run {n}: chain_of_table #{n}" in page for n in (1, 2, 3))


def test_ask_and_eval_run_the_composed_methods(tmp_path: Path) -> None:
    import tablereason as tr
    from tablereason.evaluate.report.show import show
    from tablereason.evaluate.runner import run_evaluation

    asked = questions(3, 2)
    llm = noisy_llm(asked, 0.7)
    prediction = tr.ask(example_of(asked[0]).table, "which value is q0?", method="mix_sc", llm=llm,
                        k=2, symbolic="text_to_sql")  # fmt: skip
    assert isinstance(prediction, Prediction) and len(prediction.trace.runs) == 4
    method = build_method("self_consistency", llm, task="wikitq", k=3)
    examples = [example_of(q) for q in asked]
    summary = run_evaluation(method, examples, tmp_path / "run" / "results.jsonl", progress=False)
    assert summary.ran == 3 and summary.failed == 0
    out = tmp_path / "show.txt"
    with out.open("w") as file:
        show(tmp_path / "run", example="q1", file=file)
    assert "Run 3 of 3" in out.read_text() and "Vote:" in out.read_text()


def test_an_example_holds_live_tables_without_copying(monkeypatch: pytest.MonkeyPatch) -> None:
    table = Table.from_records(["a"], [["1"]])
    monkeypatch.setattr(Table, "to_records", lambda self: pytest.fail("rows were copied"))
    example = Example.from_table(table, "what is a?")
    assert example.table is table and example.table_source is None
    two = Example.from_table({"t1": table, "t2": table}, "how many?")
    assert two.several_tables and list(two.tables) == ["t1", "t2"] and two.table is None
    with pytest.raises(ConfigurationError, match="answers over one table"):
        build_method("chain_of_table", ScriptedLLM(replies=[])).run(two)


def test_eval_carries_examples_over_several_live_tables(tmp_path: Path) -> None:
    from tablereason.evaluate.runner import run_evaluation

    flights = Table.from_records(["code", "to"], [["F1", "Oslo"], ["F2", "Rome"]])
    airlines = Table.from_records(["code", "name"], [["F1", "Nordic"], ["F2", "Roma Air"]])
    tables = {"flights": flights, "airlines": airlines}
    example = Example.from_table(tables, "which airline flies to Rome?", answer=["Roma Air"])
    sql = ' SELECT a."name" FROM flights f JOIN airlines a ON f."code" = a."code"'
    sql += " WHERE f.\"to\" = 'Rome';"
    method = build_method("text_to_sql", ScriptedLLM(replies=[sql]))
    summary = run_evaluation(method, [example], tmp_path / "r.jsonl", progress=False)
    assert summary.ran == 1 and summary.failed == 0
    from tablereason.evaluate.results import read_results

    _, records, _ = read_results(tmp_path / "r.jsonl")
    assert records[0]["answer"] == ["Roma Air"]


@pytest.mark.parametrize(
    ("method", "options"),
    [("self_consistency", {"k": 2}), ("table_critic", {}),
     ("mix_sc", {"k": 1, "symbolic": "text_to_sql"})],
)  # fmt: skip
def test_a_run_identity_holds_the_inner_methods_prompts(
    method: str, options: dict[str, Any]
) -> None:
    """A composed run's identity names its inner prompts, so resuming after they change fails."""
    from tablereason.evaluate.results import prompt_hashes

    built = build_method(method, ScriptedLLM(fn=lambda request: ""), task="wikitq", **options)
    hashes = prompt_hashes(built.config())
    inner = build_method("chain_of_table", ScriptedLLM(fn=lambda request: ""), task="wikitq")
    assert inner.config()["prompts"].items() <= hashes.items()
    assert built.config().get("prompts", {}).items() <= hashes.items()
