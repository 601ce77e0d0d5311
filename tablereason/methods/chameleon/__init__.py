"""Chameleon: module inventory, planner and module chains for TabMWP and ScienceQA.

Example:
    >>> from tablereason.methods.chameleon import MODULES, Chameleon
    >>> "program_generator" in MODULES
    True
"""

from tablereason.methods.chameleon.answers import paper_answer, score
from tablereason.methods.chameleon.baselines import ChainOfThought, ProgramOfThought
from tablereason.methods.chameleon.cache import ChameleonCache
from tablereason.methods.chameleon.inventory import MODULES, ModuleSpec, task_modules
from tablereason.methods.chameleon.method import Chameleon, modules_used
from tablereason.methods.chameleon.planner import (
    DEFAULT_PLANS,
    check_plan,
    choose_plan,
    merge_program_steps,
    parse_module_plan,
)
from tablereason.methods.chameleon.settings import ChameleonSettings, profile_settings

__all__ = [
    "DEFAULT_PLANS",
    "MODULES",
    "ChainOfThought",
    "Chameleon",
    "ChameleonCache",
    "ChameleonSettings",
    "ModuleSpec",
    "ProgramOfThought",
    "check_plan",
    "choose_plan",
    "merge_program_steps",
    "modules_used",
    "paper_answer",
    "parse_module_plan",
    "profile_settings",
    "score",
    "task_modules",
]
