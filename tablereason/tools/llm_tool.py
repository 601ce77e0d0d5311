r"""The LLM tool: a plain question to the configured model, answered briefly.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> tool = LLMTool(ScriptedLLM(replies=["Paris\nextra words"]))
    >>> out = tool.call("What is the capital of France?")
    >>> out.text, out.usage.requests
    ('Paris', 1)
"""

from __future__ import annotations

from tablereason.calls import Door, ReplySpec
from tablereason.errors import TableReasonError
from tablereason.llm.base import LLM, Usage
from tablereason.tools.base import BaseTool, ToolFailure
from tablereason.trace.record import TraceStep

INSTRUCTION = "Answer in as few words as possible."


class LLMTool(BaseTool):
    """Ask the model a self-contained question; the observation is the first line of its reply.

    Args:
        llm: Any backend of the LLM protocol.
        max_tokens: Completion budget.
        instruction: The line put before the question.
        first_line: Keep only the first non-empty line of the reply (the default), or the
            whole reply with newlines turned into spaces. Generation stops at a new ``Q:``.
        name: Tool name shown to the model.
    """

    name = "LLM"
    description = (
        "A language model that answers a self-contained question from general knowledge and "
        "any context given with it. Input: the question, with the context it needs."
    )

    def __init__(
        self,
        llm: LLM,
        *,
        max_tokens: int = 48,
        instruction: str = INSTRUCTION,
        first_line: bool = True,
        name: str | None = None,
    ) -> None:
        self.llm = llm
        self.door = Door(llm, site="tools", constrain=False)
        self.max_tokens = max_tokens
        self.instruction = instruction
        self.first_line = first_line
        if name:
            self.name = name

    def prompt(self, text: str) -> str:
        """The prompt sent for input ``text``."""
        return f"{self.instruction}\n\nQ: {text}\nA:"

    def run(self, text: str) -> tuple[str, Usage]:
        """Ask the model and return its short answer."""
        step = TraceStep(kind="tool", name=self.name)  # the caller records the tool's step
        spec: ReplySpec[str] = ReplySpec(max_tokens=self.max_tokens, stop=("\nQ:",))
        try:
            reply = self.door.ask(step, self.prompt(text), spec, site="tools/llm").text.strip()
        except TableReasonError as error:
            raise ToolFailure(f"the model failed: {error}") from None
        if self.first_line:
            lines = [line.strip() for line in reply.splitlines() if line.strip()]
            reply = lines[0] if lines else ""
        else:
            reply = " ".join(reply.split())
        if not reply:
            raise ToolFailure("the model gave an empty answer", usage=step.usage)
        return reply, step.usage
