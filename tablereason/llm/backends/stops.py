r"""Replies that a line stop cut off inside their leading whitespace.

Servers apply stop strings from the first generated character. Small chat models (and
some completion models) often begin a reply with a newline, so a request that stops at
``"\n"`` or ``"\n\n"`` comes back empty (or blank) although the model was about to write
a usable answer. Backends call :func:`mend_blank_stops` on every reply: a choice that is
blank, was not cut by the token limit, and was asked with a stop made only of
whitespace is asked again without those stops, and the new text is cut here, after its
leading whitespace, at the first stop string of the original request. Replies that are
not blank are never touched, so the cost is one extra request, only when it happens.

Example:
    >>> from tablereason.llm.base import Choice, Request, Usage
    >>> request = Request(prompt="The answer is:", stop=("\n",))
    >>> def ask(again):  # the server, asked without the line stop
    ...     return [Choice(text="\n 1985\nmore text", finish_reason="length")], Usage()
    >>> choices, _ = mend_blank_stops(request, [Choice(text="", finish_reason="stop")], ask)
    >>> choices[0].text
    '1985'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tablereason.llm.base import Choice, Request, Usage

__all__ = ["blank_stops", "cut_after_leading_whitespace", "mend_blank_stops"]

Ask = Callable[[Request], tuple[Sequence[Choice], Usage]]


def blank_stops(stop: Sequence[str]) -> tuple[str, ...]:
    r"""The stop strings made only of whitespace (``"\n"``, ``"\n\n"``).

    Example:
        >>> blank_stops(("\n", "\nQuestion:", "])", "\n\n"))
        ('\n', '\n\n')
    """
    return tuple(s for s in stop if s and not s.strip())


def cut_after_leading_whitespace(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    r"""``text`` without its leading whitespace, up to the first stop string after it.

    Returns:
        The text and whether a stop string was found.

    Example:
        >>> cut_after_leading_whitespace("\n\nf_select_row(row 1)\n\nmore", ("\n\n",))
        ('f_select_row(row 1)', True)
    """
    body = text.lstrip()
    positions = [i for i in (body.find(s) for s in stop if s) if i >= 0]
    if not positions:
        return body, False
    return body[: min(positions)], True


def _cut_short(choice: Choice, request: Request) -> bool:
    return not choice.text.strip() and choice.finish_reason != "length"


def mend_blank_stops(
    request: Request, choices: Sequence[Choice], ask: Ask
) -> tuple[list[Choice], Usage | None]:
    """Ask again for the choices a whitespace stop may have emptied; cut them here.

    Args:
        request: The request the choices answer.
        choices: What the server returned.
        ask: Sends a request to the same backend and returns its choices and usage.

    Returns:
        The choices (blank ones replaced, in order, by the new answers) and the usage of
        the extra request, or the choices unchanged and None when none was needed.
    """
    blank = blank_stops(request.stop)
    short = [i for i, c in enumerate(choices) if _cut_short(c, request)] if blank else []
    if not short:
        return list(choices), None
    kept = tuple(s for s in request.stop if s not in blank)
    again, usage = ask(request.model_copy(update={"stop": kept, "n": len(short)}))
    mended = list(choices)
    for index, choice in zip(short, again, strict=False):
        text, stopped = cut_after_leading_whitespace(choice.text, request.stop)
        reason = "stop" if stopped else choice.finish_reason
        logprobs = choice.logprobs if text == choice.text else None  # they were for the uncut text
        mended[index] = choice.model_copy(
            update={"text": text, "finish_reason": reason, "logprobs": logprobs}
        )
    return mended, usage
