"""Evaluation results keep each answer's checks; the report counts the warnings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_report import LIMIT, scripted

from tablereason.datasets import load_dataset
from tablereason.evaluate import METRICS
from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
from tablereason.evaluate.report import build_report, summarize
from tablereason.evaluate.report.warned import summarize_warnings
from tablereason.evaluate.result_lines import ResultFileError
from tablereason.evaluate.results import read_results
from tablereason.evaluate.runner import run_evaluation
from tablereason.trace import Prediction


@pytest.fixture
def run_folder(fixture_data: Path, tmp_path: Path) -> Path:
    spec = BenchmarkSpec(
        dataset="wikitq", out=str(tmp_path / "run"), limit=LIMIT, data_dir=str(fixture_data)
    )
    run_benchmark(spec, llm=scripted(), progress=False)
    return Path(spec.out)


def test_every_record_keeps_its_value_evidence_and_warnings(run_folder: Path) -> None:
    _, records, _ = read_results(run_folder / "results.jsonl")
    answered = [r for r in records if r["answer"]]
    assert answered and all({"value", "evidence", "warnings"} <= set(r) for r in records)
    for record in answered:
        assert record["value"]["type"] in ("number", "date", "text", "list")
        assert record["evidence"]["status"] in ("found", "none")
        # the evidence cites cells of the example's own table
        for cell in record["evidence"]["cells"]:
            table = record["trace"]["steps"][0]["table"]
            assert (
                table["rows"][cell["row"]][table["header"].index(cell["column"])] == cell["value"]
            )


def test_scores_read_the_answer_not_its_value(run_folder: Path, fixture_data: Path) -> None:
    _, records, _ = read_results(run_folder / "results.jsonl")
    examples = {e.id: e for e in load_dataset("wikitq", "test", data_dir=fixture_data)}
    metric = METRICS.get("wikitq_accuracy")
    for record in records:
        if record["answer"]:
            want = metric.score_example(record["answer"], examples[str(record["id"])])
            assert record["score"] == pytest.approx(want)


def test_a_checked_value_never_changes_a_score(tmp_path: Path, fixture_data: Path) -> None:
    example = load_dataset("wikitq", "test", data_dir=fixture_data, limit=1)[0]
    gold = example.answers[0]
    # "gold." types as gold, but the score is the official one of the raw answer.
    run_evaluation(lambda _: Prediction(answer=[gold + " ."]), [example], tmp_path / "r.jsonl",
                   metric="wikitq_accuracy")  # fmt: skip
    _, [record], _ = read_results(tmp_path / "r.jsonl")
    metric = METRICS.get("wikitq_accuracy")
    assert record["score"] == metric.score_example([gold + " ."], example)
    assert record["value"]["text"] == gold


def test_the_report_counts_warnings_and_splits_accuracy(run_folder: Path) -> None:
    _, records, _ = read_results(run_folder / "results.jsonl")
    report = summarize(run_folder)
    warned = [r for r in records if r["warnings"]]
    codes: dict[str, int] = {}
    for record in warned:
        for code in {w["code"] for w in record["warnings"]}:
            codes[code] = codes.get(code, 0) + 1
    assert warned, "the scripted run has warned answers (an outage, answers from row 1)"
    assert report.warnings.by_code == dict(sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])))
    assert report.warnings.warned == len(warned) and report.warnings.checked == len(records)
    clean = [float(r["score"]) for r in records if not r["warnings"]]
    assert report.warnings.accuracy_unwarned == pytest.approx(sum(clean) / len(clean))
    text = report.to_text()
    assert f"warnings: {len(warned)} of {len(records)} answers" in text
    assert "without the warned ones" in text
    page = Path(build_report(run_folder).html or "").read_text(encoding="utf-8")
    assert "<h2>Warnings</h2>" in page and "without the warned answers" in page


def test_example_pages_mark_the_evidence(run_folder: Path) -> None:
    build_report(run_folder)
    _, records, _ = read_results(run_folder / "results.jsonl")
    found = [r for r in records if r["evidence"]["status"] == "found"]
    assert found
    from tablereason.evaluate.report import page_name

    page = (run_folder / "examples" / page_name(str(found[0]["id"]))).read_text(encoding="utf-8")
    assert re.search(r"<td class='evidence'>", page)
    assert "Evidence: " in page


def test_results_from_before_the_checks_are_reported_without_warnings() -> None:
    old = [{"score": 1.0}, {"score": 0.0}]
    summary = summarize_warnings(old)
    assert summary.checked == 0 and summary.to_text() == [] and summary.to_html() == ""


def test_a_planted_warnings_field_is_refused(run_folder: Path) -> None:
    path = run_folder / "results.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["warnings"] = ["not an object"]
    path.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(ResultFileError, match="warnings"):
        read_results(path)
