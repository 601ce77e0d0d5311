"""Raw answers: kept on predictions, written to result records, read by the published
TabMWP scoring, and reported beside the default score."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support.chameleon_replies import routed

from tablereason.datasets import Example
from tablereason.datasets.tabmwp import read_tabmwp
from tablereason.evaluate import METRICS
from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
from tablereason.evaluate.report import render_report, summarize
from tablereason.evaluate.runner import run_evaluation, score_results
from tablereason.metrics.scorers import MetricResult, raw_prediction_answer
from tablereason.trace import Prediction

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chameleon"
PAPER = "tabmwp_accuracy_paper"


def _examples() -> dict[str, Example]:
    return {ex.id: ex for ex in read_tabmwp(FIXTURES / "tabmwp", "test")}


def _records(path: Path) -> dict[str, dict]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {r["id"]: r for r in lines if r.get("type") == "result"}


def test_prediction_raw_answer_is_optional() -> None:
    assert Prediction(answer="no", raw_answer=False).has_raw_answer
    assert Prediction(answer="", raw_answer=None).has_raw_answer  # set, to "no answer"
    assert not Prediction(answer="no").has_raw_answer
    assert raw_prediction_answer(Prediction(answer="no", raw_answer=False)) is False
    assert raw_prediction_answer(Prediction(answer="no")) == "no"
    assert raw_prediction_answer(Prediction(answer="no", raw_answer=1.0, error="x")) is None
    assert raw_prediction_answer({"answer": "no", "raw_answer": None}) is None
    assert raw_prediction_answer({"answer": "no"}) == "no"


def test_runner_records_raw_answers_and_reports_the_published_score(tmp_path: Path) -> None:
    examples = _examples()
    chosen = [examples["16"], examples["416"]]  # gold 84; gold "no" of [yes, no]
    raw = {"16": ("84.04", 84.04), "416": ("false", False)}

    def method(example: Example) -> Prediction:
        answer, value = raw[example.id]
        return Prediction(answer=answer, raw_answer=value)

    out = tmp_path / "run.jsonl"
    summary = run_evaluation(method, chosen, out, metric="tabmwp_accuracy", progress=False)
    records = _records(out)
    assert records["16"]["raw_answer"] == 84.04 and records["416"]["raw_answer"] is False
    # Default scoring: 84.04 is not 84; "false" names the option "no".
    assert summary.result is not None and summary.result.score == 0.5
    assert [records[i]["score"] for i in ("16", "416")] == [0.0, 1.0]
    # Published scoring of the raw values: 84.04 rounds to 84.0; False means "no".
    assert summary.result.companions == {PAPER: 1.0}
    assert summary.result.headline() == "tabmwp_accuracy 50.00% · tabmwp_accuracy_paper 100.00%"
    rescored = score_results(out, chosen)
    assert rescored.companions == {PAPER: 1.0}
    assert score_results(out, chosen, metric=PAPER).score == 1.0
    # Each record carries the companion score, so reports and merges show it too.
    assert [records[i]["companion_scores"] for i in ("16", "416")] == [{PAPER: 1.0}] * 2
    report = summarize(out)
    assert report.companions == {PAPER: 1.0}
    assert "tabmwp_accuracy_paper: 100.00%" in report.to_text()
    assert "100.00% tabmwp_accuracy_paper" in render_report(report)
    paper_run = run_evaluation(method, chosen, tmp_path / "paper.jsonl", metric=PAPER,
                               progress=False)  # fmt: skip
    assert [r["score"] for r in _records(tmp_path / "paper.jsonl").values()] == [1.0, 1.0]
    assert paper_run.result is not None and paper_run.result.score == 1.0


def test_records_without_raw_answers_fall_back_to_the_text(tmp_path: Path) -> None:
    examples = _examples()
    chosen = [examples["16"], examples["416"]]
    text = {"16": "84.04", "416": "false"}
    out = tmp_path / "run.jsonl"
    summary = run_evaluation(lambda ex: Prediction(answer=text[ex.id]), chosen, out,
                             metric="tabmwp_accuracy", progress=False)  # fmt: skip
    assert all("raw_answer" not in r for r in _records(out).values())
    # The text "false" matches no option, so the published rule picks option 0, "yes".
    assert summary.result is not None and summary.result.companions == {PAPER: 0.5}


def test_published_free_hit_and_failures_in_records() -> None:
    example = Example(dataset="tabmwp", id="m", question="?", answer="yes", choices=["yes", "no"],
                      metadata={"ans_type": "boolean_text", "ques_type": "multi_choice",
                                "grade": 3})  # fmt: skip
    metric = METRICS.get(PAPER)
    unanswered = {"m": {"answer": "", "raw_answer": None, "error": None}}
    assert metric(unanswered, [example]).score == 1.0  # the published first-option rule
    failed = {"m": {"answer": "", "error": "the model failed"}}
    assert metric(failed, [example]).score == 0.0
    assert metric({"m": Prediction(answer="", raw_answer=None)}, [example]).score == 1.0
    assert metric({"m": Prediction(error="boom")}, [example]).score == 0.0
    assert metric({}, [example]).score == 0.0


def test_companions_only_where_declared() -> None:
    example = Example(dataset="tabfact", id="a", question="q", answer="yes", metadata={"label": 1})
    result = METRICS.get("tabfact_accuracy")({"a": "yes"}, [example])
    assert result.companions == {} and result.headline() == "tabfact_accuracy 100.00%"
    assert MetricResult(metric="x", score=0.25, n=4, correct=1).headline() == "x 25.00%"


def test_chameleon_run_through_the_harness_keeps_the_raw_value(tmp_path: Path) -> None:
    llm = routed(solution_generator=["The mean is 84.04. The answer is 84.04."])
    spec = BenchmarkSpec(dataset="tabmwp", out=str(tmp_path / "run"), data_dir=str(FIXTURES),
                         method="chameleon_cot", limit=1, concurrency=1)  # fmt: skip
    summary = run_benchmark(spec, llm=llm, progress=False)
    (record,) = _records(spec.results_path()).values()
    assert record["id"] == "16" and record["answer"] == "84.04"
    assert record["raw_answer"] == 84.04
    assert summary.result is not None and summary.result.score == 0.0
    assert summary.result.companions == {PAPER: 1.0}


def test_sharded_runs_keep_the_companion_score(tmp_path: Path) -> None:
    llm = routed(solution_generator=["The mean is 84.04. The answer is 84.04."] * 4)
    spec = BenchmarkSpec(dataset="tabmwp", out=str(tmp_path / "run"), data_dir=str(FIXTURES),
                         method="chameleon_cot", limit=2, concurrency=1)  # fmt: skip
    with ThreadPoolExecutor(2) as pool:
        summary = run_benchmark(spec, llm=llm, shards=2, executor=pool, progress=False)
    assert summary.result is not None and summary.total == 2
    records = _records(spec.results_path())
    expected = sum(r["companion_scores"][PAPER] for r in records.values()) / 2
    assert summary.result.companions == {PAPER: expected}
    assert summarize(spec.results_path()).companions == {PAPER: expected}
