"""ReWOO and ReAct with the embedded Gemma 3 270M model on real HotpotQA questions.

Every question must produce a string answer and a full trace, with no exception.
Accuracy is not checked (a 270M model is weak).

    .venv/bin/python -m pytest tests/rewoo/test_rewoo_real_model.py -m real_model
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tablereason.datasets import Example, load_dataset
from tablereason.methods.react import ReAct
from tablereason.methods.rewoo import ReWOO
from tablereason.methods.tool_tasks import DEMO_IDS
from tablereason.tools import DocStore, LLMTool, WikiSearch, search_tools
from tablereason.trace import Prediction


@pytest.fixture(scope="module")
def local_llm() -> Any:
    from tablereason.llm import LocalLlama

    llm = LocalLlama(n_ctx=8192)
    llm.load()
    return llm


@pytest.fixture(scope="module")
def hotpot(fixture_data: Path) -> tuple[list[Example], DocStore]:
    examples = load_dataset("hotpotqa", "dev", data_dir=fixture_data)
    store = DocStore.from_examples(examples)
    return [e for e in examples if e.id not in DEMO_IDS["hotpotqa"]], store


def _check(prediction: Prediction, first_kind: str) -> None:
    assert prediction.error is None, prediction.error
    assert isinstance(prediction.answer, str)
    steps = prediction.trace.steps
    assert steps and steps[0].kind == first_kind and steps[0].raw
    usage = prediction.trace.usage
    assert usage.requests >= 2 and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    for step in steps:
        if step.kind == "tool":
            assert step.raw and step.raw[0].strip()


@pytest.mark.real_model
def test_rewoo_two_hotpotqa_questions(local_llm: Any, hotpot: Any) -> None:
    examples, store = hotpot
    # A shorter plan budget keeps this CI test under a minute on two shared cores.
    method = ReWOO(local_llm, tools=[WikiSearch(store), LLMTool(local_llm)], planner_max_tokens=128)
    for example in examples[:2]:
        prediction = method.run(example)
        _check(prediction, "plan")
        assert prediction.trace.steps[-1].kind == "answer"


@pytest.mark.real_model
@pytest.mark.slow
def test_ten_questions_both_methods(local_llm: Any, hotpot: Any) -> None:
    examples, store = hotpot
    rewoo = ReWOO(local_llm, tools=[WikiSearch(store), LLMTool(local_llm)])
    react = ReAct(local_llm, tools=list(search_tools(store, names=("Search", "Lookup"))))
    for example in examples[:10]:
        _check(rewoo.run(example), "plan")
        _check(react.run(example), "step")


@pytest.mark.real_model
@pytest.mark.slow
def test_scienceqa_image_questions_both_methods(local_llm: Any, fixture_data: Path) -> None:
    from tablereason.tools import OCR, ImageCaptioner, ScienceQACaptions, ScienceQAOCR

    examples = load_dataset("scienceqa", "test", data_dir=fixture_data)
    with_images = [e for e in examples if e.metadata.get("image_file")][:2]
    tools = [
        ImageCaptioner(ScienceQACaptions(fixture_data)),
        OCR(ScienceQAOCR(fixture_data)),
        LLMTool(local_llm),
    ]
    for method in (
        ReWOO(local_llm, tools=tools, task="scienceqa"),
        ReAct(local_llm, tools=tools, task="scienceqa"),
    ):
        for example in with_images:
            prediction = method.run(example)
            assert prediction.error is None, prediction.error
            assert prediction.answer in (example.choices or [])
