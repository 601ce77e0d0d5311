from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from support import golden

from tablereason.datasets import Example, load_dataset
from tablereason.errors import ConfigurationError, LLMError
from tablereason.llm import Request, ScriptedLLM
from tablereason.methods.rewoo import PROFILES, ReWOO
from tablereason.methods.tool_tasks import DEMO_IDS
from tablereason.metrics.scorers import METRICS
from tablereason.tools import (
    Calculator,
    DocStore,
    Document,
    FailingTool,
    LLMTool,
    WikiSearch,
    is_no_evidence,
)

GOLDEN = Path(__file__).parent / "golden"


def _store() -> DocStore:
    return DocStore(
        [
            Document(title="Hungry Horse", paragraphs=("Hungry Horse is owned by Greene King.",)),
            Document(title="Greene King", paragraphs=("Greene King is based in Bury St Edmunds.",)),
        ]
    )


def _router(planner: str, solver: str, tool: Callable[[Request], str] | None = None):
    def fn(request: Request) -> str | BaseException:
        if request.call_site == "rewoo/planner":
            return planner
        if request.call_site == "rewoo/solver":
            return solver
        if tool is not None:
            return tool(request)
        return LLMError(f"unexpected call {request.call_site}")

    return fn


def _tools(llm: ScriptedLLM) -> list:
    return [WikiSearch(_store()), LLMTool(llm), Calculator()]


def test_plan_work_solve_end_to_end() -> None:
    planner = (
        " find the owner\n#E1 = Wikipedia[Hungry Horse]\n"
        "Plan: read the owner\n#E2 = LLM[Who owns it? Given context: #E1]\n"
        "Plan: find the town\n#E3 = Wikipedia[#E2]"
    )
    llm = ScriptedLLM(fn=_router(planner, "Bury St Edmunds.\nmore", lambda r: "Greene King"))
    prediction = ReWOO(llm, tools=_tools(llm)).run("Where is the owner of Hungry Horse based?")
    assert prediction.answer == "Bury St Edmunds" and prediction.error is None
    planner_prompt = llm.requests[0].prompt or ""
    assert "Wikipedia[input]: Searches an encyclopedia" in planner_prompt
    assert "#E2 = LLM[Which company owns Hungry Horse? Given context: #E1]" in planner_prompt
    assert planner_prompt.count("Question: ") == 3  # two demos and the question
    assert planner_prompt.endswith("Question: Where is the owner of Hungry Horse based?\nPlan:")
    assert llm.requests[0].stop == ("\nQuestion:", "\n\n", "\n#E5")
    llm_tool_prompt = next(r.prompt for r in llm.requests if r.call_site == "tools/llm") or ""
    assert "Given context: Hungry Horse: Hungry Horse is owned by Greene King." in llm_tool_prompt
    solver_prompt = llm.requests[-1].prompt or ""
    assert "Plan: find the town\nEvidence: Greene King: Greene King is based in Bury" in (
        solver_prompt
    )
    assert solver_prompt.count("Hungry Horse based?") == 1  # the question is not repeated
    assert solver_prompt.endswith("Q: Where is the owner of Hungry Horse based?\nA:")
    assert llm.requests[-1].stop == ("\n",)
    kinds = [(s.kind, s.name) for s in prediction.trace.steps]
    assert kinds == [
        ("plan", "planner"),
        ("tool", "Wikipedia"),
        ("tool", "LLM"),
        ("tool", "Wikipedia"),
        ("answer", "solver"),
    ]
    assert prediction.trace.steps[3].arguments["input"] == "Greene King"


def test_token_accounting_counts_every_call_including_tools() -> None:
    planner = " a\n#E1 = LLM[first question]\nPlan: b\n#E2 = LLM[second about #E1]"
    llm = ScriptedLLM(fn=_router(planner, "done", lambda r: "tool answer words"))
    prediction = ReWOO(llm, tools=[LLMTool(llm)]).run("q?")
    usage = prediction.trace.usage
    assert usage.requests == len(llm.requests) == 4
    # ScriptedLLM counts words: recompute independently from the recorded requests.
    prompt_words = sum(len(r.as_text().split()) for r in llm.requests)
    completion_words = len(planner.split()) + 2 * 3 + 1
    assert usage.prompt_tokens == prompt_words
    assert usage.completion_tokens == completion_words
    tool_steps = [s for s in prediction.trace.steps if s.kind == "tool"]
    assert all(s.usage.requests == 1 for s in tool_steps)


def test_independent_steps_run_concurrently() -> None:
    barrier = threading.Barrier(2, timeout=10)

    def tool(request: Request) -> str:
        barrier.wait()  # both LLM-tool calls must be in flight at the same time
        return "ok"

    planner = " a\n#E1 = LLM[one]\nPlan: b\n#E2 = LLM[two]\nPlan: c\n#E3 = LLM[#E1 #E2]"
    calls = []

    def third(request: Request) -> str:
        if "ok ok" in (request.prompt or ""):
            calls.append("third")
            return "joined"
        return tool(request)

    llm = ScriptedLLM(fn=_router(planner, "fine", third))
    prediction = ReWOO(llm, tools=[LLMTool(llm)]).run("q?")
    evidence = [s.raw[0] for s in prediction.trace.steps if s.kind == "tool"]
    assert evidence[:2] == ["ok", "ok"] and evidence[2] == "joined"
    assert calls == ["third"]


def test_sequential_setting_does_not_overlap() -> None:
    active = 0
    peak = 0
    lock = threading.Lock()

    def tool(request: Request) -> str:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        threading.Event().wait(0.05)
        with lock:
            active -= 1
        return "ok"

    planner = " a\n" + "\n".join(f"#E{i} = LLM[q{i}]" for i in range(1, 5))
    llm = ScriptedLLM(fn=_router(planner, "x", tool))
    ReWOO(llm, tools=[LLMTool(llm)], concurrent=False).run("q?")
    assert peak == 1
    peak = 0
    ReWOO(llm, tools=[LLMTool(llm)]).run("q?")
    assert peak >= 2


def test_forward_reference_runs_after_its_target() -> None:
    planner = " a\n#E1 = LLM[the sum is #E2]\nPlan: b\n#E2 = Calculator[20 + 22]"
    llm = ScriptedLLM(fn=_router(planner, "42", lambda r: "forty-two"))
    prediction = ReWOO(llm, tools=[LLMTool(llm), Calculator()]).run("q?")
    tools = [(s.arguments["var"], s.arguments["input"]) for s in prediction.trace.steps[1:3]]
    assert tools == [("#E2", "20 + 22"), ("#E1", "the sum is 42")]


def test_failed_step_feeds_its_dependants() -> None:
    planner = " a\n#E1 = Wikipedia[Nothing Like This Zqx]\nPlan: b\n#E2 = LLM[Who? #E1]"
    llm = ScriptedLLM(fn=_router(planner, "unknown", lambda r: "no idea"))
    prediction = ReWOO(llm, tools=_tools(llm)).run("q?")
    first, second = (s for s in prediction.trace.steps if s.kind == "tool")
    assert first.error is not None and is_no_evidence(first.raw[0])
    assert second.error is None and second.arguments["input"].startswith("Who? No evidence found")
    assert prediction.answer == "unknown"


def test_every_tool_failing_still_answers() -> None:
    planner = " a\n#E1 = Wikipedia[x]\nPlan: b\n#E2 = LLM[#E1]\nPlan: c\n#E3 = Calculator[1+1]"
    llm = ScriptedLLM(fn=_router(planner, "a guess"))
    tools = [FailingTool(t, "forced failure") for t in _tools(llm)]
    prediction = ReWOO(llm, tools=tools).run("q?")
    assert prediction.answer == "a guess" and prediction.error is None
    assert [s.raw[0] for s in prediction.trace.steps if s.kind == "tool"] == [
        "No evidence found: forced failure"
    ] * 3
    assert "Evidence: No evidence found: forced failure" in (llm.requests[-1].prompt or "")


def test_unknown_tool_and_unreadable_plan() -> None:
    llm = ScriptedLLM(fn=_router(" a\n#E1 = Google[x]", "ans"))
    prediction = ReWOO(llm, tools=[Calculator()]).run("q?")
    step = prediction.trace.steps[1]
    assert "unknown tool 'Google'; the tools are Calculator" in step.raw[0]
    llm = ScriptedLLM(fn=_router(" I cannot plan this.", "fallback"))
    prediction = ReWOO(llm, tools=[Calculator()]).run("q?")
    assert prediction.answer == "fallback"
    assert prediction.trace.steps[0].error is not None
    assert "No plan could be read" in (llm.requests[-1].prompt or "")


def test_tool_names_match_loosely_in_default_profile() -> None:
    llm = ScriptedLLM(fn=_router(" a\n#E1 = calculator [6*7]", "42"))
    prediction = ReWOO(llm, tools=[Calculator()]).run("q?")
    assert prediction.trace.steps[1].raw == ["42"]


def test_model_failure_is_recorded_not_raised() -> None:
    llm = ScriptedLLM(replies=[LLMError("server down")])
    prediction = ReWOO(llm, tools=[Calculator()]).run("q?")
    assert prediction.answer == "" and "server down" in (prediction.error or "")


def test_settings_validation() -> None:
    with pytest.raises(ConfigurationError):
        ReWOO(ScriptedLLM(replies=[]), tools=[Calculator()], max_workers=0)
    with pytest.raises(ConfigurationError):
        ReWOO(ScriptedLLM(replies=[]), tools=[])
    with pytest.raises(ConfigurationError):
        ReWOO(ScriptedLLM(replies=[]), tools=[Calculator()], task="tabmwp")
    assert PROFILES.names() == ["default", "paper"]


# ------------------------------------------------------------------ paper profile


def test_paper_profile_wraps_evidence_and_drops_last_character() -> None:
    planner = (
        "Plan: find\n#E1 = Wikipedia[Hungry Horse]\n"
        "Plan: owner\n#E2 = LLM[Who owns it? #E1]x\n"
        "Plan: bad name\n#E3 = Wikipedia [Greene King]"
    )
    llm = ScriptedLLM(fn=_router(planner, "\nGreene King\n", lambda r: "Greene King"))
    prediction = ReWOO(llm, tools=_tools(llm), profile="paper").run("Who owns Hungry Horse?")
    tools = [s for s in prediction.trace.steps if s.kind == "tool"]
    assert tools[1].arguments["input"] == (
        "Who owns it? [Hungry Horse: Hungry Horse is owned by Greene King.]]"
    )
    assert tools[2].raw == ["No evidence found"]  # "Wikipedia " is not a tool name
    assert prediction.answer == "Greene King"
    planner_request = llm.requests[0]
    assert planner_request.temperature == 0.5 and planner_request.stop == ()
    assert (planner_request.prompt or "").endswith("\n\nWho owns Hungry Horse?\n")
    assert "#E4 = LLM[In which town is #E2 based? Given context: #E3]" in (
        planner_request.prompt or ""
    )  # the paper profile keeps the four longer demos
    solver = llm.requests[-1].prompt or ""
    assert "Plan: find\nEvidence:\nHungry Horse: Hungry Horse is owned by Greene King.\n" in solver
    assert solver.endswith("Who owns Hungry Horse?\n") and llm.requests[-1].stop == ()


def test_paper_profile_retries_crashed_runs() -> None:
    replies = [
        "Plan: a\nPlan: b\n#E1 = Calculator[1+1]",  # 2 plans, 1 evidence: KeyError
        "Plan: a\n#E1 Calculator[1+1]",  # no '=': the parser crashes
        "Plan: a\n#E1 = Calculator[2+2]",
        "4",
    ]
    llm = ScriptedLLM(replies=replies)
    prediction = ReWOO(llm, tools=[Calculator()], profile="paper").run("q?")
    assert prediction.answer == "4" and prediction.error is None
    assert [s.kind for s in prediction.trace.steps].count("error") == 2
    assert prediction.trace.usage.requests == 4
    llm = ScriptedLLM(replies=["Plan: a\nPlan: b\n#E1 = Calculator[1+1]"] * 3)
    failed = ReWOO(llm, tools=[Calculator()], profile="paper").run("q?")
    assert failed.answer == "" and "attempt 3" in (failed.error or "")


def test_paper_profile_e10_is_literal() -> None:
    planner = "\n".join(f"Plan: p{i}\n#E{i} = Calculator[{i}*2]" for i in range(1, 11))
    llm = ScriptedLLM(replies=[planner, "ok"])
    prediction = ReWOO(llm, tools=[Calculator()], profile="paper").run("q?")
    tools = [s for s in prediction.trace.steps if s.kind == "tool"]
    assert len(tools) == 9 and tools[-1].raw == ["18"]
    assert "Plan: p10\nEvidence:\nNo evidence found\n" in (llm.requests[-1].prompt or "")


# ------------------------------------------------------------------ prompts and data


def test_planner_prompt_golden() -> None:
    method = ReWOO(ScriptedLLM(replies=[]), tools=[WikiSearch(_store()), Calculator()])
    for name, text in {
        "planner_default.txt": method.planner_prompt("Question: Who founded Oslo?"),
        "solver_default.txt": method.solver_prompt(
            "Question: Who founded Oslo?", "Plan: x\nEvidence: y\n"
        ),
    }.items():
        golden.check(GOLDEN / name, text)


def test_hotpotqa_with_real_paragraphs(fixture_data: Path) -> None:
    examples = load_dataset("hotpotqa", "dev", data_dir=fixture_data, limit=3)
    assert not {e.id for e in examples} & set(DEMO_IDS["hotpotqa"])
    store = DocStore.from_examples(examples)

    def tool(request: Request) -> str:
        return "Shirley Temple"

    planner = (
        " find the film\n#E1 = Wikipedia[Kiss and Tell 1945 film]\n"
        "Plan: who played Corliss\n#E2 = LLM[Who played Corliss Archer? #E1]\n"
        "Plan: her career\n#E3 = Wikipedia[#E2]"
    )
    llm = ScriptedLLM(fn=_router(planner, "Chief of Protocol", tool))
    prediction = ReWOO(llm, tools=[WikiSearch(store), LLMTool(llm)])(examples[0])
    tool_steps = [s for s in prediction.trace.steps if s.kind == "tool"]
    assert tool_steps[0].raw[0].startswith("Kiss and Tell (1945 film): ")
    assert tool_steps[2].raw[0].startswith("Shirley Temple: ")
    result = METRICS.get("hotpotqa_em")({examples[0].id: prediction}, examples[:1])
    assert result.score == 1.0


def test_scienceqa_answers_are_options(fixture_data: Path) -> None:
    examples = load_dataset("scienceqa", "test", data_dir=fixture_data)
    example = next(e for e in examples if e.metadata.get("image_file"))
    from tablereason.tools import OCR, ImageCaptioner, ScienceQACaptions, ScienceQAOCR

    tools = [ImageCaptioner(ScienceQACaptions(fixture_data)), OCR(ScienceQAOCR(fixture_data))]
    path = example.metadata["image_file"]
    planner = f" look\n#E1 = ImageCaptioner[{path}]\nPlan: read\n#E2 = OCR[{path}]"
    index = example.metadata["answer_index"]
    letter = chr(65 + index)
    llm = ScriptedLLM(fn=_router(planner, f"({letter})"))
    method = ReWOO(llm, tools=tools, task="scienceqa")
    prediction = method.run(example)
    assert prediction.answer == example.answer
    planner_prompt = llm.requests[0].prompt or ""
    assert f"Image: {path}" in planner_prompt and "Options: (A) " in planner_prompt
    caption = next(s for s in prediction.trace.steps if s.name == "ImageCaptioner").raw[0]
    assert not is_no_evidence(caption)
    result = METRICS.get("scienceqa_accuracy")({example.id: prediction}, [example])
    assert result.score == 1.0


def test_text_only_scienceqa_question() -> None:
    example = Example(
        dataset="scienceqa", id="x", question="Which is heavier?", answer="a car",
        choices=["a feather", "a car"], context="",
    )  # fmt: skip
    llm = ScriptedLLM(fn=_router(" think\n#E1 = Calculator[1]", "car"))
    assert ReWOO(llm, tools=[Calculator()], task="scienceqa").run(example).answer == "a car"


def test_solver_echoing_the_plan_falls_back_to_the_last_evidence() -> None:
    planner = " a\n#E1 = Calculator[6*7]\nPlan: b\n#E2 = Wikipedia[Zzqx Unknown]"
    llm = ScriptedLLM(fn=_router(planner, " #E1 = Calculator[6*7]\nPlan: again"))
    prediction = ReWOO(llm, tools=_tools(llm)).run("q?")
    assert prediction.answer == "42"
    assert "echoed the plan" in (prediction.trace.steps[-1].note or "")
    llm = ScriptedLLM(fn=_router(planner, "Plan: x\n#E3 = y\nThe answer: 42"))  # echo, then it
    direct = ReWOO(llm, tools=_tools(llm)).run("q?")
    assert direct.answer == "42" and direct.trace.steps[-1].note is None


def test_echo_fallback_skips_retrieved_paragraphs() -> None:
    planner = " a\n#E1 = Wikipedia[Hungry Horse]"
    llm = ScriptedLLM(fn=_router(planner, "#E1 = Wikipedia[Hungry Horse]"))
    prediction = ReWOO(llm, tools=_tools(llm)).run("q?")
    long_store = DocStore([Document(title="Long", paragraphs=(" ".join(["word"] * 30),))])
    llm = ScriptedLLM(fn=_router(" a\n#E1 = Wikipedia[Long]", "Plan: a", lambda r: " a guess"))
    long_prediction = ReWOO(llm, tools=[WikiSearch(long_store)]).run("Who is it?")
    assert prediction.answer == "Hungry Horse: Hungry Horse is owned by Greene King"
    # No usable solver line and no short evidence: the question is asked once more, bare.
    assert long_prediction.answer == "a guess"
    solver, fallback = long_prediction.trace.steps[-2:]
    assert solver.error == "the solver gave no answer" and fallback.name == "fallback"
    assert llm.requests[-1].call_site == "rewoo/fallback"
    assert llm.requests[-1].prompt == "Answer in as few words as possible.\n\nQ: Who is it?\nA:"
    assert long_prediction.trace.usage.requests == 3
