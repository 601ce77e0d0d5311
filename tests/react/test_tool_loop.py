"""What ReWOO and ReAct share (methods/tool_loop.py): attempts, tool reset and failure."""

from __future__ import annotations

import pytest

from tablereason.llm import ScriptedLLM, Usage
from tablereason.methods.react import ReAct
from tablereason.methods.rewoo.method import ReWOO
from tablereason.methods.tool_loop import ToolMethod
from tablereason.tools import BaseTool

METHODS = [ReAct, ReWOO]
# A reply that fails each method's paper profile: no last action line, a plan line without "=".
FAILING = {ReAct: " I am not sure what to do", ReWOO: "#E1 Calculator 2 + 3"}


class Remembering(BaseTool):
    """A tool that counts its resets and calls."""

    name = "Memo"
    description = "remembers"

    def __init__(self) -> None:
        self.resets = 0
        self.calls = 0

    def reset(self) -> None:
        self.resets += 1

    def run(self, text: str) -> tuple[str, Usage]:
        self.calls += 1
        return "noted", Usage(requests=0)


@pytest.mark.parametrize("method", METHODS)
def test_both_methods_are_the_one_base(method: type[ToolMethod]) -> None:
    assert issubclass(method, ToolMethod)
    for name in ("run", "__call__", "config", "tools_for"):
        assert getattr(method, name) is getattr(ToolMethod, name)


@pytest.mark.parametrize("method", METHODS)
def test_each_attempt_resets_the_tools_and_every_failure_is_recorded(
    method: type[ToolMethod],
) -> None:
    tool = Remembering()
    llm = ScriptedLLM(replies=[FAILING[method]] * 3)
    prediction = method(llm, tools=[tool], profile="paper").run("what is it?")
    assert tool.resets == 3
    errors = [s for s in prediction.trace.steps if s.kind == "error"]
    assert [s.error.split(":")[0] for s in errors] == ["attempt 1", "attempt 2", "attempt 3"]
    assert prediction.answer == "" and prediction.error == errors[-1].error
    assert prediction.trace.method == f"{method.name}/paper"


@pytest.mark.parametrize("method", METHODS)
def test_a_model_failure_ends_in_an_error_not_an_exception(method: type[ToolMethod]) -> None:
    prediction = method(ScriptedLLM(replies=[]), tools=[Remembering()]).run("what is it?")
    assert prediction.answer == ""
    assert prediction.error and "ran out of replies" in prediction.error


@pytest.mark.parametrize("method", METHODS)
def test_a_table_question_builds_fresh_tools_each_time(method: type[ToolMethod]) -> None:
    from support.penguins import penguin_table

    built = method(ScriptedLLM(replies=[]), task="wikitq")
    subject_tools = [built.tools_for(_subject(penguin_table(n))) for n in (3, 4)]
    assert [[t.name for t in tools] for tools in subject_tools] == [["SQL", "Python"]] * 2
    assert subject_tools[0][0] is not subject_tools[1][0]
    assert subject_tools[1][0].tables["t"].num_rows == 4  # type: ignore[attr-defined]


def _subject(table):
    from tablereason.methods.tool_tasks import Subject

    return Subject("how many?", table)
