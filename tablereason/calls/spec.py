r"""What one model call asks for and how its reply is read: ``ReplySpec``.

A spec is data: the parser that turns the reply into a typed value (or ``None``: the
texts as they are), the constraint the reply's slot must meet (built by the caller from
the table and what it decided so far; the door sends it only where the backend
enforces it), how many re-asks a reply that cannot be read may cost and how a re-ask
prompt is written, the token limit, stop strings and sampling.

Example:
    >>> spec = ReplySpec(parse=int, reasks=1, max_tokens=4, stop=("\\n",))
    >>> spec.parse(" 12"), spec.reasks
    (12, 1)
    >>> print(repair_prompt("Count:", " many", "no number", "a number"))
    Count: many
    <BLANKLINE>
    That reply could not be read: no number. Expected: a number. Answer again.
    Count:
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from tablereason.llm.constraints import Constraint

T = TypeVar("T")

Reask = Callable[[str, str, str, str], str]
"""``reask(prompt, reply, problem, expected) -> the next prompt``."""


def repair_prompt(prompt: str, reply: str, problem: str, expected: str) -> str:
    """The re-ask prompt: the failed reply, what was wrong, and the prompt's last line again.

    The prompt itself comes first, unchanged, so a model that keeps the evaluated
    prefix of the last request evaluates only the new text.

    Args:
        prompt: The prompt of the first attempt.
        reply: The reply that could not be read.
        problem: What was wrong with it.
        expected: What a reply should look like.
    """
    cue = prompt.rsplit("\n", 1)[-1]
    return (
        f"{prompt}{reply}\n\nThat reply could not be read: {problem}. "
        f"Expected: {expected}. Answer again.\n{cue}"
    )


def same_prompt(prompt: str, reply: str, problem: str, expected: str) -> str:
    """A re-ask that sends the first prompt again as it was (for sampled replies)."""
    return prompt


@dataclass(frozen=True)
class ReplySpec(Generic[T]):
    """One model call: what is sent besides the prompt, and how the reply is read.

    Attributes:
        parse: Reads the reply text into a value; raises
            :class:`~tablereason.errors.ParseError` when it cannot. ``None``: no
            parsing, the texts are the result (sampled replies that are voted on).
        constraint: What the reply (or its slot after a marker) must be. Sent only
            when the door constrains and the backend enforces this kind; otherwise
            the reply is read as it comes.
        reasks: Re-asks allowed after a reply that does not parse or breaks its
            constraint (0: one request, as the published methods do).
        reask: Writes the re-ask prompt (:func:`repair_prompt` by default).
        max_tokens: Completion token limit.
        stop: Stop strings.
        n: Completions asked for (all parsed when ``parse`` is given; the first is
            the value).
        temperature: Sampling temperature.
        seed: Sampling seed, sent with sampled requests.
    """

    parse: Callable[[str], T] | None = None
    constraint: Constraint | None = None
    reasks: int = 0
    reask: Reask = repair_prompt
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    n: int = 1
    temperature: float = 0.0
    seed: int | None = None
