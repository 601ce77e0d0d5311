"""The model-call door: send a reply spec, read the reply, re-ask within its bound, record it.

:meth:`Door.ask` builds the one :class:`~tablereason.llm.Request` of each attempt, sends
it, and parses the reply. A reply that does not parse (:class:`~tablereason.errors.ParseError`)
and one that breaks its constraint (:class:`~tablereason.llm.ConstraintViolationError`,
from a server that accepted the constraint and ignored it) are both re-asked, within the
spec's bound, and counted. When the bound is spent, a reply that broke its constraint is
still given to the parser as it is, so a server that ignores constraints costs re-asks,
never a decision. Every attempt is written into the trace step: the exact prompt text
(:attr:`~tablereason.trace.TraceStep.prompts`), the raw replies, the usage (a reply that
broke its constraint spent its tokens too), the error of the last reply that could not
be read, a note when a re-ask succeeded, and the counts (``reasks``, ``unparsed``,
``violations``). The step's timing (:meth:`~tablereason.trace.TraceStep.start` /
``stop``) stays with its owner.

A constraint is sent only where it can be honoured: when the door constrains and the
backend enforces that kind of constraint on that endpoint
(:func:`~tablereason.llm.capabilities_of`); otherwise the request goes without it and
the reply is parsed as it comes. A backend that enforces nothing (a scripted model, an
unknown server, ``--constrain off``) therefore sees the same requests as before
constraints existed.

Example:
    >>> from tablereason.errors import ParseError
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.trace import TraceStep
    >>> def number(text):
    ...     if not text.strip().isdigit():
    ...         raise ParseError("not a number", raw=text, expected="digits")
    ...     return int(text)
    >>> door = Door(ScriptedLLM(replies=[" many", " 12"]), site="demo")
    >>> step = TraceStep(kind="answer", name="count")
    >>> door.ask(step, "Count:", ReplySpec(parse=number, reasks=1)).value
    12
    >>> step.reasks, step.unparsed, len(step.prompts), step.note
    (1, 1, 2, 'parsed after 1 re-ask(s); first error: not a number (expected: digits)')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from tablereason.calls.sampling import Sampling
from tablereason.calls.spec import ReplySpec
from tablereason.errors import ParseError
from tablereason.llm.base import LLM, Completion, Message, Request, capabilities_of
from tablereason.llm.constraints import Constraint, describe
from tablereason.llm.errors import ConstraintViolationError

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.trace.record import TraceStep

T = TypeVar("T")


@dataclass
class Reply(Generic[T]):
    """What one :meth:`Door.ask` gave.

    Attributes:
        value: The parsed value of the first choice, or ``None`` when no reply could
            be read within the bound (the step's ``error`` says why) or the spec has
            no parser.
        texts: The choice texts of the last request.
        values: The parsed value of each choice of the last request (``None`` where a
            choice did not parse), when the spec has a parser.
        requests: Requests made.
    """

    value: T | None = None
    texts: list[str] = field(default_factory=list)
    values: list[T | None] = field(default_factory=list)
    requests: int = 0

    @property
    def text(self) -> str:
        """The first choice's text of the last request (``""`` when there was none)."""
        return self.texts[0] if self.texts else ""


def prompt_text(request: Request) -> str:
    """The exact text a request sends, as the trace keeps it.

    A raw prompt is kept as it is; a chat request as its messages, each under a line
    naming its role (``[system]``, ``[user]``), separated by a blank line.

    Example:
        >>> print(prompt_text(Request(messages=(Message(role="system", content="Be brief."),
        ...                                     Message(role="user", content="2 + 2?")))))
        [system]
        Be brief.
        <BLANKLINE>
        [user]
        2 + 2?
    """
    if request.prompt is not None:
        return request.prompt
    return "\n\n".join(f"[{m.role}]\n{m.content}" for m in request.messages or ())


def _endpoint(llm: object, chat: bool) -> str:
    """The endpoint a request reaches through ``llm`` (the first wrapped backend that says)."""
    seen = 0
    while llm is not None and seen < 32:
        endpoint = getattr(llm, "endpoint", None)
        if isinstance(endpoint, str):
            return endpoint
        llm, seen = getattr(llm, "inner", None), seen + 1
    return "chat" if chat else "completion"


def enforced(llm: LLM, constraint: Constraint, *, chat: bool = False) -> bool:
    """Whether ``llm`` enforces ``constraint`` while generating (through any wrappers).

    Example:
        >>> from tablereason.llm import OneOf, ScriptedLLM
        >>> enforced(ScriptedLLM(replies=[]), OneOf(options=("yes", "no")))
        False
    """
    caps = capabilities_of(llm)
    after = constraint.after is not None
    return caps.enforces(constraint.kind, after=after, endpoint=_endpoint(llm, chat))


class Door:
    """Asks one model for every call of a method run, and records each call in its step.

    Args:
        llm: The model.
        site: The call-site prefix (``"chain_of_table"``): a request is accounted
            as ``<site>/<step name>`` unless :meth:`ask` is given its own.
        constrain: Send the specs' constraints where the model enforces them.
        system: A system message: requests become chat messages (this system
            message, then the prompt as the user's), as the published Chain-of-Table
            sends them. ``None``: a raw prompt.
        sampling: The run's sampling, applied to every request
            (:meth:`~tablereason.calls.sampling.Sampling.apply`); each call's own when None.
    """

    def __init__(
        self,
        llm: LLM,
        *,
        site: str,
        constrain: bool = True,
        system: str | None = None,
        sampling: Sampling | None = None,
    ) -> None:
        self.llm = llm
        self.site = site
        self.constrain = constrain
        self.system = system
        self.sampling = sampling or Sampling()

    def enforces(self, kind: str, *, after: bool = False) -> bool:
        """Whether a constraint of ``kind`` would be sent (the door constrains, the model enforces).

        Callers use it to skip building a constraint that would not be sent.
        """
        if not self.constrain:
            return False
        caps = capabilities_of(self.llm)
        return caps.enforces(
            kind, after=after, endpoint=_endpoint(self.llm, self.system is not None)
        )

    def constraint_for(self, spec: ReplySpec[Any]) -> Constraint | None:
        """The constraint a request of ``spec`` is sent with (``None``: sent without)."""
        constraint = spec.constraint
        if constraint is None or not self.constrain:
            return None
        return constraint if enforced(self.llm, constraint, chat=self.system is not None) else None

    def sent_temperature(self, temperature: float) -> float:
        """The temperature a call that asks for ``temperature`` is sent with.

        The run's :class:`Sampling` decides: a set temperature replaces each call's own.
        Methods record this one, not the one they asked for, so a trace shows what was sent.

        Example:
            >>> from tablereason.llm import ScriptedLLM
            >>> Door(ScriptedLLM(replies=[]), site="x",
            ...      sampling=Sampling(temperature=0.7)).sent_temperature(0.0)
            0.7
        """
        return self.sampling.apply(temperature=temperature, seed=None)[0]

    def request(
        self, prompt: str, spec: ReplySpec[Any], *, site: str, constraint: Constraint | None
    ) -> Request:
        """The request of one attempt, sampled as the run's :class:`Sampling` says."""
        temperature, top_p, seed = self.sampling.apply(temperature=spec.temperature, seed=spec.seed)
        common: dict[str, Any] = {
            "n": spec.n,
            "temperature": temperature,
            "top_p": top_p,
            "max_tokens": spec.max_tokens,
            "stop": tuple(spec.stop),
            "seed": seed,
            "constraint": constraint,
            "call_site": site,
        }
        if self.system is None:
            return Request(prompt=prompt, **common)
        messages = (
            Message(role="system", content=self.system),
            Message(role="user", content=prompt),
        )
        return Request(messages=messages, **common)

    def complete(self, step: TraceStep, request: Request) -> Completion:
        """Send one request; record its prompt, replies and usage on ``step``.

        A reply that breaks its constraint is recorded like any other and returned
        with the error raised (:class:`ConstraintViolationError` keeps the reply).

        Raises:
            ConstraintViolationError: The reply breaks its constraint.
            LLMError: The model failed (recorded by the caller, not here).
        """
        step.prompts.append(prompt_text(request))
        try:
            completion = self.llm.complete(request)
        except ConstraintViolationError as error:
            self._record(step, error.completion)
            step.violations += 1
            raise
        self._record(step, completion)
        return completion

    @staticmethod
    def _record(step: TraceStep, completion: Completion) -> None:
        step.usage = step.usage + completion.usage
        step.raw.extend(completion.texts or [""])

    def ask(
        self, step: TraceStep, prompt: str, spec: ReplySpec[T], *, site: str | None = None
    ) -> Reply[T]:
        """Ask, parse, and re-ask within ``spec.reasks``; every attempt is recorded on ``step``.

        Args:
            step: The trace step the call belongs to.
            prompt: The prompt (the user message when the door has a system message).
            spec: What to send and how to read the reply.
            site: The call site for accounting (default ``<site>/<step name>``).

        Returns:
            The :class:`Reply`. Its ``value`` is ``None`` (with ``step.error`` set) when
            no attempt could be read.

        Raises:
            LLMError: The model failed; what was recorded so far stays on ``step``.
        """
        site = site or f"{self.site}/{step.name}"
        constraint = self.constraint_for(spec)
        if constraint is not None:
            step.constraint = describe(constraint)
        reply: Reply[T] = Reply()
        current, first_error = prompt, None
        for attempt in range(spec.reasks + 1):
            request = self.request(current, spec, site=site, constraint=constraint)
            last = attempt == spec.reasks
            reply.requests += 1
            if attempt:
                step.reasks += 1
            try:
                texts = self.complete(step, request).texts or [""]
            except ConstraintViolationError as error:
                texts = error.completion.texts or [""]
                problem = f"the reply breaks its constraint ({describe(error.constraint)})"
                if not last:
                    first_error = first_error or problem
                    step.error = problem
                    current = spec.reask(prompt, texts[0], problem, describe(error.constraint))
                    continue
            reply.texts = list(texts)
            if spec.parse is None:
                return reply
            try:
                reply.values = _parse_all(spec, texts)
            except ParseError as err:
                step.unparsed += 1
                step.error = f"{err} (expected: {err.expected})"
                first_error = first_error or step.error
                current = spec.reask(prompt, texts[0], str(err), err.expected)
                continue
            reply.value = reply.values[0]
            if attempt:
                note = f"parsed after {attempt} re-ask(s); first error: {first_error}"
                step.note = note
                step.error = None
            return reply
        return reply


def _parse_all(spec: ReplySpec[T], texts: Sequence[str]) -> list[T | None]:
    """Each choice parsed; the first must parse (its error is raised), later ones may not."""
    assert spec.parse is not None
    values: list[T | None] = [spec.parse(texts[0])]
    for text in texts[1:]:
        try:
            values.append(spec.parse(text))
        except ParseError:
            values.append(None)
    return values
