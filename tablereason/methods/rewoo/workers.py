r"""ReWOO workers: run the planned tool calls and collect the evidence.

Default: each step starts as soon as the evidence it references is ready, and
independent steps run in parallel threads; ``#E<n>`` references are replaced by
the plain evidence (``#E1`` never matches inside ``#E10``), focused on the rest of
the input when it is longer than ``reference_chars``; a failed step's
observation is passed on to its dependants, which still run. Paper profile: the
reference loop (sequential, ``call.split("[", 1)``, last input character dropped,
evidence substituted as ``[evidence]``, exact tool names).

Example:
    >>> from tablereason.methods.rewoo.parse import parse_worker_plan
    >>> from tablereason.tools import Calculator
    >>> from tablereason.trace import Trace
    >>> plan = parse_worker_plan("#E1 = Calculator[2 + 3]\n#E2 = Calculator[#E1 * 2]")
    >>> Workers([Calculator()]).run(plan, Trace())
    {'#E1': '5', '#E2': '10'}
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from tablereason.methods.rewoo.evidence import focus
from tablereason.methods.rewoo.parse import REFERENCE, ParsedPlan, PlanStep
from tablereason.methods.tool_tasks import tool_key
from tablereason.tools.base import Tool, ToolOutput, invoke, no_evidence
from tablereason.trace.record import Trace, TraceStep


class Workers:
    """Runs the steps of a plan with the given tools and records each call in the trace.

    Args:
        tools: The tools the plan may name.
        paper: Reproduce the reference worker loop.
        concurrent: Run independent steps in parallel (default profile only).
        max_workers: Threads for concurrent steps.
        wrap_evidence: Substitute references as ``[evidence]``.
        reference_chars: Evidence longer than this is focused on the input it is
            substituted into (its sentences closest to that input); None: whole.
    """

    def __init__(
        self,
        tools: list[Tool],
        *,
        paper: bool = False,
        concurrent: bool = True,
        max_workers: int = 4,
        wrap_evidence: bool = False,
        reference_chars: int | None = None,
    ) -> None:
        self.tools = tools
        self.paper = paper
        self.concurrent = concurrent
        self.max_workers = max_workers
        self.wrap_evidence = wrap_evidence
        self.reference_chars = reference_chars

    def run(self, plan: ParsedPlan, trace: Trace) -> dict[str, str]:
        """Evidence text by variable, for every step of ``plan``."""
        return self._run_paper(plan, trace) if self.paper else self._run_graph(plan, trace)

    def find_tool(self, name: str) -> Tool | None:
        """The tool called ``name`` (paper: exact; default: ignoring case and spaces)."""
        if self.paper:  # exact name, not stripped (the reference)
            return next((t for t in self.tools if t.name == name), None)
        key = tool_key(name)
        return next((t for t in self.tools if tool_key(t.name) == key), None)

    def call(self, step: PlanStep, tool_name: str, tool_input: str) -> ToolOutput:
        """Run one step; an unknown tool or a call without ``Tool[...]`` gives text evidence."""
        if not tool_name:  # no Tool[...] form: the call text itself is the evidence
            if not tool_input.strip() and not self.paper:
                reason = "the step names no tool and has no text (write #E<n> = Tool[input])"
                return ToolOutput(text=no_evidence(reason), error=reason)
            return ToolOutput(text=tool_input)
        tool = self.find_tool(tool_name)
        if tool is None:
            if self.paper:
                return ToolOutput(text="No evidence found", error=f"unknown tool {tool_name!r}")
            names = ", ".join(t.name for t in self.tools)
            reason = f"unknown tool {tool_name!r}; the tools are {names}"
            return ToolOutput(text=no_evidence(reason), error=reason)
        return invoke(tool, tool_input)

    def substitute(self, text: str, evidence: dict[str, str]) -> str:
        """Replace each computed ``#E<n>`` in ``text`` by its evidence (others stay as text)."""
        query = REFERENCE.sub(" ", text)

        def replace(match: Any) -> str:
            var = f"#E{int(match.group(1))}"
            if var not in evidence:
                return str(match.group(0))
            value = evidence[var]
            if self.reference_chars is not None:
                value = focus(value, query, self.reference_chars)
            return f"[{value}]" if self.wrap_evidence else value

        return REFERENCE.sub(replace, text)

    @staticmethod
    def _record(trace: Trace, step: PlanStep, tool_input: str, out: ToolOutput) -> None:
        trace.add(TraceStep(
            kind="tool", name=step.tool or "(none)", raw=[out.text],
            arguments={"var": step.var, "plan": step.plan, "input": tool_input},
            usage=out.usage, duration_s=out.duration_s, error=out.error,
        ))  # fmt: skip

    def _run_graph(self, plan: ParsedPlan, trace: Trace) -> dict[str, str]:
        """Run steps as soon as what they reference is ready; independent ones in parallel."""
        steps = {s.var: s for s in plan.steps}
        order = [s.var for s in plan.steps]
        evidence: dict[str, str] = {}
        pending = dict.fromkeys(order)
        running: dict[Future[ToolOutput], tuple[PlanStep, str]] = {}
        workers = self.max_workers if self.concurrent else 1
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rewoo") as pool:
            while pending or running:
                ready = [
                    v for v in order if v in pending and set(steps[v].depends_on) <= set(evidence)
                ]
                if not ready and not running:  # a reference cycle: release the first step
                    ready = [next(v for v in order if v in pending)]
                for var in ready:
                    del pending[var]
                    step = steps[var]
                    tool_input = self.substitute(step.input, evidence)
                    future = pool.submit(self.call, step, step.tool, tool_input)
                    running[future] = (step, tool_input)
                    if not self.concurrent:
                        wait([future])
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in [f for f in running if f in done]:
                    step, tool_input = running.pop(future)
                    out = future.result()
                    evidence[step.var] = out.text
                    self._record(trace, step, tool_input, out)
        return evidence

    def _run_paper(self, plan: ParsedPlan, trace: Trace) -> dict[str, str]:
        """The reference worker loop: sequential, blind ``inp[:-1]``, bracket substitution."""
        evidence: dict[str, str] = {}
        for step in plan.steps:
            call = step.call
            if "[" not in call:
                evidence[step.var] = call
                continue
            tool_name, tool_input = call.split("[", 1)
            tool_input = tool_input[:-1]
            for var in REFERENCE.findall(tool_input):
                name = f"#E{var}"
                if name in evidence:
                    tool_input = tool_input.replace(name, "[" + evidence[name] + "]")
            named = step.model_copy(update={"tool": tool_name})
            out = self.call(named, tool_name, tool_input)
            evidence[step.var] = out.text
            self._record(trace, named, tool_input, out)
        return evidence
