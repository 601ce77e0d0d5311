"""Fail closed: every reply to a constrained request is checked, whatever the server promised.

Servers have accepted constraints with status 200 and ignored them (a field they do not
know, a version that dropped it). So each backend holds an :class:`Enforcement`: after
every call, each choice of a constrained request is checked against the constraint
(:func:`~tablereason.llm.constraints.satisfies`). A reply that breaks it raises
:class:`~tablereason.llm.errors.ConstraintViolationError` (the caller re-asks; usage
counts it), whether the constraint was sent or not.

When the constraint *was* sent and the reply is not even the start of a valid one (so
the server did not apply it; a reply cut by the token limit or a stop string inside its
slot does not count), the backend stops trusting the server for as long as it lives (one
run, usually): one warning is logged, and constraints are no longer sent to it. Sending
them on would buy nothing (a server that ignored one field ignores it again) and could
cost a wrong reply (a server that applied it wrongly); its replies are checked either way.

Example:
    >>> from tablereason.llm.base import Choice, Completion, OneOf, Request
    >>> gate = Enforcement("demo")
    >>> request = Request(prompt="?", constraint=OneOf(options=("yes", "no")))
    >>> gate.check(request, Completion(choices=(Choice(text="yes"),)), sent=True).text
    'yes'
    >>> gate.check(request, Completion(choices=(Choice(text="maybe"),)), sent=False)
    Traceback (most recent call last):
    ...
    tablereason.llm.errors.ConstraintViolationError: demo: reply 0 breaks its constraint \
(one of ['yes', 'no']): 'maybe'
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from tablereason.llm.base import Completion, Request
from tablereason.llm.constraints import describe, satisfies, viable
from tablereason.llm.errors import ConstraintViolationError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EnforcementStats:
    """What one backend's checks found.

    Attributes:
        sent: Constrained requests whose constraint went to the model or server.
        checked: Constrained replies checked.
        violations: Replies that broke their constraint.
        trusted: Whether constraints are still sent.
    """

    sent: int
    checked: int
    violations: int
    trusted: bool


class Enforcement:
    """One backend's trust in its server, and the check of its constrained replies.

    Args:
        where: Names the backend in messages (``"vllm at http://..."``).
    """

    def __init__(self, where: str) -> None:
        self.where = where
        self.trusted = True
        self._lock = threading.Lock()
        self._sent = self._checked = self._violations = 0

    def stats(self) -> EnforcementStats:
        """Counts so far."""
        with self._lock:
            return EnforcementStats(self._sent, self._checked, self._violations, self.trusted)

    def will_send(self, request: Request) -> bool:
        """Whether the constraint of ``request`` may go to the server.

        It may when there is one and the server is still trusted.
        """
        return request.constraint is not None and self.trusted

    def check(self, request: Request, completion: Completion, *, sent: bool) -> Completion:
        """Return ``completion`` when every choice meets the request's constraint.

        Args:
            request: The request answered.
            completion: The reply.
            sent: Whether the constraint went to the server with the request.

        Raises:
            ConstraintViolationError: A choice breaks the constraint.
        """
        constraint = request.constraint
        if constraint is None:
            return completion
        broken = [i for i, c in enumerate(completion.choices) if not satisfies(constraint, c.text)]
        ignored = sent and any(not viable(constraint, completion.choices[i].text) for i in broken)
        with self._lock:
            self._checked += 1
            self._sent += int(sent)
            self._violations += int(bool(broken))
            warn = ignored and self.trusted
            if ignored:
                self.trusted = False
        if warn:
            log.warning(
                "tablereason: warning: %s was sent a constraint (%s) and replied with text "
                "that breaks it; from now on it is not trusted to enforce constraints: "
                "none are sent to it, and its replies are still checked",
                self.where,
                describe(constraint),
            )
        if not broken:
            return completion
        first = completion.choices[broken[0]]
        cut = " (cut short)" if first.finish_reason == "length" else ""
        raise ConstraintViolationError(
            f"{self.where}: reply {broken[0]} breaks its constraint ({describe(constraint)})"
            f"{cut}: {first.text[:200]!r}",
            completion=completion,
            constraint=constraint,
        )
