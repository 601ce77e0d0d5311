r"""Reading a ReWOO plan: ``Plan:`` lines and ``#E<n> = Tool[input]`` evidence lines.

Two readers share one typed result, :class:`ParsedPlan`:

* :func:`parse_worker_plan` (default profile) accepts any number of steps, spacing and case
  variations (``#e3 : llm [ ... ]``), bullets and bold markers, a plan and its
  evidence line on one line, inputs with nested brackets or spread over several
  lines, and falls back to JSON (a list of ``{"plan", "tool", "input"}`` objects,
  or ``{"steps": [...]}``) when no evidence line is found. Lines it cannot read
  are kept in ``malformed``; nothing raises.
* :func:`parse_worker_plan_paper` reproduces the reference parser: only lines that start
  at column 0 count, ``#E10`` and above become the literal text "No evidence
  found", and an evidence line without ``=`` makes the whole run fail (raises
  :class:`~tablereason.errors.ParseError`, which the paper profile retries).

Evidence references (``#E2`` inside an input) become a dependency graph;
:func:`execution_order` groups steps into waves that can run concurrently.

Example:
    >>> plan = parse_worker_plan("Plan: find X\n#E1 = Wikipedia[X]\nPlan: ask\n#E2 = LLM[Who? #E1]")
    >>> [(s.var, s.tool, s.input, s.depends_on) for s in plan.steps]
    [('#E1', 'Wikipedia', 'X', []), ('#E2', 'LLM', 'Who? #E1', ['#E1'])]
    >>> execution_order(plan.steps)
    [['#E1'], ['#E2']]
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tablereason.errors import ParseError

REFERENCE = re.compile(r"#E(\d+)(?!\d)")
_PLAN = re.compile(r"^(?:step\s*\d+\s*[:.)-]?\s*)?plan\s*\d*\s*[:：]\s*(.*)$", re.I)
_EVIDENCE = re.compile(r"^#\s*E\s*(\d+)\s*(?::=|=|:)\s*(.*)$", re.I | re.S)
_INLINE_EVIDENCE = re.compile(r"\s(?=#\s*E\s*\d+\s*(?::=|=)\s*\S)", re.I)
_CALL = re.compile(r"^\s*([A-Za-z][\w .-]*?)\s*\[(.*)$", re.S)
_BULLET = re.compile(r"^\s*(?:[-*•]\s+|\d+[.)]\s+)?")
_EXPECTED = "lines 'Plan: <text>' each followed by '#E<n> = Tool[input]'"


class PlanStep(BaseModel):
    """One evidence step: its variable, the plan that motivated it, and the tool call.

    ``tool`` is empty when the call had no ``Tool[...]`` form; the worker then uses
    the call text itself as the evidence (as the reference does).
    """

    model_config = ConfigDict(frozen=True)

    var: str
    plan: str = ""
    tool: str = ""
    input: str = ""
    call: str = ""
    depends_on: list[str] = Field(default_factory=list)


class ParsedPlan(BaseModel):
    """The steps read from a planner reply, with everything that could not be read."""

    steps: list[PlanStep] = Field(default_factory=list)
    plans: list[str] = Field(default_factory=list)
    malformed: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    format: Literal["text", "json", "none"] = "none"
    raw: str = ""

    def step(self, var: str) -> PlanStep | None:
        """The step that defines ``var``, if any."""
        return next((s for s in self.steps if s.var == var), None)


def references(text: str) -> list[str]:
    """Evidence variables referenced in ``text``, in first-use order (``#E1`` is not ``#E10``).

    Example:
        >>> references("compare #E10 with #E1 and #E10")
        ['#E10', '#E1']
    """
    seen: dict[str, None] = {}
    for match in REFERENCE.finditer(text):
        seen.setdefault(f"#E{int(match.group(1))}", None)
    return list(seen)


def split_call(call: str) -> tuple[str, str, bool]:
    """``Tool[input]`` to (tool, input, closed). The input runs to the last ``]``.

    Example:
        >>> split_call("LLM[compare [a] and [b]]")
        ('LLM', 'compare [a] and [b]', True)
        >>> split_call("Wikipedia[Oslo")
        ('Wikipedia', 'Oslo', False)
    """
    match = _CALL.match(call)
    if not match:
        return "", call.strip(), True
    tool, rest = match.group(1).strip(), match.group(2)
    end = rest.rfind("]")
    if end < 0:
        return tool, rest.strip(), False
    return tool, rest[:end].strip(), True


def _clean(line: str) -> str:
    line = line.replace("**", "").replace("`", "")
    return _BULLET.sub("", line, count=1).strip()


def _lines(text: str) -> list[str]:
    out: list[str] = []
    for raw in text.splitlines():
        # "Plan: ... #E1 = Tool[...]" on one line becomes two lines.
        out.extend(part for part in _INLINE_EVIDENCE.split(raw) if part.strip())
    return out


def _finish(plan: ParsedPlan, order: list[str], found: dict[str, PlanStep]) -> ParsedPlan:
    defined = set(found)
    steps = []
    for var in order:
        step = found[var]
        refs = [r for r in references(step.input) if r != var]
        if var in references(step.input):
            plan.warnings.append(f"{var} refers to itself; the reference is left as text")
        for ref in refs:
            if ref not in defined:
                plan.warnings.append(f"{var} refers to {ref}, which no step defines")
        deps = [r for r in refs if r in defined]
        steps.append(step.model_copy(update={"depends_on": deps}))
    plan.steps = steps
    return plan


def parse_worker_plan(text: str) -> ParsedPlan:
    r"""Read a planner reply leniently (default profile); never raises.

    Args:
        text: The planner's reply (with any ``Plan:`` prefix the prompt supplied).

    Returns:
        The parsed plan. When neither the text format nor JSON yields a step,
        ``steps`` is empty and ``format`` is ``"none"``.

    Example:
        >>> p = parse_worker_plan("PLAN 1: look\n  #e1 : wikipedia [Oslo]\nnonsense")
        >>> p.steps[0].tool, p.steps[0].input, p.malformed
        ('wikipedia', 'Oslo', ['nonsense'])
    """
    plan = ParsedPlan(raw=text)
    found: dict[str, PlanStep] = {}
    order: list[str] = []
    current_plan = ""
    open_var: str | None = None  # an evidence line whose "[" is not closed yet
    for raw_line in _lines(text):
        line = _clean(raw_line)
        if not line:
            continue
        if open_var is not None and (_PLAN.match(line) or _EVIDENCE.match(line)):
            plan.warnings.append(f"{open_var} has no closing ']'; its input ends at its line")
            open_var = None
        if open_var is not None:
            step = found[open_var]
            call = step.call + "\n" + line
            tool, inp, closed = split_call(call)
            found[open_var] = step.model_copy(update={"call": call, "input": inp})
            open_var = None if closed else open_var
            continue
        plan_match = _PLAN.match(line)
        if plan_match:
            current_plan = plan_match.group(1).strip()
            plan.plans.append(current_plan)
            continue
        evidence = _EVIDENCE.match(line)
        if evidence:
            var = f"#E{int(evidence.group(1))}"
            call = evidence.group(2).strip()
            tool, inp, closed = split_call(call)
            if var in found:
                plan.warnings.append(f"{var} is defined twice; the later definition is used")
                order.remove(var)
            found[var] = PlanStep(var=var, plan=current_plan, tool=tool, input=inp, call=call)
            order.append(var)
            open_var = None if closed else var
            continue
        plan.malformed.append(raw_line.strip())
    if open_var is not None:
        plan.warnings.append(f"{open_var} has no closing ']'; its input runs to the end")
    if found:
        plan.format = "text"
        return _finish(plan, order, found)
    json_steps = _json_steps(text)
    if json_steps:
        plan.format = "json"
        plan.malformed = []
        plan.plans = [s.plan for s in json_steps]
        return _finish(plan, [s.var for s in json_steps], {s.var: s for s in json_steps})
    return plan


def _json_candidates(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    out = []
    for i, ch in enumerate(text):
        if ch in "[{":
            try:
                value, _ = decoder.raw_decode(text[i:])
            except json.JSONDecodeError:
                continue
            out.append(value)
            if isinstance(value, (list, dict)) and value:
                break
    return out


def _field(item: dict[str, Any], *names: str) -> str:
    lowered = {str(k).lower(): v for k, v in item.items()}
    for name in names:
        if name in lowered and lowered[name] is not None:
            return str(lowered[name]).strip()
    return ""


def _json_steps(text: str) -> list[PlanStep]:
    for value in _json_candidates(text):
        items = value.get("steps") or value.get("plan") if isinstance(value, dict) else value
        if not isinstance(items, list):
            continue
        steps: list[PlanStep] = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            tool = _field(item, "tool", "action", "worker")
            inp = _field(item, "input", "tool_input", "query", "argument")
            var = _field(item, "evidence", "var", "variable", "id", "name")
            var = f"#E{int(m.group(1))}" if (m := re.search(r"(\d+)", var)) else f"#E{i + 1}"
            if not tool:
                tool, inp, _ = split_call(_field(item, "call"))
            if tool:
                call = f"{tool}[{inp}]"
                steps.append(
                    PlanStep(
                        var=var,
                        plan=_field(item, "plan", "thought", "reason"),
                        tool=tool,
                        input=inp,
                        call=call,
                    )
                )
        if steps:
            return steps
    return []


def parse_worker_plan_paper(text: str) -> ParsedPlan:
    r"""Read a planner reply exactly as the reference parser does.

    Raises:
        ParseError: For an evidence line without ``=`` (the reference crashes there).

    Example:
        >>> p = parse_worker_plan_paper("Plan: a\n#E1 = LLM[x]\n #E2 = LLM[y]")
        >>> [s.var for s in p.steps], p.malformed
        (['#E1'], [' #E2 = LLM[y]'])
    """
    plan = ParsedPlan(raw=text, format="text")
    found: dict[str, PlanStep] = {}
    for line in text.splitlines():
        if line.startswith("Plan:"):
            plan.plans.append(line)
        elif len(line) >= 3 and line[0] == "#" and line[1] == "E" and line[2].isdigit():
            if "=" not in line:
                raise ParseError(
                    f"evidence line without '=': {line!r}", raw=text, expected=_EXPECTED
                )
            var, call = (part.strip() for part in line.split("=", 1))
            if len(var) != 3:
                call = "No evidence found"
            found[var] = PlanStep(var=var, call=call)  # duplicates overwrite, order kept
        elif line.strip():
            plan.malformed.append(line)
    plan.steps = list(found.values())
    return plan


def bounded(plan: ParsedPlan, max_steps: int | None) -> ParsedPlan:
    r"""``plan`` with at most ``max_steps`` evidence steps; a warning names those left out.

    Example:
        >>> plan = bounded(parse_worker_plan("#E1 = A[x]\n#E2 = B[y]\n#E3 = C[z]"), 2)
        >>> [s.var for s in plan.steps], plan.warnings
        (['#E1', '#E2'], ['more than 2 steps; not run: #E3'])
    """
    if max_steps is None or len(plan.steps) <= max_steps:
        return plan
    dropped = ", ".join(s.var for s in plan.steps[max_steps:])
    return plan.model_copy(update={
        "steps": plan.steps[:max_steps],
        "warnings": [*plan.warnings, f"more than {max_steps} steps; not run: {dropped}"],
    })  # fmt: skip


def execution_order(steps: list[PlanStep]) -> list[list[str]]:
    """Group steps into waves: every step runs after the steps it references.

    Steps of one wave are independent and may run concurrently. Forward references
    are fine (a step waits for a later-listed one). Steps caught in a reference cycle
    run last, one per wave in plan order, with the references that are not yet
    computed left as text.

    Example:
        >>> s = [PlanStep(var="#E1", depends_on=["#E3"]), PlanStep(var="#E2"),
        ...      PlanStep(var="#E3")]
        >>> execution_order(s)
        [['#E2', '#E3'], ['#E1']]
    """
    pending = {s.var: set(s.depends_on) for s in steps}
    order = [s.var for s in steps]
    done: set[str] = set()
    waves: list[list[str]] = []
    while pending:
        ready = [v for v in order if v in pending and pending[v] <= done]
        if not ready:  # a cycle: release the first waiting step in plan order
            ready = [next(v for v in order if v in pending)]
        for var in ready:
            del pending[var]
        done.update(ready)
        waves.append(ready)
    return waves
