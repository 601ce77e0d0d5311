"""ScienceQA modules with a scripted model and fake tools."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from support.chameleon_replies import routed

from tablereason.datasets import load_dataset
from tablereason.datasets.example import Example
from tablereason.methods.chameleon import Chameleon
from tablereason.methods.chameleon.answers import choose_scienceqa
from tablereason.methods.chameleon.inventory import MODULES
from tablereason.methods.chameleon.scienceqa_modules import RUNNERS
from tablereason.methods.chameleon.session import ChainRun


class FakeSearch:
    name = "Search"
    description = "fake search"

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.inputs: list[str] = []

    def __call__(self, text: str) -> str:
        self.inputs.append(text)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def make_run(example: Example, llm: Any, profile: str = "default",
             tools: dict[str, Any] | None = None) -> ChainRun:  # fmt: skip
    method = Chameleon(llm, "scienceqa", profile, tools=tools)
    return ChainRun(llm, method.settings, method.make_cache(example), tools=method.tools)


def run_module(run: ChainRun, name: str) -> set[str]:
    before = run.cache.state()
    RUNNERS[name](run)
    after = run.cache.state()
    changed = {k for k in before if before[k] != after[k]}
    assert changed <= set(MODULES.get(name).update_cache), (name, changed)
    return changed


def test_question_text_and_metadata(scienceqa_examples: dict[str, Example]) -> None:
    run = make_run(scienceqa_examples["78"], routed())
    assert run.cache.question == (
        "Is the following statement about our solar system true or false?\n"
        "The largest planet is made mainly of ice.\n\n"
        "Context: Use the data to answer the question below.\n\n"
        "Options: (A) true (B) false"
    )
    md = {k: v for k, v in run.cache.metadata.items() if k != "image_file"}
    assert md == {"has_image": True, "grade": 6, "subject": "natural science",
                  "topic": "earth-science", "category": "Astronomy",
                  "skill": "Analyze data to compare properties of planets"}  # fmt: skip
    no_context = make_run(scienceqa_examples["11"], routed()).cache.question
    assert "Context:" not in no_context


def test_query_then_search(scienceqa_examples: dict[str, Example]) -> None:
    search = FakeSearch("New Hampshire was one of the Thirteen Colonies.")
    llm = routed(query_generator=['"thirteen colonies map"\nmore text'])
    run = make_run(scienceqa_examples["11"], llm, tools={"search": search})
    assert run_module(run, "query_generator") == {"query"}
    assert run.cache.query == "thirteen colonies map"
    assert run_module(run, "search") == {"evidence"}
    assert search.inputs == ["thirteen colonies map"]
    assert run.cache.evidence == "Search results: New Hampshire was one of the Thirteen Colonies."


def test_search_without_query_uses_question(scienceqa_examples: dict[str, Example]) -> None:
    search = FakeSearch("x")
    run = make_run(scienceqa_examples["11"], routed(), tools={"search": search})
    run_module(run, "search")
    assert search.inputs == ["What is the name of the colony shown?"]


@pytest.mark.parametrize("failure", [RuntimeError("down"), "No evidence found: nothing"])
def test_search_failure_is_recorded_not_raised(scienceqa_examples: dict[str, Example],
                                               failure: Any) -> None:  # fmt: skip
    run = make_run(scienceqa_examples["11"], routed(), tools={"search": FakeSearch(failure)})
    assert run_module(run, "search") == set()
    assert run.trace.steps[-1].error


@pytest.fixture(scope="module")
def real_scienceqa(fixture_data: Path) -> dict[str, Example]:
    return {e.id: e for e in load_dataset("scienceqa", "test", data_dir=fixture_data)}


def test_default_search_reads_other_skills_lectures(real_scienceqa: dict[str, Example]) -> None:
    example = real_scienceqa["693"]  # skill: Identify magnets that attract or repel
    llm = routed(query_generator=["magnets attract repel"],
                 solution_generator=["Opposite poles attract. The answer is A."])  # fmt: skip
    run = make_run(example, llm)
    assert run.cache.data_folder.endswith("scienceqa") and run.cache.lecture
    run_module(run, "query_generator")
    assert run_module(run, "search") == {"evidence"}
    step = run.trace.steps[-1]
    assert step.error is None and step.arguments["input"] == "magnets attract repel"
    found = step.arguments["output"]
    # As the published module: the query comes from the cache, the result goes back into it.
    assert run.cache.records["search:input"] == "magnets attract repel"
    assert run.cache.records["search:output"] == found
    assert run.cache.evidence == f"Search results: {found}"
    assert found.count("\n") >= 2 and "magnetic force" in found  # 3 passages, another skill
    own = {line.strip() for line in example.metadata["lecture"].splitlines() if line.strip()}
    assert not own & {line.strip() for line in found.splitlines()}
    run_module(run, "solution_generator")
    assert f"Search results: {found}" in llm.requests[-1].as_text()


def test_paper_search_shows_the_published_response_form(
    real_scienceqa: dict[str, Example],
) -> None:
    run = make_run(real_scienceqa["693"], routed(), profile="paper")
    run.cache.query = "magnets attract repel"
    assert run_module(run, "search") == {"evidence"}
    found = run.cache.records["search:output"]
    passages = ast.literal_eval(found)  # a list literal of one-line snippets, as published
    assert isinstance(passages, list) and 1 <= len(passages) <= run.settings.search_count
    assert all(isinstance(p, str) and "\n" not in p for p in passages)
    assert run.cache.evidence.startswith(f"Bing search response: {found}")


def test_default_search_count_follows_the_setting(real_scienceqa: dict[str, Example]) -> None:
    method = Chameleon(routed(), "scienceqa", search_count=1)
    run = ChainRun(method.llm, method.settings, method.make_cache(real_scienceqa["693"]))
    run.cache.query = "magnets attract repel"
    run_module(run, "search")
    assert "\n" not in run.cache.records["search:output"]


def test_default_search_without_data_says_so(scienceqa_examples: dict[str, Example],
                                             tmp_path: Path) -> None:  # fmt: skip
    example = scienceqa_examples["93"]
    moved = example.model_copy(
        update={"metadata": {**example.metadata, "data_folder": str(tmp_path)}}
    )
    run = make_run(moved, routed())
    assert run_module(run, "search") == set()
    error = run.trace.steps[-1].error or ""
    assert error.startswith("no local search corpus: no ScienceQA problems.json under")
    assert "search_corpus" in error and run.cache.evidence == ""


def test_search_corpus_setting_reads_a_folder(scienceqa_examples: dict[str, Example],
                                             tmp_path: Path) -> None:  # fmt: skip
    (tmp_path / "Heredity.txt").write_text("Inherited traits are passed from parents.")
    (tmp_path / "Weather.txt").write_text("Rain falls from clouds.")
    method = Chameleon(routed(), "scienceqa", search_corpus=str(tmp_path))
    run = ChainRun(method.llm, method.settings, method.make_cache(scienceqa_examples["93"]))
    run.cache.query = "inherited traits parents"
    run_module(run, "search")
    assert run.cache.evidence == "Search results: Inherited traits are passed from parents."


def test_captioner_and_ocr_read_the_dataset_files(scienceqa_examples: dict[str, Example]) -> None:
    run = make_run(scienceqa_examples["23"], routed())
    run_module(run, "image_captioner")
    assert run.cache.evidence == "Image caption: A painting of a horse and a cow."
    run_module(run, "text_detector")
    detected = run.cache.evidence.split("\n\n")[1]
    assert detected.startswith("Detected text in the image: grizzly bear, barren-ground")


def test_paper_profile_ocr_is_the_published_text(scienceqa_examples: dict[str, Example]) -> None:
    example = scienceqa_examples["23"]
    raw = ast.literal_eval(example.metadata["ocr"])
    published = repr([(t[0], t[1]) for t in raw])  # the published text detector's output
    paper = make_run(example, routed(), profile="paper")
    run_module(paper, "text_detector")
    assert paper.cache.evidence == f"Detected text in the image: {published}"
    assert paper.cache.evidence.startswith(
        "Detected text in the image: [([[411, 19], [493, 19], [493, 37], [411, 37]], "
        "'grizzly bear'), "
    )
    positions = make_run(example, routed())
    positions.settings = positions.settings.model_copy(update={"ocr_format": "positions"})
    run_module(positions, "text_detector")
    assert positions.cache.evidence.startswith(
        "Detected text in the image: 'grizzly bear' at (411, 19); "
    )


def test_image_modules_without_image_or_text(scienceqa_examples: dict[str, Example]) -> None:
    run = make_run(scienceqa_examples["93"], routed())
    assert run_module(run, "image_captioner") == set()
    assert run_module(run, "text_detector") == set()
    assert "no image" in (run.trace.steps[-1].note or "")
    run = make_run(scienceqa_examples["11"], routed())  # image, but OCR found nothing
    assert run_module(run, "text_detector") == set()
    assert run.trace.steps[-1].error


def test_custom_captioner_tool(scienceqa_examples: dict[str, Example]) -> None:
    captioner = FakeSearch("a map of New England")
    run = make_run(scienceqa_examples["11"], routed(), tools={"captioner": captioner})
    run_module(run, "image_captioner")
    assert captioner.inputs[0].endswith("11/image.png")
    assert run.cache.evidence == "Image caption: a map of New England"


def test_knowledge_then_solution_sees_evidence(scienceqa_examples: dict[str, Example]) -> None:
    llm = routed(knowledge_retrieval=["- Skills learned by practice are acquired."],
                 solution_generator=["Knitting is learned. The answer is A."])  # fmt: skip
    run = make_run(scienceqa_examples["93"], llm)
    assert run_module(run, "knowledge_retrieval") == {"evidence"}
    assert run_module(run, "solution_generator") == {"solution"}
    assert "Knowledge:\n- Skills learned" in llm.requests[1].as_text()
    assert run_module(run, "answer_generator") == {"answer", "raw_answer"}
    assert run.cache.answer == "acquired"


def test_solution_retries_until_a_letter(scienceqa_examples: dict[str, Example]) -> None:
    llm = routed(solution_generator=["It is learned.", "The answer is A."])
    run = make_run(scienceqa_examples["93"], llm)
    run_module(run, "solution_generator")
    assert len(llm.requests) == 2
    assert [r.temperature for r in llm.requests] == [0.0, 0.3]


@pytest.mark.parametrize(("solution", "paper", "default"), [
    ("The answer is B.", "inherited", "inherited"),
    ("the answer is (a).", "acquired", "acquired"),  # paper: no capital letter, similarity
    ("The answer is Apple", "acquired", ""),  # paper reads the letter A
    ("The answer is E.", "acquired", ""),  # out of range
    ("I think it is inherited", "inherited", "inherited"),
    ("Is it inherited or acquired?", "inherited", ""),  # both named: no answer
    ("I think it is inherited.", "acquired", "inherited"),  # paper: "inherited." differs
    ("The answer is A. No wait, the answer is B.", "acquired", "inherited"),
    (None, "acquired", ""),  # paper: no solution -> first option
])  # fmt: skip
def test_choice_matching(solution: str | None, paper: str, default: str) -> None:
    choices = ["acquired", "inherited"]
    assert choose_scienceqa(solution, choices, paper=True) == paper
    assert choose_scienceqa(solution, choices, paper=False) == default


def test_answer_named_by_text_in_default(scienceqa_examples: dict[str, Example]) -> None:
    run = make_run(scienceqa_examples["93"], routed())
    run.cache.solution = "So the answer is inherited."
    run_module(run, "answer_generator")
    assert run.cache.answer == "inherited"
