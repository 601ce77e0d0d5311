r"""ReAct / MM-ReAct: interleaved Thought, action and Observation steps over pluggable tools.

Each step resends the whole prompt (instructions, tools, demos, question and the
growing scratchpad) and the model continues it up to the next ``Observation:``.
The action is recognised by a configurable watchword (``Action`` by default) and
read with a regular expression: ``<watchword>: Tool[input]``; ``Finish[answer]``
ends the run. Non-text inputs (images) are referred to by file path, which the
captioner and OCR tools understand. Over the user's tables (task ``"wikitq"`` or
``"tabfact"``) it is a table agent: the prompt shows each table's bounded view and the
tools are SQL (the guard and the SQL worker) and Python (the sandbox), so no model code
runs in this process. The attempt loop, tool reset and failure are
:class:`~tablereason.methods.tool_loop.ToolMethod`'s, shared with ReWOO. Every
model call is counted, tool-internal ones included; resending the prompt each step
is exactly the cost ReWOO avoids.

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
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from tablereason.calls import ReplySpec
from tablereason.calls.sampling import SamplingSettings
from tablereason.errors import ConfigurationError, ParseError
from tablereason.llm.base import LLM
from tablereason.methods.constraints.tools import react_action
from tablereason.methods.tool_loop import RunFailed, ToolMethod
from tablereason.methods.tool_tasks import (
    TABLE_TASKS,
    VIEW_ROWS,
    Subject,
    check_task,
    final_answer,
    question_text,
    tool_key,
)
from tablereason.prompts.render import render
from tablereason.registry import Registry
from tablereason.tools.base import Tool, ToolOutput, describe, invoke, no_evidence
from tablereason.trace.record import Trace, TraceStep

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
        view_rows: Lines of each table's view (columns and rows) in a table task's
            prompt, whatever the table's size.
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
    view_rows: int = Field(default=VIEW_ROWS, ge=4)


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
    model going on by itself) is dropped from :attr:`Action.text`. The action may
    also follow other text on its line when it is written exactly ``<watchword>: ``,
    as the action grammar lets a model write it (``... 14.4Action: Finish[48]``).

    Example:
        >>> parse_action(" look it up\nAction: Search[Oslo [city]]\nObservation: made up")
        Action(tool='Search', input='Oslo [city]', text=' look it up\nAction: Search[Oslo [city]]')
        >>> parse_action(" the most is 14.4Action: Finish[48]").input
        '48'
    """
    match = action_pattern(watchword).search(text) or _inline_action(watchword).search(text)
    if match is None:
        return None
    return Action(
        tool=match.group(1).strip(), input=match.group(2).strip(), text=text[: match.end()]
    )


def _inline_action(watchword: str) -> re.Pattern[str]:
    """``<watchword>: Tool[input]`` ending a line after other text (the grammar's form)."""
    return re.compile(
        rf"{re.escape(watchword)}: ([A-Za-z][\w .-]*?)[ \t]*\[(.*)\][ \t]*$", re.M
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


class ReAct(ToolMethod):
    """A Thought / action / Observation loop over pluggable tools, or over the user's tables.

    Args:
        llm: Any backend of the LLM protocol.
        tools: The tools; defaults to ``Search`` and ``Lookup`` over the HotpotQA
            paragraphs, the image captioner, OCR and LLM tools for ScienceQA, and for a
            table task SQL and Python over the question's tables.
        task: ``"hotpotqa"``, ``"scienceqa"``, or a table task: ``"wikitq"``
            (``run(table, question)``) or ``"tabfact"`` (a statement).
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
    prompt_folder: ClassVar[str] = "react"
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
        base = PROFILES.get(profile)
        try:
            settings = ReActSettings.model_validate({**base.model_dump(), **overrides})
        except ValueError as err:
            raise ConfigurationError(f"invalid ReAct settings: {err}") from None
        self.settings: ReActSettings = settings
        super().__init__(llm, tools, task=task, data_dir=data_dir, settings=settings, react=True)
        word = self.settings.watchword
        demo_set = "table" if check_task(task) in TABLE_TASKS else task
        self.demos = (
            demos if demos is not None else render(f"react/demos_{demo_set}", watchword=word)
        )

    @property
    def _paper(self) -> bool:
        return self.settings.profile == "paper"

    def prompt(self, task_text: str, scratchpad: str, tools: Sequence[Tool] | None = None) -> str:
        """The full prompt for one step (with the method's tools when ``tools`` is None)."""
        return render(
            "react/prompt",
            watchword=self.settings.watchword,
            tools=describe(list(self.tools if tools is None else tools)),
            demos=self.demos,
            question=task_text,
            scratchpad=scratchpad,
        )

    def _complete(
        self,
        step: TraceStep,
        prompt: str,
        stop: tuple[str, ...],
        site: str,
        *,
        act: Sequence[Tool] | None,
    ) -> str:
        """One call through the door, timed on ``step``.

        ``act``: the reply ends in an action naming one of these tools (or the finishing
        one); None for the forced final answer.
        """
        constraint = None
        if act is not None and self.door.enforces("grammar", after=True):
            names = [t.name for t in act]
            constraint = react_action(names, self.settings.watchword, self.settings.finish)
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

    def _find_tool(self, name: str, tools: Sequence[Tool]) -> Tool | None:
        if self._paper:
            return next((t for t in tools if t.name == name), None)
        key = tool_key(name)
        return next((t for t in tools if tool_key(t.name) == key), None)

    def _observe(self, action: Action, tools: Sequence[Tool]) -> ToolOutput:
        tool = self._find_tool(action.tool, tools)
        if tool is None:
            names = ", ".join([t.name for t in tools] + [self.settings.finish])
            reason = f"{action.tool!r} is not a tool; use one of {names}"
            return ToolOutput(text=no_evidence(reason), error=reason)
        return invoke(tool, action.input)

    def attempt(self, subject: Subject, tools: list[Tool], trace: Trace, attempt: int) -> str:
        """Reason and act until ``Finish`` or the iteration limit (see :class:`ToolMethod`)."""
        task_text = question_text(subject, self.task, view_rows=self.settings.view_rows)
        word, finish = self.settings.watchword, self.settings.finish
        scratchpad = "Thought:"
        stop = ("\nObservation:",) if self._paper else ("\nObservation:", "\nQuestion:")
        for iteration in range(1, self.settings.max_iterations + 1):
            step = trace.add(TraceStep(
                kind="step", name="react", prompt_name="react/prompt",
                arguments={"iteration": iteration, "attempt": attempt},
            ))  # fmt: skip
            prompt = self.prompt(task_text, scratchpad, tools)
            text = self._complete(step, prompt, stop, "react/step", act=tools)
            if self._paper:
                try:
                    action: Action | None = parse_action_paper(text, word)
                except ParseError as err:
                    step.error = str(err)
                    raise RunFailed(str(err)) from None
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
            if tool_key(action.tool) == tool_key(finish):
                answer = final_answer(action.input, subject, self.task)
                step.arguments["answer"] = answer
                return answer
            out = self._observe(action, tools)
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
        return self._stopped(subject, task_text, scratchpad, trace, tools)

    def _stopped(
        self, subject: Subject, task_text: str, scratchpad: str, trace: Trace, tools: list[Tool]
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
            step, self.prompt(task_text, pad, tools), ("]", "\n"), "react/finish", act=None
        )
        answer = final_answer(text, subject, self.task)
        step.arguments["answer"] = answer
        return answer
