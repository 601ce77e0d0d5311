r"""ReAct / MM-ReAct: interleaved Thought, action and Observation steps over pluggable tools.

Each step resends the whole prompt (instructions, tools, demos, question and the
growing scratchpad) and the model continues it up to the next ``Observation:``.
The action is recognised by a configurable watchword (``Action`` by default) and
read with a regular expression: ``<watchword>: Tool[input]``; ``Finish[answer]``
ends the run. Non-text inputs (images) are referred to by file path, which the
captioner and OCR tools understand. Every model call is counted, tool-internal
ones included; resending the prompt each step is exactly the cost ReWOO avoids.

Profiles (:data:`PROFILES`): ``"default"`` (lenient action parsing: an unreadable
step becomes an observation that says how to write an action; at the iteration
limit one more call asks for the final answer) and ``"paper"`` (the reference
agent: the last line must be the action, a parse failure fails the attempt and the
question is retried up to 3 times; at the limit the answer is the fixed "Agent
stopped due to iteration limit or time limit.").

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.tools import Calculator
    >>> llm = ScriptedLLM(replies=[" add.\nAction: Calculator[2 + 3]", " done.\nAction: Finish[5]"])
    >>> ReAct(llm, tools=[Calculator()]).run("What is 2 + 3?").answer
    '5'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from tablereason.calls import Door, ReplySpec
from tablereason.calls.sampling import SamplingSettings
from tablereason.errors import ConfigurationError, ParseError, TableReasonError
from tablereason.llm.base import LLM
from tablereason.methods.constraints.tools import react_action
from tablereason.methods.tool_tasks import (
    TextTask,
    check_task,
    default_tools,
    final_answer,
    question_text,
)
from tablereason.prompts.render import render, template_hash, template_names
from tablereason.registry import Registry
from tablereason.tools.base import Tool, ToolOutput, describe, invoke, no_evidence
from tablereason.trace.record import Prediction, Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.datasets import Example

STOPPED = "Agent stopped due to iteration limit or time limit."


class ReActSettings(SamplingSettings):
    """Everything that differs between profiles.

    Attributes:
        profile: ``"default"`` or ``"paper"``.
        watchword: The word that introduces an action line (``Action``).
        finish: The pseudo-tool that ends the run with its input as the answer.
        max_iterations: Model steps before the run is stopped.
        temperature: Sampling temperature (0, as the reference).
        top_p: Nucleus sampling bound of every request.
        seed: Seed sent with sampled requests, so a sampled run replays exactly.
        max_tokens: Completion budget per step.
        max_observation_chars: Observations are cut to this length (None: no cut).
        force_finish: At the iteration limit, ask once more for the final answer.
        attempts: Whole-run attempts when the run fails (the paper's evaluator: 3).
        constrain: Send each step's constraint (free thought, then ``<watchword>: ``
            and a known tool, or the finishing one, with its input) to models that
            enforce it. The paper profile asks as the reference does: off unless set.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: Literal["default", "paper"] = "default"
    watchword: str = Field(default="Action", min_length=1)
    finish: str = Field(default="Finish", min_length=1)
    max_iterations: int = Field(default=8, ge=1)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(default=128, ge=1)
    max_observation_chars: int | None = 600
    force_finish: bool = True
    attempts: int = Field(default=1, ge=1)
    constrain: bool = True


PROFILES: Registry[ReActSettings] = Registry("ReAct profile")
PROFILES.register("default", ReActSettings())
PROFILES.register(
    "paper",
    ReActSettings(
        profile="paper",
        max_tokens=256,
        max_observation_chars=None,
        force_finish=False,
        attempts=3,
        constrain=False,
    ),
)


class Action(BaseModel):
    """A parsed action: the tool name, its input, and the model text up to the action line."""

    model_config = ConfigDict(frozen=True)

    tool: str
    input: str
    text: str


def action_pattern(watchword: str) -> re.Pattern[str]:
    r"""The regex for ``<watchword>: Tool[input]`` lines (watchword case-insensitive).

    Example:
        >>> action_pattern("Act").search("Thought: hm\nact: Search[Oslo]").groups()
        ('Search', 'Oslo')
    """
    return re.compile(
        rf"^[ \t]*{re.escape(watchword)}[ \t]*\d*[ \t]*:[ \t]*"
        r"([A-Za-z][\w .-]*?)[ \t]*\[(.*)\][ \t]*$",
        re.I | re.M,
    )


def parse_action(text: str, watchword: str = "Action") -> Action | None:
    r"""The first action in a model step (default profile), or None when there is none.

    The input runs to the last ``]`` of the line; text after the action line (the
    model going on by itself) is dropped from :attr:`Action.text`.

    Example:
        >>> parse_action(" look it up\nAction: Search[Oslo [city]]\nObservation: made up")
        Action(tool='Search', input='Oslo [city]', text=' look it up\nAction: Search[Oslo [city]]')
    """
    match = action_pattern(watchword).search(text)
    if match is None:
        return None
    return Action(
        tool=match.group(1).strip(), input=match.group(2).strip(), text=text[: match.end()]
    )


def parse_action_paper(text: str, watchword: str = "Action") -> Action:
    """The reference parser: the last line must start with ``"<watchword>: "``.

    Raises:
        ParseError: When the last line is not an action or has no ``Tool[input]``.
    """
    prefix = f"{watchword}: "
    lines = text.strip().split("\n")
    last = lines[-1] if lines else ""
    expected = f"a last line '{prefix}Tool[input]'"
    if not last.startswith(prefix):
        raise ParseError(f"could not parse the step: {text!r}", raw=text, expected=expected)
    match = re.search(r"(.*?)\[(.*?)\]", last[len(prefix) :])
    if match is None:
        raise ParseError(f"could not parse the action: {last!r}", raw=text, expected=expected)
    return Action(tool=match.group(1), input=match.group(2), text=text)


def _tool_key(name: str) -> str:
    return "".join(name.lower().split()).replace("_", "")


class _RunFailed(TableReasonError):
    """An attempt failed the way the reference agent fails (the paper profile retries)."""


class ReAct:
    """A Thought / action / Observation loop over pluggable tools, for HotpotQA and ScienceQA.

    Args:
        llm: Any backend of the LLM protocol.
        tools: The tools; defaults to ``Search`` and ``Lookup`` over the HotpotQA
            paragraphs, or the image captioner, OCR and LLM tools for ScienceQA.
        task: ``"hotpotqa"`` or ``"scienceqa"``.
        profile: ``"default"`` or ``"paper"``.
        demos: Demo trajectories, written with the watchword; the task's demo file
            when None.
        data_dir: Data folder the default tools read (HotpotQA paragraphs, ScienceQA
            captions and OCR); ``$TABLEREASON_DATA_DIR`` when None. Unused with ``tools``.
        **overrides: Individual :class:`ReActSettings` fields (``watchword="Act"``).

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> from tablereason.tools import Calculator
        >>> method = ReAct(ScriptedLLM(replies=[]), tools=[Calculator()], watchword="Act")
        >>> method.settings.watchword, method.settings.max_iterations
        ('Act', 8)
    """

    name: ClassVar[str] = "react"
    takes_task: ClassVar[bool] = True
    takes_data_dir: ClassVar[bool] = True

    def __init__(
        self,
        llm: LLM,
        tools: Sequence[Tool] | None = None,
        *,
        task: str = "hotpotqa",
        profile: str = "default",
        demos: str | None = None,
        data_dir: str | None = None,
        **overrides: Any,
    ) -> None:
        self.llm = llm
        self.task: TextTask = check_task(task)
        base = PROFILES.get(profile)
        try:
            self.settings = ReActSettings.model_validate({**base.model_dump(), **overrides})
        except ValueError as err:
            raise ConfigurationError(f"invalid ReAct settings: {err}") from None
        self.tools: list[Tool] = (
            list(tools)
            if tools is not None
            else default_tools(self.task, llm, react=True, data_dir=data_dir)
        )
        word = self.settings.watchword
        self.door = Door(
            llm, site="react", constrain=self.settings.constrain,
            sampling=self.settings.sampling(),
        )  # fmt: skip
        self.demos = (
            demos if demos is not None else render(f"react/demos_{self.task}", watchword=word)
        )

    @property
    def _paper(self) -> bool:
        return self.settings.profile == "paper"

    def config(self) -> dict[str, Any]:
        """Task, settings, tools and a hash of every prompt template."""
        return {
            "method": self.name,
            "task": self.task,
            "settings": self.settings.model_dump(),
            "tools": [t.name for t in self.tools],
            "prompts": {n: template_hash(n) for n in template_names("react")},
        }

    def prompt(self, task_text: str, scratchpad: str) -> str:
        """The full prompt for one step."""
        return render(
            "react/prompt",
            watchword=self.settings.watchword,
            tools=describe(self.tools),
            demos=self.demos,
            question=task_text,
            scratchpad=scratchpad,
        )

    def __call__(self, example: Example | str) -> Prediction:
        """Same as :meth:`run`, for code that calls the method as a function."""
        return self.run(example)

    def run(self, example: Example | str) -> Prediction:
        """Reason and act until ``Finish`` or the iteration limit.

        Returns:
            The answer (an option text for ScienceQA) and a trace of every step and
            tool call. Never raises on a bad model answer; an LLM failure (after the
            paper profile's attempts) sets ``Prediction.error``.
        """
        question = example if isinstance(example, str) else example.question
        trace = Trace(method=f"{self.name}/{self.settings.profile}", question=question)
        last_error = ""
        for attempt in range(1, self.settings.attempts + 1):
            for tool in self.tools:
                reset = getattr(tool, "reset", None)
                if callable(reset):
                    reset()
            try:
                answer = self._attempt(example, trace, attempt)
            except TableReasonError as err:
                last_error = f"attempt {attempt}: {type(err).__name__}: {err}"
                trace.add(TraceStep(kind="error", name=type(err).__name__, error=last_error))
                continue
            return Prediction(answer=answer, trace=trace)
        return Prediction(answer="", trace=trace, error=last_error)

    def _complete(
        self, step: TraceStep, prompt: str, stop: tuple[str, ...], site: str, *, act: bool
    ) -> str:
        """One call through the door, timed on ``step``; ``act``: the reply ends in an action."""
        constraint = None
        if act and self.door.enforces("grammar", after=True):
            tools = [t.name for t in self.tools]
            constraint = react_action(tools, self.settings.watchword, self.settings.finish)
        spec: ReplySpec[str] = ReplySpec(
            constraint=constraint,
            reasks=1 if constraint is not None else 0,
            max_tokens=self.settings.max_tokens,
            stop=stop,
            temperature=self.settings.temperature,
        )
        step.start()
        try:
            return self.door.ask(step, prompt, spec, site=site).text
        finally:
            step.stop()

    def _find_tool(self, name: str) -> Tool | None:
        if self._paper:
            return next((t for t in self.tools if t.name == name), None)
        key = _tool_key(name)
        return next((t for t in self.tools if _tool_key(t.name) == key), None)

    def _observe(self, action: Action) -> ToolOutput:
        tool = self._find_tool(action.tool)
        if tool is None:
            names = ", ".join([t.name for t in self.tools] + [self.settings.finish])
            reason = f"{action.tool!r} is not a tool; use one of {names}"
            return ToolOutput(text=no_evidence(reason), error=reason)
        return invoke(tool, action.input)

    def _attempt(self, example: Example | str, trace: Trace, attempt: int) -> str:
        task_text = question_text(example, self.task)
        word, finish = self.settings.watchword, self.settings.finish
        scratchpad = "Thought:"
        stop = ("\nObservation:",) if self._paper else ("\nObservation:", "\nQuestion:")
        for iteration in range(1, self.settings.max_iterations + 1):
            step = trace.add(TraceStep(
                kind="step", name="react", prompt_name="react/prompt",
                arguments={"iteration": iteration, "attempt": attempt},
            ))  # fmt: skip
            prompt = self.prompt(task_text, scratchpad)
            text = self._complete(step, prompt, stop, "react/step", act=True)
            if self._paper:
                try:
                    action: Action | None = parse_action_paper(text, word)
                except ParseError as err:
                    step.error = str(err)
                    raise _RunFailed(str(err)) from None
            else:
                action = parse_action(text, word)
            if action is None:
                step.error = "no action found"
                hint = (
                    f"Invalid step: write '{word}: Tool[input]' on its own line, "
                    f"or {word}: {finish}[answer]."
                )
                scratchpad += text.rstrip() + f"\nObservation: {hint}\nThought:"
                continue
            step.arguments.update(tool=action.tool, input=action.input)
            if _tool_key(action.tool) == _tool_key(finish):
                answer = final_answer(action.input, example, self.task)
                step.arguments["answer"] = answer
                return answer
            out = self._observe(action)
            observation = " ".join(out.text.split())
            limit = self.settings.max_observation_chars
            if limit is not None and len(observation) > limit:
                observation = observation[:limit].rstrip() + " ..."
            trace.add(TraceStep(
                kind="tool", name=action.tool, raw=[out.text], usage=out.usage,
                duration_s=out.duration_s, error=out.error,
                arguments={"input": action.input, "iteration": iteration},
            ))  # fmt: skip
            scratchpad += action.text + f"\nObservation: {observation}\nThought:"
        return self._stopped(example, task_text, scratchpad, trace)

    def _stopped(
        self, example: Example | str, task_text: str, scratchpad: str, trace: Trace
    ) -> str:
        if not self.settings.force_finish:
            trace.add(TraceStep(kind="answer", name="iteration_limit", note=STOPPED))
            return STOPPED
        word, finish = self.settings.watchword, self.settings.finish
        pad = scratchpad + f" I must give my final answer now.\n{word}: {finish}["
        step = trace.add(TraceStep(
            kind="answer", name="forced_finish", prompt_name="react/prompt",
            note="iteration limit reached; asked for the final answer",
        ))  # fmt: skip
        text = self._complete(
            step, self.prompt(task_text, pad), ("]", "\n"), "react/finish", act=False
        )
        answer = final_answer(text, example, self.task)
        step.arguments["answer"] = answer
        return answer
