"""Chain-of-thought and program-of-thought baselines for TabMWP and ScienceQA.

Each baseline is Chameleon with a fixed module sequence, as the published runner's
``cot`` and ``pot`` options do:

- chain-of-thought: solution generator, answer generator (ScienceQA uses the
  chain-of-thought prompt: question, hint, optionally the caption, and options);
- program-of-thought, TabMWP: program generator, executor, answer generator;
- program-of-thought, ScienceQA (not in the paper): a sandboxed program stores the
  option letter in ``ans``; it is checked and retried with the generate-verify loop
  and stated as "The answer is X." for the answer generator.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> ChainOfThought(ScriptedLLM(replies=[]), task="tabmwp").fixed_plan
    ['solution_generator', 'answer_generator']
"""

from __future__ import annotations

from typing import Any

from tablereason.llm.base import LLM
from tablereason.methods.chameleon import scienceqa_modules
from tablereason.methods.chameleon.answers import LETTERS, match_option
from tablereason.methods.chameleon.inventory import modules_task
from tablereason.methods.chameleon.method import Chameleon
from tablereason.methods.chameleon.session import ChainRun
from tablereason.prompts.render import render
from tablereason.sandbox.verify import generate_and_verify

COT_PLAN = ["solution_generator", "answer_generator"]
POT_PLANS = {
    "tabmwp": ["program_generator", "program_executor", "answer_generator"],
    "scienceqa": ["solution_generator", "answer_generator"],
}


class ChainOfThought(Chameleon):
    """Solution generator then answer generator, no planner.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> ChainOfThought(ScriptedLLM(replies=[]), task="scienceqa").name
        'chain_of_thought'
    """

    name = "chain_of_thought"

    def __init__(self, llm: LLM, task: str = "tabmwp", profile: str = "default", **kw: Any):
        super().__init__(llm, task, profile, plan=COT_PLAN, **kw)
        if task == "scienceqa":
            self.runners["solution_generator"] = scienceqa_modules.cot_solution_generator


class ProgramOfThought(Chameleon):
    """A program computes the answer; no planner.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> ProgramOfThought(ScriptedLLM(replies=[]), task="tabmwp").fixed_plan[0]
        'program_generator'
    """

    name = "program_of_thought"

    def __init__(self, llm: LLM, task: str = "tabmwp", profile: str = "default", **kw: Any):
        plan = POT_PLANS.get(modules_task(task), COT_PLAN)
        super().__init__(llm, task, profile, plan=plan, **kw)
        if task == "scienceqa":
            self.runners["solution_generator"] = program_solution


def program_letter(value: Any, choices: list[str]) -> str | None:
    """The option letter a program's ``ans`` names (a letter, or an option's text).

    Example:
        >>> program_letter("b", ["cat", "dog"]), program_letter("dog", ["cat", "dog"])
        ('B', 'B')
    """
    if value is None:
        return None
    text = str(value).strip().strip("()").strip()
    if len(text) == 1 and text.upper() in LETTERS[: len(choices)]:
        return text.upper()
    option = match_option(text, choices)
    return LETTERS[choices.index(option)] if option is not None else None


def program_solution(run: ChainRun) -> None:
    """ScienceQA program-of-thought: a verified program's letter, stated as a solution."""
    cache = run.cache
    prompt = render("chameleon/scienceqa_program", question=cache.question)
    choices = cache.choices or []

    def generate(temperature: float, feedback: str | None) -> str:
        step = run.step("program_generator_and_verifier", kind="program")
        text = prompt + (f"\n# The previous program failed: {feedback}\n" if feedback else "")
        reply = run.ask(step, text, prompt_name="scienceqa_program", temperature=temperature,
                        max_tokens=run.settings.program_max_tokens,
                        stop=("\n\nQuestion:",))  # fmt: skip
        step.arguments = {"temperature": run.door.sent_temperature(temperature), "program": reply}
        run.finish(step)
        return reply

    outcome = generate_and_verify(generate, run.settings.program, None, run.sandbox)
    letter = program_letter(outcome.value, choices)
    cache.program = outcome.program
    cache.program_verified = outcome.verified
    cache.program_value = outcome.value
    cache.solution = f"The answer is {letter}." if letter else ""
    step = run.step("solution_generator")
    step.arguments = {"value": outcome.value, "letter": letter}
    if letter is None:
        step.error = f"the program's answer {outcome.value!r} names no option"
    run.record("solution_generator", prompt, cache.solution)
    run.finish(step)
