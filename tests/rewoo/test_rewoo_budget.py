"""What keeps the default ReWOO profile cheap: a lean planner prompt, a step bound, and
evidence focused before it is sent on. The paper profile keeps the reference behaviour."""

from __future__ import annotations

from collections.abc import Callable

from tablereason.llm import Request, ScriptedLLM
from tablereason.methods.rewoo import ReWOO
from tablereason.tools import DocStore, Document, LLMTool, WikiSearch, is_no_evidence

FILLER = " ".join(
    f"The club played match number {i} in a minor league that year." for i in range(12)
)
PARAGRAPH = (
    "Kansas Jayhawks is the athletics program of the University of Kansas. "
    + FILLER
    + " Its fight song is called Kansas Song, first sung in 1912."
)


def _store() -> DocStore:
    return DocStore([Document(title="Kansas Jayhawks", paragraphs=(PARAGRAPH,))])


def _router(planner: str, tool: Callable[[Request], str] | None = None):
    def fn(request: Request) -> str:
        if request.call_site == "rewoo/planner":
            return planner
        if request.call_site == "rewoo/solver":
            return "Kansas Song"
        return tool(request) if tool is not None else "x"

    return fn


QUESTION = "What is the name of the fight song of the Kansas Jayhawks?"
PLAN = (
    " look it up\n#E1 = Wikipedia[Kansas Jayhawks]\n"
    "Plan: read the song\n#E2 = LLM[What is the fight song called? Given context: #E1]"
)


def test_evidence_is_focused_for_the_solver_and_for_later_tools() -> None:
    llm = ScriptedLLM(fn=_router(PLAN, lambda r: "Kansas Song"))
    ReWOO(llm, tools=[WikiSearch(_store()), LLMTool(llm)]).run(QUESTION)
    tool_prompt = next(r.prompt for r in llm.requests if r.call_site == "tools/llm") or ""
    context = tool_prompt.split("Given context: ", 1)[1].split("\nA:")[0]
    assert len(context) <= 400 and len(PARAGRAPH) > 800
    assert context.startswith("Kansas Jayhawks: Kansas Jayhawks is the athletics program")
    assert "Its fight song is called Kansas Song, first sung in 1912." in context
    solver = llm.requests[-1].prompt or ""
    evidence = solver.split("Evidence: ", 1)[1].split("\nPlan:")[0]
    assert len(evidence) <= 300
    assert "fight song is called Kansas Song" in evidence and "match number 5" not in evidence


def test_paper_profile_passes_evidence_whole() -> None:
    planner = PLAN.replace(" look it up", "Plan: look it up")
    llm = ScriptedLLM(fn=_router(planner, lambda r: "Kansas Song"))
    ReWOO(llm, tools=[WikiSearch(_store()), LLMTool(llm)], profile="paper").run(QUESTION)
    tool_prompt = next(r.prompt for r in llm.requests if r.call_site == "tools/llm") or ""
    assert f"[Kansas Jayhawks: {PARAGRAPH}]" in tool_prompt
    assert PARAGRAPH in (llm.requests[-1].prompt or "")


def test_at_most_four_steps_run_and_the_planner_stops_before_a_fifth() -> None:
    planner = " ask\n" + "\n".join(f"Plan: p{i}\n#E{i} = LLM[question {i}]" for i in range(1, 7))
    llm = ScriptedLLM(fn=_router(planner))
    prediction = ReWOO(llm, tools=[LLMTool(llm)]).run(QUESTION)
    assert [s.arguments["var"] for s in prediction.trace.steps if s.kind == "tool"] == [
        "#E1", "#E2", "#E3", "#E4",
    ]  # fmt: skip
    assert "more than 4 steps; not run: #E5, #E6" in prediction.trace.steps[0].arguments["warnings"]
    assert "\n#E5" in llm.requests[0].stop
    assert "Plan: p5" not in (llm.requests[-1].prompt or "")
    llm = ScriptedLLM(fn=_router(planner))
    unbounded = ReWOO(llm, tools=[LLMTool(llm)], max_steps=None).run(QUESTION)
    assert sum(s.kind == "tool" for s in unbounded.trace.steps) == 6
    assert llm.requests[0].stop == ("\nQuestion:", "\n\n")


def test_a_step_without_tool_or_text_reads_no_evidence() -> None:
    # A small model sometimes writes "#E1 = #E2 = #E3 = ...": the empty steps say so.
    llm = ScriptedLLM(fn=_router(" find it\n#E1 = #E2 = #E3 = #E4"))
    prediction = ReWOO(llm, tools=[LLMTool(llm)]).run(QUESTION)
    tools = [s for s in prediction.trace.steps if s.kind == "tool"]
    assert [s.arguments["var"] for s in tools] == ["#E1", "#E2", "#E3"]
    empty, text = tools[:2], tools[2]
    assert all(is_no_evidence(s.raw[0]) and "names no tool" in (s.error or "") for s in empty)
    assert text.raw == ["#E4"] and text.error is None  # a call without Tool[...] is its text
    assert "Evidence: No evidence found: the step names no tool" in (llm.requests[-1].prompt or "")
    assert prediction.answer == "Kansas Song"


def test_default_planner_prompt_is_under_half_the_paper_prompt() -> None:
    sizes = {}
    for profile in ("default", "paper"):
        llm = ScriptedLLM(fn=_router(" a\n#E1 = LLM[x]"))
        ReWOO(llm, tools=[WikiSearch(_store()), LLMTool(llm)], profile=profile).run(QUESTION)
        sizes[profile] = len((llm.requests[0].prompt or "").split())
    assert sizes["default"] < sizes["paper"] / 2
