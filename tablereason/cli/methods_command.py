"""The ``tablereason methods`` command: each method's tasks, profiles and options.

Everything it prints comes from :func:`tablereason.cli.method_catalog.describe`, which
reads the method catalog and the settings models; nothing is listed by hand.

Example:
    >>> text = methods_text(["text_to_sql"], detail=False)
    >>> print(text.splitlines()[2])
      options (--option KEY=VALUE): patience=3, max_rows=20, max_tokens=256, constrain=true,
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

from tablereason.cli.method_catalog import MethodInfo, Option, describe
from tablereason.methods.catalog import METHODS
from tablereason.trace.terminal import visible

WIDTH = 100
"""Width the listing is wrapped to."""
SHORT_VALUE = 40
"""Longest default shown in the one-line option list (``tablereason methods NAME``: all)."""


def _value(value: Any, limit: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def _tasks(info: MethodInfo) -> str:
    if not info.takes_task:
        return "none: any table and question (--task is not used)"
    named = [
        f"{t} (reads its files from --data-dir)" if t in info.tasks_needing_data else t
        for t in info.tasks
    ]
    return ", ".join(named) or "none it can build"


def _profiles(info: MethodInfo) -> str:
    ordered = sorted(info.profiles, key=lambda p: p != info.default_profile)
    return ", ".join(f"{p} (the default)" if p == info.default_profile else p for p in ordered)


def _differences(option: Option, limit: int | None) -> str:
    return "; ".join(f"{label}: {_value(v, limit)}" for label, v in option.differences.items())


def _brief(option: Option) -> str:
    """``name=default (paper: x)``, its spaces unbreakable so that wrapping keeps it whole."""
    text = f"{option.name}={_value(option.default, SHORT_VALUE)}"
    differs = _differences(option, SHORT_VALUE)
    return (f"{text} ({differs})" if differs else text).replace(" ", NBSP)


NBSP = "\u00a0"


def _wrapped(label: str, text: str) -> list[str]:
    lines = textwrap.wrap(
        text,
        WIDTH,
        initial_indent=f"  {label}: ",
        subsequent_indent=" " * 6,
        break_on_hyphens=False,
        break_long_words=False,
    )
    return [line.replace(NBSP, " ") for line in lines]


def method_text(info: MethodInfo, *, detail: bool) -> str:
    """One method's entry: the listing's lines, or with ``detail`` one line per option."""
    lines = [f"{info.name}: {info.summary}"]
    lines += _wrapped("tasks (--task)", _tasks(info))
    if info.profiles:
        lines += _wrapped("profiles (--profile)", _profiles(info))
    if not info.options:
        lines.append("  options: none")
    elif not detail:
        briefs = ", ".join(_brief(o) for o in info.options)
        lines += _wrapped("options (--option KEY=VALUE)", briefs)
    else:
        lines.append("  options (--option KEY=VALUE, the value read as JSON when it parses):")
        for option in info.options:
            head = f"    {option.name} ({option.type_text}) = {_value(option.default)}"
            lines.append(head)
            differs = _differences(option, None)
            extra = ([option.description + "."] if option.description else []) + (
                [f"Other profiles: {differs}."] if differs else []
            )
            if extra:
                lines += textwrap.wrap(
                    " ".join(extra), WIDTH, initial_indent=" " * 8, subsequent_indent=" " * 8
                )
    return "\n".join(visible(line) for line in lines)


def methods_text(names: Sequence[str] = (), *, detail: bool | None = None) -> str:
    """The listing of ``names`` (every registered method when empty).

    Args:
        names: Methods to list; unknown names raise
            :class:`~tablereason.errors.UnknownNameError`.
        detail: One line per option; by default when one method is named.
    """
    chosen = list(names) or METHODS.names()
    full = detail if detail is not None else len(names) == 1
    entries = [method_text(describe(name), detail=full) for name in chosen]
    footer = textwrap.fill(
        "Give options to `ask` or `eval` as --option KEY=VALUE (repeatable); "
        "`tablereason methods NAME` describes each option of one method.",
        WIDTH,
    )
    return "\n\n".join([*entries, footer if not full else ""]).rstrip() + "\n"
