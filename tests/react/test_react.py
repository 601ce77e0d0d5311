from __future__ import annotations

from pathlib import Path

import pytest

from tablereason.datasets import load_dataset
from tablereason.errors import ConfigurationError, LLMError, ParseError
from tablereason.llm import Request, ScriptedLLM
from tablereason.methods.react import STOPPED, ReAct, parse_action, parse_action_paper
from tablereason.metrics.scorers import METRICS
from tablereason.tools import (
    OCR,
    Calculator,
    DocStore,
    Document,
    FailingTool,
    ImageCaptioner,
    LLMTool,
    ScienceQACaptions,
    ScienceQAOCR,
    search_tools,
)


def _store() -> DocStore:
    return DocStore(
        [
            Document(title="Hungry Horse", paragraphs=("Hungry Horse is owned by Greene King.",)),
            Document(
                title="Greene King",
                paragraphs=("Greene King is a brewer. It is based in Bury St Edmunds.",),
            ),
        ]
    )


def _tools() -> list:
    return list(search_tools(_store(), names=("Search", "Lookup")))


def test_loop_searches_then_finishes() -> None:
    llm = ScriptedLLM(
        replies=[
            " I need the owner.\nAction: Search[Hungry Horse]\nObservation: invented",
            " Greene King owns it.\nAction: Search[Greene King]",
            " Now where.\nAction: Lookup[based]",
            " Found it.\nAction: Finish[Bury St Edmunds]",
        ]
    )
    prediction = ReAct(llm, tools=_tools()).run("Where is the owner of Hungry Horse based?")
    assert prediction.answer == "Bury St Edmunds" and prediction.error is None
    assert all(r.stop == ("\nObservation:", "\nQuestion:") for r in llm.requests)
    assert all(r.temperature == 0 for r in llm.requests)
    second = llm.requests[1].prompt or ""
    assert second.endswith(
        "Question: Where is the owner of Hungry Horse based?\nThought: I need the owner.\n"
        "Action: Search[Hungry Horse]\nObservation: Hungry Horse: Hungry Horse is owned by "
        "Greene King.\nThought:"
    )
    assert "invented" not in second  # the model's own continuation is dropped
    last = llm.requests[3].prompt or ""
    assert "Observation: (Result 1/1) It is based in Bury St Edmunds.\nThought:" in last
    tools = [(s.name, s.arguments["input"]) for s in prediction.trace.steps if s.kind == "tool"]
    assert tools == [("Search", "Hungry Horse"), ("Search", "Greene King"), ("Lookup", "based")]


def test_whole_prompt_is_resent_each_step() -> None:
    replies = [f" step {i}\nAction: Calculator[{i} + 1]" for i in range(3)]
    llm = ScriptedLLM(replies=[*replies, " ok\nAction: Finish[3]"])
    prediction = ReAct(llm, tools=[Calculator()]).run("q?")
    prompt_tokens = [s.usage.prompt_tokens for s in prediction.trace.steps if s.kind == "step"]
    assert len(prompt_tokens) == 4
    assert prompt_tokens == sorted(set(prompt_tokens))  # strictly growing
    assert all(r.prompt and r.prompt.startswith("Answer the question by") for r in llm.requests)


def test_configurable_watchword() -> None:
    llm = ScriptedLLM(
        replies=[
            " think\nAction: Calculator[1 + 1]",  # the default word is not an action here
            " again\nAct: Calculator[2 + 2]",
            " done\nact: finish[4]",
        ]
    )
    method = ReAct(llm, tools=[Calculator()], watchword="Act")
    prediction = method.run("q?")
    assert prediction.answer == "4"
    prompt = llm.requests[0].prompt or ""
    assert "Act: Search[Hungry Horse]" in prompt and "Action:" not in prompt
    steps = [s for s in prediction.trace.steps if s.kind == "step"]
    assert steps[0].error == "no action found"
    assert "Observation: Invalid step: write 'Act: Tool[input]'" in (llm.requests[1].prompt or "")


def test_parse_action_regex() -> None:
    action = parse_action("x\n  Action 2 : Search [Oslo [city]] \nmore")
    assert action is not None and (action.tool, action.input) == ("Search", "Oslo [city]")
    assert action.text == "x\n  Action 2 : Search [Oslo [city]] "
    assert parse_action("Action: Search Oslo") is None
    assert parse_action("Thought: I will Action: Search[x] later") is None
    paper = parse_action_paper(" hm\nAction: Search[Oslo]")
    assert (paper.tool, paper.input) == ("Search", "Oslo")
    with pytest.raises(ParseError):
        parse_action_paper("Action: Search[Oslo]\nthen more")
    with pytest.raises(ParseError):
        parse_action_paper("Action: Search Oslo")


def test_iteration_limit_then_forced_answer() -> None:
    def fn(request: Request) -> str:
        if request.call_site == "react/finish":
            return "Paris"
        return " keep going\nAction: Calculator[1 + 1]"

    llm = ScriptedLLM(fn=fn)
    prediction = ReAct(llm, tools=[Calculator()], max_iterations=3).run("q?")
    assert prediction.answer == "Paris"
    assert [r.call_site for r in llm.requests] == ["react/step"] * 3 + ["react/finish"]
    final = llm.requests[-1]
    assert final.stop == ("]", "\n") and (final.prompt or "").endswith("Action: Finish[")
    assert prediction.trace.usage.requests == 4


def test_paper_profile_stops_with_the_fixed_message() -> None:
    llm = ScriptedLLM(fn=lambda r: " again\nAction: Calculator[1 + 1]")
    prediction = ReAct(llm, tools=[Calculator()], profile="paper").run("q?")
    assert prediction.answer == STOPPED
    assert len(llm.requests) == 8


def test_paper_profile_parse_failure_retries_the_question() -> None:
    llm = ScriptedLLM(
        replies=[
            " no action here",
            " still nothing\nAction: Calculator[1+1]\ntrailing",
            " ok\nAction: Finish[2]",
        ]
    )
    prediction = ReAct(llm, tools=[Calculator()], profile="paper").run("q?")
    assert prediction.answer == "2"
    assert [s.kind for s in prediction.trace.steps].count("error") == 2
    llm = ScriptedLLM(fn=lambda r: "nothing")
    failed = ReAct(llm, tools=[Calculator()], profile="paper").run("q?")
    assert failed.answer == "" and "attempt 3" in (failed.error or "") and len(llm.requests) == 3


def test_failing_and_unknown_tools_become_observations() -> None:
    llm = ScriptedLLM(
        replies=[
            " s\nAction: Search[Hungry Horse]",
            " g\nAction: Google[Hungry Horse]",
            " guess\nAction: Finish[somewhere]",
        ]
    )
    tools = [FailingTool(t, "forced failure") for t in _tools()]
    prediction = ReAct(llm, tools=tools).run("q?")
    assert prediction.answer == "somewhere"
    second = llm.requests[1].prompt or ""
    assert "Observation: No evidence found: forced failure\nThought:" in second
    third = llm.requests[2].prompt or ""
    assert "'Google' is not a tool; use one of Search, Lookup, Finish" in third


def test_tool_internal_tokens_are_counted() -> None:
    def fn(request: Request) -> str:
        if request.call_site == "tools/llm":
            return "blue"
        if "Observation: blue" in (request.prompt or ""):
            return " done\nAction: Finish[blue]"
        return " ask\nAction: LLM[What colour is the sky?]"

    llm = ScriptedLLM(fn=fn)
    prediction = ReAct(llm, tools=[LLMTool(llm)]).run("q?")
    usage = prediction.trace.usage
    assert usage.requests == len(llm.requests) == 3
    prompt_words = sum(len(r.as_text().split()) for r in llm.requests)
    assert usage.prompt_tokens == prompt_words
    tool_step = next(s for s in prediction.trace.steps if s.kind == "tool")
    assert tool_step.usage.requests == 1


def test_lookup_state_resets_between_questions() -> None:
    llm = ScriptedLLM(
        replies=[
            " s\nAction: Search[Greene King]",
            " f\nAction: Finish[x]",
            " l\nAction: Lookup[based]",
            " f\nAction: Finish[y]",
        ]
    )
    method = ReAct(llm, tools=_tools())
    method.run("first?")
    method.run("second?")
    assert "search for a document first" in (llm.requests[3].prompt or "")


def test_model_failure_is_recorded() -> None:
    prediction = ReAct(ScriptedLLM(replies=[LLMError("down")]), tools=[Calculator()]).run("q?")
    assert prediction.answer == "" and "down" in (prediction.error or "")
    with pytest.raises(ConfigurationError):
        ReAct(ScriptedLLM(replies=[]), tools=[Calculator()], max_iterations=0)


def test_mm_react_passes_image_paths_to_the_image_tools(fixture_data: Path) -> None:
    examples = load_dataset("scienceqa", "test", data_dir=fixture_data)
    example = next(
        e for e in examples if e.metadata.get("image_file") and e.metadata.get("caption")
    )
    path = example.metadata["image_file"]
    letter = chr(65 + example.metadata["answer_index"])
    llm = ScriptedLLM(
        replies=[
            f" look\nAction: ImageCaptioner[{path}]",
            f" read\nAction: OCR[{path}]",
            f" pick\nAction: Finish[({letter})]",
        ]
    )
    tools = [ImageCaptioner(ScienceQACaptions(fixture_data)), OCR(ScienceQAOCR(fixture_data))]
    prediction = ReAct(llm, tools=tools, task="scienceqa").run(example)
    assert prediction.answer == example.answer
    assert f"Image: {path}" in (llm.requests[0].prompt or "")
    assert f"Observation: {example.metadata['caption']}" in (llm.requests[1].prompt or "")
    assert METRICS.get("scienceqa_accuracy")([prediction], [example]).score == 1.0
