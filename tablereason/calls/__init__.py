"""The one door through which methods and tools ask a model: a reply spec and one call.

:class:`ReplySpec` says what a reply is (its parser, an optional constraint, the re-ask
bound and how a re-ask is written, the token limit, stop strings, sampling);
:class:`Door` sends it, parses the reply, re-asks within the bound (a reply that does
not parse and one that breaks its constraint alike) and writes what happened into the
trace step: the exact prompt text, the raw replies, the usage, the counts.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.trace import TraceStep
    >>> door = Door(ScriptedLLM(replies=[" yes"]), site="demo")
    >>> step = TraceStep(kind="answer", name="verdict")
    >>> door.ask(step, "Is it so?", ReplySpec(parse=str.strip, max_tokens=2)).value
    'yes'
    >>> step.prompts, step.raw
    (['Is it so?'], [' yes'])
"""

from tablereason.calls.door import Door, Reply, enforced, prompt_text
from tablereason.calls.sampling import Sampling, SamplingSettings
from tablereason.calls.spec import ReplySpec, repair_prompt

__all__ = [
    "Door",
    "Reply",
    "ReplySpec",
    "Sampling",
    "SamplingSettings",
    "enforced",
    "prompt_text",
    "repair_prompt",
]
