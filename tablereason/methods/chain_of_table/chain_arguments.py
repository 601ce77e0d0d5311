"""Arguments a generated chain already gives (``f_select_row(row 1, row 3)``), used without a call.

With ``plan_arguments`` (efficient profile) the planner keeps the argument text of
each operation its last chain named, as a :class:`ChainArgument`, and the run loop
hands an operation its own. :func:`from_chain` applies it when it parses and names
something of the table; :func:`take_fallback` decides what an unusable one leads to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tablereason.errors import ParseError
from tablereason.methods.chain_of_table.session import Session
from tablereason.trace.record import TraceStep

T = TypeVar("T")


@dataclass(frozen=True)
class ChainArgument:
    """The argument text a generated chain gave an operation.

    Attributes:
        text: What stood between the call's parentheses (``row 1, row 3``); empty when
            the chain named the operation without an argument (``f_select_row()``).
        rows: Rows of the table when the chain was generated (row numbers refer to it).
        added: Columns the table has gained since the chain was generated (by its own
            add_column), which its later calls could not name.
    """

    text: str
    rows: int
    added: tuple[str, ...] = ()

    @property
    def missing(self) -> bool:
        """Whether the chain named the operation without an argument."""
        return not self.text.strip()


def from_chain(
    step: TraceStep, given: ChainArgument | None, parse: Callable[[str], T | None]
) -> T | None:
    """The operation's arguments as the generated chain gave them, when usable.

    ``parse`` returns ``None`` (or raises :class:`ParseError`) when the text names
    nothing usable; the text is then kept in the step's arguments as
    ``plan_arguments`` and the operation asks the model as usual. A usable argument
    costs no model call.
    """
    if given is None:
        return None
    try:
        value = parse(given.text)
    except ParseError:
        value = None
    if value is None:
        step.arguments["plan_arguments"] = given.text
        return None
    step.prompt_name = None
    step.arguments["from_chain"] = True
    step.note = f"arguments from the generated chain ({given.text}); no model call"
    return value


def rejected_text(step: TraceStep) -> str | None:
    """The chain's argument text that :func:`from_chain` found unusable, if any."""
    text = step.arguments.get("plan_arguments")
    return None if text is None else str(text)


def take_fallback(session: Session, step: TraceStep) -> bool:
    """Whether the step takes the reference's fallback instead of asking the model.

    True when the chain gave this step an argument that names nothing usable and
    ``ask_when_plan_unusable`` is off. The caller then applies the fallback for an
    unusable reply (all rows, all columns, skip) without a model call, so the step's
    prompt name is cleared here. A chain that named the step without any argument
    is not a fallback: the step asks once (:func:`reasks_for`).
    """
    text = rejected_text(step)
    if text is None or not text.strip() or session.settings.ask_when_plan_unusable:
        return False
    step.prompt_name = None
    return True


def reasks_for(given: ChainArgument | None) -> int | None:
    """Re-asks of a step's own call: none when the chain named the step without an argument.

    The chain chose the operation but not what it works on, so the model is asked once;
    a reply that cannot be read then takes the usual fallback rather than a second call.
    ``None``: the settings' bound (``repairs``).

    Example:
        >>> reasks_for(ChainArgument(text="", rows=3)), reasks_for(None)
        (0, None)
    """
    return 0 if given is not None and given.missing else None
