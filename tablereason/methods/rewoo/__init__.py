"""ReWOO (Xu et al., 2023): plan once, let workers call tools, solve from the evidence.

``method`` holds :class:`ReWOO` and its profiles; ``parse`` reads the plan; ``workers``
run the tool calls; ``evidence`` formats what they found for the solver.

Example:
    >>> from tablereason.methods.rewoo import PROFILES
    >>> "default" in PROFILES
    True
"""

from tablereason.methods.rewoo.method import PROFILES, ReWOO, ReWOOSettings

__all__ = ["PROFILES", "ReWOO", "ReWOOSettings"]
