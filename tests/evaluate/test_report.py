"""Benchmark runs (resume, offline replay, shards) and the report built from their results."""

from __future__ import annotations

import re
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tablereason.datasets import load_dataset
from tablereason.errors import LLMError
from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
from tablereason.evaluate.report import SIZE_BINS, build_report, page_name, summarize
from tablereason.evaluate.results import read_results
from tablereason.evaluate.runner import score_results
from tablereason.llm import Request, ScriptedLLM

LIMIT = 12
FAILING = "nu-25"  # the model fails on this example's question


GOLD: dict[str, list[str]] = {}  # question -> gold answer, for the chained questions


def question_of(prompt: str) -> str:
    found = re.findall(r"Question: (.*)", prompt)
    return found[-1] if found else ""


def chained(question: str) -> bool:
    """Half the questions get a one-operation chain (select row 1), the rest none."""
    return zlib.crc32(question.encode()) % 2 == 0


def reply(request: Request) -> str:
    prompt = request.as_text()
    tail = prompt.rstrip()
    question = question_of(prompt)
    if tail.endswith("Function Chain:"):
        if "amanda on the judging panel" in question:
            raise LLMError("scripted outage")
        return " f_select_row(row 1) -> <END>" if chained(question) else " <END>"
    if tail.endswith("f_row(["):
        return "row 1"
    if tail.endswith("The answer is:"):
        if chained(question) and question in GOLD:
            return " " + " | ".join(GOLD[question])
        for line in prompt.splitlines()[::-1]:
            if line.startswith("row 1 : "):
                return " " + line[len("row 1 : ") :].split(" | ")[0]
    return "<END>"


def scripted(model: str = "gpt-4") -> ScriptedLLM:
    return ScriptedLLM(fn=reply, model=model)


def never() -> ScriptedLLM:
    def fail(request: Request) -> str:
        raise AssertionError("the model must not be called")

    return ScriptedLLM(fn=fail, model="gpt-4")


@pytest.fixture
def spec(fixture_data: Path, tmp_path: Path) -> BenchmarkSpec:
    for example in load_dataset("wikitq", "test", data_dir=fixture_data, limit=LIMIT):
        GOLD[example.question] = example.answers
    return BenchmarkSpec(
        dataset="wikitq",
        out=str(tmp_path / "run"),
        limit=LIMIT,
        data_dir=str(fixture_data),
        concurrency=3,
    )


def size_label(rows: int) -> str:
    for bound, label in SIZE_BINS:
        if rows <= bound:
            return label
    return f">{SIZE_BINS[-1][0]}"


def test_report_agrees_with_the_metric_and_the_model_usage(spec: BenchmarkSpec) -> None:
    llm = scripted()
    summary = run_benchmark(spec, llm=llm, progress=False)
    assert (summary.total, summary.ran, summary.failed) == (LIMIT, LIMIT, 1)
    examples = load_dataset("wikitq", "test", data_dir=spec.data_dir, limit=LIMIT)
    expected = score_results(summary.path, examples)

    report = build_report(spec.out)
    assert (report.total, report.done, report.failed) == (LIMIT, LIMIT, 1)
    assert 0 < expected.score < 1
    assert report.score == pytest.approx(expected.score)
    assert report.correct == pytest.approx(expected.correct)
    assert {b.label: (b.n, b.correct) for b in report.breakdown} == {
        g: (s.n, pytest.approx(s.correct)) for g, s in expected.breakdown.items()
    }
    assert [f.id for f in report.failures] == [FAILING]
    assert "scripted outage" in (report.failures[0].error or "")

    # tokens and cost: what the scripted model counted, priced as gpt-4 (3e-5 per token)
    prompt_words = sum(
        len(r.as_text().split()) for r in llm.requests if "amanda" not in question_of(r.as_text())
    )
    assert report.prompt_tokens == prompt_words
    tokens = report.prompt_tokens + report.completion_tokens
    assert report.cost == pytest.approx(tokens * 3e-5)

    # the paper's analyses: chain length and table size
    questions = {e.id: e.question for e in examples}
    want_chain: dict[str, int] = {}
    for example in examples:
        label = "1" if chained(example.question) and example.id != FAILING else "0"
        want_chain[label] = want_chain.get(label, 0) + 1
    assert {b.label: b.n for b in report.by_chain_length} == want_chain
    want_size: dict[str, int] = {}
    for example in examples:
        label = size_label(example.table.num_rows)
        want_size[label] = want_size.get(label, 0) + 1
    assert {b.label: b.n for b in report.by_table_size} == want_size
    assert sum(b.correct for b in report.by_chain_length) == pytest.approx(report.correct)
    by_length = {b.label: b.accuracy for b in report.by_chain_length}
    assert by_length["1"] == 1.0 and by_length["0"] < 1.0  # chained ones answered with gold

    # slowest first; every example has a page, linked from the report
    durations = [r.duration_s for r in report.slowest]
    assert durations == sorted(durations, reverse=True) and len(durations) == 10
    html = Path(report.html or "").read_text(encoding="utf-8")
    links = set(re.findall(r"href='(examples/[^']+)'", html))
    assert links == {f"examples/{page_name(i)}" for i in questions}
    for link in links:
        page = (Path(spec.out) / link).read_text(encoding="utf-8")
        assert "href='../report.html'" in page and "<table class='data'>" in page
    assert html.count("<svg") == 2
    assert "Accuracy by chain length" in html and "Accuracy by table size" in html
    assert f"{100 * expected.score:.2f}%" in report.to_text()

    # every run: accuracy with its 95% interval, and what a correct answer cost
    low, high = report.interval
    assert 0 <= low < report.score < high <= 1
    assert f"95% interval {100 * low:.1f}-{100 * high:.1f}%" in report.to_text()
    per = f"{report.requests / report.correct:.1f} requests, "
    per += f"{tokens / report.correct:,.0f} tokens"
    assert f"per correct answer: {per}" in report.to_text() and per in html
    assert report.interval_text() in html


def test_rerun_resumes_and_cache_replays_offline(spec: BenchmarkSpec) -> None:
    first = run_benchmark(spec, llm=scripted(), progress=False)
    again = run_benchmark(spec, llm=never(), progress=False)
    assert (again.resumed, again.ran) == (LIMIT, 0)
    _, before, _ = read_results(first.path)
    Path(first.path).unlink()
    offline = spec.model_copy(update={"offline": True})
    replay = run_benchmark(offline, llm=never(), progress=False)
    _, after, _ = read_results(replay.path)
    answers = {r["id"]: (r["answer"], bool(r["error"])) for r in before}
    assert {r["id"]: (r["answer"], bool(r["error"])) for r in after} == answers
    assert replay.result is not None and first.result is not None
    assert replay.result.score == first.result.score


def test_sharded_run_on_an_executor_equals_a_plain_run(spec: BenchmarkSpec, tmp_path: Path) -> None:
    plain = run_benchmark(spec, llm=scripted(), progress=False)
    sharded_spec = spec.model_copy(update={"out": str(tmp_path / "sharded")})
    with ThreadPoolExecutor(max_workers=3) as pool:
        sharded = run_benchmark(sharded_spec, llm=scripted(), shards=3, executor=pool)
    assert sharded.path == Path(sharded_spec.out) / "results.jsonl"
    assert len(list((Path(sharded_spec.out) / "shards").glob("*.jsonl"))) == 3
    _, a, _ = read_results(plain.path)
    _, b, _ = read_results(sharded.path)
    assert sorted((r["id"], str(r["answer"])) for r in a) == sorted(
        (r["id"], str(r["answer"])) for r in b
    )
    assert sharded.total == LIMIT and sharded.failed == 1
    assert sharded.result is not None and plain.result is not None
    assert sharded.result.score == pytest.approx(plain.result.score)
    assert summarize(sharded.path).score == pytest.approx(plain.result.score)


def test_summary_of_a_run_without_traces_has_no_pages(spec: BenchmarkSpec) -> None:
    quiet = spec.model_copy(update={"traces": False, "limit": 3})
    run_benchmark(quiet, llm=scripted(), progress=False)
    report = build_report(quiet.out)
    assert report.done == 3 and all(r.page is None for r in report.examples)
    assert not list((Path(quiet.out) / "examples").glob("*.html"))
    # without traces the record's own fields still give chain length and table size
    assert sum(b.n for b in report.by_chain_length) == 3
    assert sum(b.n for b in report.by_table_size) == 3


def test_a_composed_run_refuses_to_resume_after_an_inner_prompt_changed(
    spec: BenchmarkSpec,
) -> None:
    """The run identity holds self-consistency's inner chain prompts, not only its own."""
    import json

    from tablereason.errors import ConfigurationError

    composed = spec.model_copy(update={"method": "self_consistency", "options": {"k": 1}})
    first = run_benchmark(composed, llm=scripted(), progress=False)
    lines = Path(first.path).read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert "chain_of_table/efficient/plan" in header["prompt_hashes"]
    header["prompt_hashes"]["chain_of_table/efficient/plan"] = "0" * 12
    Path(first.path).write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", "utf-8")
    with pytest.raises(ConfigurationError, match="chain_of_table/efficient/plan"):
        run_benchmark(composed, llm=never(), progress=False)
