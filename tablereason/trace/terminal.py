r"""Text bound for a terminal, with control characters shown rather than obeyed.

Table cells, file names and model replies can hold characters a terminal acts on: ESC
and CSI sequences recolour text, move the cursor, clear the screen or set the window
title; BEL rings; a carriage return overwrites the line; bidirectional overrides reorder
what is shown. :func:`visible` replaces each with a backslash escape (``\x1b``,
``\x9b``, ``\u202e``), so the text reads the same and the terminal does nothing.

Example:
    >>> print(visible("\x1b[2Jred\x07"))
    \x1b[2Jred\x07
"""

from __future__ import annotations

import re

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
# C0 and C1 controls, DEL, the Unicode line separators, and the bidirectional embeddings,
# overrides and isolates (marks such as U+200F, which RTL text needs, are kept).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")
_UNSAFE_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069]")
# What json.dumps(..., ensure_ascii=False) leaves raw: everything above but C0.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u2028-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: object, *, lines: bool = False) -> str:
    r"""``text`` with every control character written as a visible escape.

    Args:
        text: What to show (turned into text with ``str``).
        lines: Keep line breaks and tabs (free text such as a reply or an error);
            otherwise they are escaped too (a table cell on one line). A carriage
            return is always escaped, except in a Windows line break when ``lines``.

    Example:
        >>> visible("a\nb\tc"), visible("a\r\nb\rc", lines=True)
        ('a\\nb\\tc', 'a\nb\\rc')
    """
    value = str(text)
    if lines:
        return _UNSAFE_IN_LINES.sub(_escape, value.replace("\r\n", "\n"))
    return _UNSAFE.sub(_escape, value)


def visible_json(text: str) -> str:
    r"""JSON text (from ``json.dumps``) with the characters it leaves raw escaped.

    ``json.dumps`` escapes C0 controls but not DEL, C1 controls (``\x9b`` is CSI) or
    bidirectional overrides; these become ``\u`` escapes, so the JSON means the same.

    Example:
        >>> visible_json('["\x9b2J"]')
        '["\\u009b2J"]'
    """
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
