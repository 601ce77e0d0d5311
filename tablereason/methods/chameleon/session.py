"""One example's run: the model, settings, cache, trace and tools that modules share.

Modules are plain functions ``(ChainRun) -> None``. They ask the model through
:meth:`ChainRun.ask`, the run's :class:`~tablereason.calls.Door`, which records the
prompt, every completion and the usage in the module's trace step.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.methods.chameleon.cache import ChameleonCache
    >>> from tablereason.methods.chameleon.settings import profile_settings
    >>> run = ChainRun(ScriptedLLM(replies=["hi"]), profile_settings("default", "scienceqa"),
    ...                ChameleonCache(task="scienceqa", question="?"))
    >>> step = run.step("query_generator")
    >>> run.ask(step, "say hi", prompt_name="demo", max_tokens=4)
    'hi'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tablereason.calls import Door, ReplySpec
from tablereason.llm.base import LLM
from tablereason.methods.chameleon.cache import ChameleonCache
from tablereason.methods.chameleon.settings import ChameleonSettings
from tablereason.trace.record import Trace, TraceStep

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.llm.constraints import Constraint
    from tablereason.sandbox.limits import ExecResult
    from tablereason.sandbox.python import PythonSandbox
    from tablereason.tools.base import Tool


@dataclass
class ChainRun:
    """Everything a module needs for one example.

    Attributes:
        llm: The model.
        settings: The profile's settings.
        cache: The shared per-example cache.
        trace: Where steps are recorded.
        tools: Tools by role (``"search"``, ``"captioner"``, ``"ocr"``); a missing
            role uses the offline default described in the module.
        sandbox: Sandbox pool for programs (the shared default when None).
        executions: Program results by program text, so an executor reuses the run
            the verifier already made.
        door: The door every model call goes through (made from ``llm`` and the
            settings).
    """

    llm: LLM
    settings: ChameleonSettings
    cache: ChameleonCache
    trace: Trace = field(default_factory=Trace)
    tools: dict[str, Tool] = field(default_factory=dict)
    sandbox: PythonSandbox | None = None
    executions: dict[str, ExecResult] = field(default_factory=dict)
    door: Door = field(init=False)

    def __post_init__(self) -> None:
        self.door = Door(
            self.llm, site="chameleon", constrain=self.settings.constrain,
            sampling=self.settings.sampling(),
        )  # fmt: skip

    @property
    def paper(self) -> bool:
        """Whether the paper profile is active."""
        return self.settings.profile == "paper"

    def step(self, name: str, kind: str = "module", prompt_name: str | None = None) -> TraceStep:
        """Add and return a new trace step, timed from now until :meth:`finish`."""
        return self.trace.add(TraceStep(kind=kind, name=name, prompt_name=prompt_name)).start()

    @staticmethod
    def finish(step: TraceStep) -> None:
        """Stop timing the step: ``duration_s`` is its run time."""
        step.stop()

    def ask(
        self,
        step: TraceStep,
        prompt: str,
        *,
        prompt_name: str,
        max_tokens: int,
        temperature: float = 0.0,
        stop: tuple[str, ...] = (),
        constraint: Constraint | None = None,
    ) -> str:
        """Ask the model once and return the stripped text (as the published client does).

        The prompt, the completion and its usage are recorded on ``step``. A
        ``constraint`` is sent where the model enforces it and the settings allow; a
        reply that breaks it is re-asked once.
        """
        step.prompt_name = f"chameleon/{prompt_name}"
        spec: ReplySpec[str] = ReplySpec(
            constraint=constraint,
            reasks=1 if constraint is not None and self.door.constrain else 0,
            max_tokens=max_tokens,
            stop=stop,
            temperature=temperature,
        )
        return self.door.ask(step, prompt, spec).text.strip()

    def record(self, module: str, given: Any, output: Any) -> None:
        """Keep ``<module>:input`` and ``<module>:output`` in the cache records."""
        self.cache.records[f"{module}:input"] = given
        self.cache.records[f"{module}:output"] = output
