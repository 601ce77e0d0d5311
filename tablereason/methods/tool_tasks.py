"""What the tool-using methods (ReWOO, ReAct) share: task text, demos, tools and answers.

A task is ``"hotpotqa"`` (a short free-text answer) or ``"scienceqa"`` (pick one of
the options; the image, when there is one, is referred to by its file path so the
captioner and OCR tools can read it).

Example:
    >>> from tablereason.datasets import Example
    >>> ex = Example(dataset="scienceqa", id="1", question="Which is a mammal?",
    ...              answer="whale", choices=["shark", "whale"])
    >>> print(question_text(ex, "scienceqa"))
    Question: Which is a mammal?
    Options: (A) shark (B) whale
    >>> choose_option("(B)", ["shark", "whale"]), choose_option("a whale", ["shark", "whale"])
    ('whale', 'whale')
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Literal

from tablereason.errors import ConfigurationError

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.datasets import Example
    from tablereason.llm.base import LLM
    from tablereason.tools import Tool

TextTask = Literal["hotpotqa", "scienceqa"]
TASKS: tuple[str, ...] = ("hotpotqa", "scienceqa")

DEMO_IDS: dict[str, tuple[str, ...]] = {
    # HotpotQA dev questions the demos were written from: excluded from tests and benchmarks.
    "hotpotqa": (
        "5ae24abc5542994d89d5b3c3",
        "5ab802085542990e739ec7ca",
        "5ac097b05542996f0d89cc18",
        "5a7605f85542994ccc91868d",
    ),
    # The ScienceQA demos are invented; no problem of the data is used.
    "scienceqa": (),
}

_LETTER = re.compile(r"^(?:\(([A-Ea-e])\)|([A-E])(?:[.):](?:\s|$)|$))")
_ANSWER_PREFIX = re.compile(r"^(?:the\s+)?(?:final\s+)?answer\s*(?:is\b|[:：])\s*:?\s*", re.I)


def check_task(task: str) -> TextTask:
    """Validate a task name.

    Raises:
        ConfigurationError: For an unknown task.
    """
    if task not in TASKS:
        raise ConfigurationError(f"unknown task {task!r}; choose one of {list(TASKS)}")
    return task  # type: ignore[return-value]


def question_text(example: Example | str, task: TextTask) -> str:
    """The task as the model sees it: ``Question: ...`` (ScienceQA adds context, options, image).

    The image is given by its file path, which the captioner and OCR tools read.
    """
    if isinstance(example, str):
        return f"Question: {example.strip()}"
    lines = [f"Question: {example.question.strip()}"]
    if task == "scienceqa":
        if example.context.strip():
            lines.append(f"Context: {example.context.strip()}")
        if example.choices:
            options = " ".join(f"({chr(65 + i)}) {c}" for i, c in enumerate(example.choices))
            lines.append(f"Options: {options}")
        image = str(example.metadata.get("image_file") or "")
        if image:
            lines.append(f"Image: {image}")
    return "\n".join(lines)


def clean_answer(text: str) -> str:
    r"""The first non-empty line of a reply, without an ``Answer:`` prefix or a final period.

    Example:
        >>> clean_answer("\n Answer: Bury St Edmunds.\nMore text")
        'Bury St Edmunds'
    """
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = _ANSWER_PREFIX.sub("", lines[0]).strip() if lines else ""
    return first[:-1].strip() if first.endswith(".") and not first.endswith("..") else first


def choose_option(answer: str, choices: list[str]) -> str:
    """Map a free-text answer to one option, so the answer is always one of the choices.

    Tried in order: the exact text, a letter (``B``, ``(b)``, ``B.``), an option the
    answer contains (the longest), then the most similar option.
    """
    if not choices:
        return answer
    text = answer.strip()
    lowered = {c.strip().lower(): c for c in choices}
    if text.lower() in lowered:
        return lowered[text.lower()]
    letter = _LETTER.match(text)
    if letter:
        index = ord((letter.group(1) or letter.group(2)).upper()) - 65
        if 0 <= index < len(choices):
            return choices[index]
    contained = [c for c in choices if c.strip() and c.strip().lower() in text.lower()]
    if contained:
        return max(contained, key=len)
    scores = [difflib.SequenceMatcher(None, text.lower(), c.lower()).ratio() for c in choices]
    return choices[max(range(len(choices)), key=scores.__getitem__)]


def final_answer(raw: str, example: Example | str, task: TextTask) -> str:
    """The answer to record: the cleaned reply, mapped to an option for ScienceQA."""
    answer = clean_answer(raw)
    if task == "scienceqa" and not isinstance(example, str) and example.choices:
        return choose_option(answer, example.choices)
    return answer


def default_tools(
    task: TextTask, llm: LLM, *, react: bool = False, data_dir: str | None = None
) -> list[Tool]:
    """The tools a method uses when none are given.

    HotpotQA: the document store over the HotpotQA paragraphs (named ``Wikipedia`` for
    ReWOO, ``Search`` and ``Lookup`` for ReAct) and, for ReWOO, the LLM tool.
    ScienceQA: image captioner, OCR and the LLM tool.
    """
    from tablereason.tools import ToolContext, build_tools
    from tablereason.tools.docstore import WikiLookup, WikiSearch

    context = ToolContext(llm=llm, data_dir=data_dir)
    if task == "hotpotqa":
        if react:
            explorer = context.explorer()
            return [WikiSearch(explorer, name="Search"), WikiLookup(explorer, name="Lookup")]
        return build_tools(["wikipedia", "llm"], context)
    return build_tools(["image_captioner", "ocr", "llm"], context)
