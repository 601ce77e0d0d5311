"""The Chameleon module inventory: every module with its description, tasks and cache effects.

A module is registered once in :data:`MODULES` with the tasks it serves, the
description the planner prompt shows, the cache fields it reads to build its
input (``update_input``) and the cache fields it may write (``update_cache``).
The planner's whitelist, its prompt and the runner all read this registry; a test
checks that running a module never touches a field it does not declare.

Example:
    >>> MODULES.get("row_lookup").abbreviation
    'RL'
    >>> task_modules("scienceqa")[:2]
    ['query_generator', 'search']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tablereason.registry import Registry

Task = Literal["tabmwp", "scienceqa"]
TASKS: tuple[Task, ...] = ("tabmwp", "scienceqa")

#: The virtual module that replaces a program generator directly followed by a verifier.
MERGED_PROGRAM = "program_generator_and_verifier"


@dataclass(frozen=True)
class ModuleSpec:
    """One Chameleon module.

    Attributes:
        name: Canonical snake_case name (``"row_lookup"``).
        abbreviation: Short form used in reports (``"RL"``).
        description: What the module does, shown to the planner.
        tasks: Tasks whose plans may use it.
        update_input: Cache fields the module reads to build its input.
        update_cache: Cache fields the module may write.
        uses_llm: Whether the module asks the model.
    """

    name: str
    abbreviation: str
    description: str
    tasks: tuple[Task, ...]
    update_input: tuple[str, ...]
    update_cache: tuple[str, ...]
    uses_llm: bool = True


MODULES: Registry[ModuleSpec] = Registry("Chameleon module")

_SPECS = (
    # ------------------------------------------------------------------ TabMWP
    ModuleSpec(
        "row_lookup", "RL",
        "Keeps only the table rows the question needs. Use it for tables with more than "
        "three rows when only some rows matter.",
        ("tabmwp",), ("question", "table", "context"), ("table",),
    ),
    ModuleSpec(
        "column_lookup", "CL",
        "Keeps only the table columns the question needs. Use it for tables with more than "
        "two columns when only some columns matter.",
        ("tabmwp",), ("question", "table", "context"), ("table",),
    ),
    ModuleSpec(
        "table_verbalizer", "TV",
        "Describes the table in plain sentences. Helpful for stem-and-leaf plots, function "
        "tables and pay stubs.",
        ("tabmwp",), ("question", "table", "context"), ("context",),
    ),
    ModuleSpec(
        "knowledge_retrieval", "KR",
        "Writes down background knowledge (formulas, definitions) the question needs, such "
        "as how to read a stem-and-leaf plot or compute a probability.",
        ("tabmwp", "scienceqa"), ("question", "table", "context", "evidence"),
        ("context", "evidence"),
    ),
    ModuleSpec(
        "program_generator", "PG",
        "Writes a Python program that computes the answer and stores it in `ans`.",
        ("tabmwp",), ("question", "table", "context"), ("program",),
    ),
    ModuleSpec(
        "program_verifier", "PV",
        "Checks that the program assigns `ans` and runs to a non-empty value.",
        ("tabmwp",), ("program",), ("program_verified",), uses_llm=False,
    ),
    ModuleSpec(
        "program_executor", "PE",
        "Runs the program and reads the value of `ans`.",
        ("tabmwp",), ("program",), ("program_value",), uses_llm=False,
    ),
    # ------------------------------------------------------------------ ScienceQA
    ModuleSpec(
        "query_generator", "QG",
        "Writes a short web search query for the facts the question needs.",
        ("scienceqa",), ("question", "evidence"), ("query",),
    ),
    ModuleSpec(
        "search", "BS",
        "Searches for the query (or the question) and adds the best snippets as evidence.",
        ("scienceqa",), ("query", "question"), ("evidence",), uses_llm=False,
    ),
    ModuleSpec(
        "image_captioner", "IC",
        "Adds a one-sentence caption of the question's image. Use it when the question has "
        "an image.",
        ("scienceqa",), ("image",), ("evidence",), uses_llm=False,
    ),
    ModuleSpec(
        "text_detector", "TD",
        "Adds the text written in the question's image (labels, names on a map).",
        ("scienceqa",), ("image",), ("evidence",), uses_llm=False,
    ),
    # ------------------------------------------------------------------ both
    ModuleSpec(
        "solution_generator", "SG",
        "Reasons step by step over everything gathered so far and ends with the answer.",
        ("tabmwp", "scienceqa"), ("question", "table", "context", "evidence"), ("solution",),
    ),
    ModuleSpec(
        "answer_generator", "AG",
        "Turns the program value or the solution into the final answer. Always last.",
        ("tabmwp", "scienceqa"), ("program_value", "solution"), ("answer", "raw_answer"),
        uses_llm=False,
    ),
)  # fmt: skip

for _spec in _SPECS:
    MODULES.register(_spec.name, _spec)

_ORDER = {
    "tabmwp": [
        "row_lookup", "column_lookup", "table_verbalizer", "knowledge_retrieval",
        "program_generator", "program_verifier", "program_executor",
        "solution_generator", "answer_generator",
    ],
    "scienceqa": [
        "query_generator", "search", "image_captioner", "text_detector",
        "knowledge_retrieval", "solution_generator", "answer_generator",
    ],
}  # fmt: skip


TABLE_QUESTION_TASKS = {"wikitq": "tabmwp"}
"""Tasks that name a question over the user's own table, and the module set they run:
``wikitq`` (``ask``'s default task, a short answer) runs the TabMWP modules."""


def modules_task(task: str) -> str:
    """The module set a task runs: its own, or TabMWP's for a question over a user's table.

    Raises:
        ConfigurationError: For a task Chameleon does not take.

    Example:
        >>> modules_task("wikitq"), modules_task("scienceqa")
        ('tabmwp', 'scienceqa')
    """
    task = TABLE_QUESTION_TASKS.get(task, task)
    task_modules(task)  # validates the name
    return task


def task_modules(task: str) -> list[str]:
    """The modules a task's planner may choose, in prompt order.

    Example:
        >>> len(task_modules("tabmwp")), len(task_modules("scienceqa"))
        (9, 7)
    """
    from tablereason.errors import ConfigurationError

    if task not in _ORDER:
        raise ConfigurationError(
            f"unknown Chameleon task {task!r}; choose 'tabmwp', 'scienceqa' or 'wikitq' "
            "(a question over your own table, answered with the TabMWP modules)"
        )
    return list(_ORDER[task])


def abbreviate(plan: list[str]) -> str:
    """A plan in short form, for reports.

    Example:
        >>> abbreviate(["program_generator", "program_executor", "answer_generator"])
        'PG,PE,AG'
    """
    names = []
    for name in plan:
        if name == MERGED_PROGRAM:
            names.append("PG+PV")
        else:
            names.append(MODULES.get(name).abbreviation if name in MODULES else name)
    return ",".join(names)
