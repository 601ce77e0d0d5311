"""The Chameleon planner: prompt, strict plan parser, validity rules and default plans.

The planner reply must contain one list of module names, written as a JSON array
or a Python-style list literal (``[Row_Lookup, "program generator"]`` also reads).
It is tokenised, never evaluated. Names match case- and separator-insensitively
against the task's whitelist from :data:`~.inventory.MODULES`.

Validity rules (:func:`check_plan`), each with a name reported in the trace:

- ``empty``: the plan names at least one module;
- ``unknown``: every name is one of the task's modules (parse time);
- ``answer_generator``: the answer generator is present (TabMWP, as published) and,
  with ``answer_last``, last;
- ``ends_with_solution`` (ScienceQA): the plan ends with solution generator, answer
  generator, as published;
- ``order`` (with ``enforce_order``): the verifier and executor come after the
  generator, and the executor after the verifier; neither appears without a
  generator. The published code means to check this but its test never fires;
- ``duplicate`` (default profile): no module twice;
- ``answer_source`` (default profile, TabMWP): a solution generator or program
  executor comes before the answer generator.

An invalid or unparsable plan falls back to the task's default plan. A verifier
directly after the generator merges into one generate-verify loop.

Example:
    >>> parse_module_plan('["Program_Generator", "program executor", "ANSWER-GENERATOR"]', "tabmwp")
    ['program_generator', 'program_executor', 'answer_generator']
"""

from __future__ import annotations

import json
import re

from tablereason.errors import ParseError, did_you_mean
from tablereason.methods.chameleon.inventory import MERGED_PROGRAM, MODULES, task_modules
from tablereason.methods.chameleon.settings import ChameleonSettings

DEFAULT_PLANS: dict[str, tuple[str, ...]] = {
    "tabmwp": ("program_generator", "program_verifier", "program_executor", "answer_generator"),
    "scienceqa": ("solution_generator", "answer_generator"),
}

_LIST = re.compile(r"\[([^\[\]]*)\]", re.S)
_ITEM = re.compile(r"""^\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z][A-Za-z0-9 _\-]*?))\s*$""")


def normalise_name(name: str) -> str:
    """Lower-case a module name and turn spaces and hyphens into single underscores.

    Example:
        >>> normalise_name(" Knowledge-Retrieval ")
        'knowledge_retrieval'
    """
    return re.sub(r"[\s_\-]+", "_", name.strip().lower()).strip("_")


def _aliases(task: str) -> dict[str, str]:
    names = task_modules(task)
    table = {n: n for n in names}
    if task == "scienceqa":
        table["bing_search"] = "search"  # the published name
    return table


def parse_module_plan(text: str, task: str) -> list[str]:
    """Parse the first list in ``text`` into canonical module names for ``task``.

    Raises:
        ParseError: No list, a malformed item, or a name outside the task's whitelist
            (with the closest name). The error keeps the raw text.

    Example:
        >>> parse_module_plan("Modules: ['solution_generator', 'answer_generator']", "scienceqa")
        ['solution_generator', 'answer_generator']
    """
    expected = f"a list of module names from {task_modules(task)}"
    match = _LIST.search(text)
    if match is None:
        raise ParseError("the planner reply holds no [...] list", raw=text, expected=expected)
    body = match.group(1)
    items: list[str]
    try:
        loaded = json.loads(match.group(0))
        if not isinstance(loaded, list) or not all(isinstance(i, str) for i in loaded):
            raise ValueError("not a list of strings")
        items = loaded
    except ValueError:
        items = []
        for piece in body.split(","):
            if not piece.strip():
                continue
            found = _ITEM.match(piece)
            if found is None:
                raise ParseError(
                    f"malformed plan item {piece.strip()!r}", raw=text, expected=expected
                ) from None
            items.append(next(g for g in found.groups() if g is not None))
    aliases = _aliases(task)
    plan = []
    for item in items:
        name = normalise_name(item)
        if name not in aliases:
            message = did_you_mean(name, aliases, kind=f"{task} module")
            raise ParseError(message, raw=text, expected=expected)
        plan.append(aliases[name])
    return plan


def check_plan(plan: list[str], task: str, settings: ChameleonSettings) -> list[str]:
    """Names of the validity rules ``plan`` breaks (empty when valid).

    Example:
        >>> from tablereason.methods.chameleon.settings import profile_settings
        >>> check_plan(["program_executor", "program_generator", "answer_generator"],
        ...            "tabmwp", profile_settings("default", "tabmwp"))
        ['order']
    """
    broken: list[str] = []
    if not plan:
        return ["empty"]
    allowed = set(task_modules(task))
    if any(name not in allowed for name in plan):
        broken.append("unknown")
    if task == "scienceqa":
        if plan[-2:] != ["solution_generator", "answer_generator"]:
            broken.append("ends_with_solution")
    else:
        if "answer_generator" not in plan or (
            settings.answer_last and plan[-1] != "answer_generator"
        ):
            broken.append("answer_generator")
    if settings.enforce_order and not _ordered(plan):
        broken.append("order")
    if settings.profile == "default":
        if len(set(plan)) != len(plan):
            broken.append("duplicate")
        if task == "tabmwp" and "answer_generator" in plan:
            before = plan[: plan.index("answer_generator")]
            if not {"solution_generator", "program_executor"} & set(before):
                broken.append("answer_source")
    return broken


def _ordered(plan: list[str]) -> bool:
    def first(name: str) -> int | None:
        return plan.index(name) if name in plan else None

    generator, verifier, executor = (
        first("program_generator"),
        first("program_verifier"),
        first("program_executor"),
    )
    if generator is None:
        return verifier is None and executor is None
    if verifier is not None and verifier < generator:
        return False
    return executor is None or (executor > generator and (verifier or 0) < executor)


def merge_program_steps(plan: list[str]) -> list[str]:
    """Replace a program generator directly followed by a verifier with the merged loop.

    Example:
        >>> merge_program_steps(["program_generator", "program_verifier", "answer_generator"])
        ['program_generator_and_verifier', 'answer_generator']
    """
    out: list[str] = []
    skip = False
    for index, name in enumerate(plan):
        if skip:
            skip = False
            continue
        following = plan[index + 1] if index + 1 < len(plan) else None
        if name == "program_generator" and following == "program_verifier":
            out.append(MERGED_PROGRAM)
            skip = True
        else:
            out.append(name)
    return out


def choose_plan(
    text: str, task: str, settings: ChameleonSettings
) -> tuple[list[str], list[str], str | None]:
    """Parse and check a planner reply; fall back to the default plan when it is unusable.

    Returns:
        ``(plan, parsed, problem)``: the plan to run (not yet merged), what was parsed
        (empty on a parse failure), and why the fallback was taken (None when not).

    Example:
        >>> from tablereason.methods.chameleon.settings import profile_settings
        >>> choose_plan("[]", "scienceqa", profile_settings("default", "scienceqa"))
        (['solution_generator', 'answer_generator'], [], 'invalid plan: empty')
    """
    try:
        parsed = parse_module_plan(text, task)
    except ParseError as err:
        return list(DEFAULT_PLANS[task]), [], f"unparsable plan: {err}"
    broken = check_plan(parsed, task, settings)
    if broken:
        return list(DEFAULT_PLANS[task]), parsed, "invalid plan: " + ", ".join(broken)
    return parsed, parsed, None


def module_descriptions(task: str) -> str:
    """One ``name: description`` line per module of ``task``, for the planner prompt.

    Example:
        >>> module_descriptions("scienceqa").splitlines()[0].startswith("query_generator: ")
        True
    """
    return "\n".join(f"{n}: {MODULES.get(n).description}" for n in task_modules(task))
