"""Where the Chameleon prompt demonstrations come from.

TabMWP demos are written from problems of the dev split (``problems_dev1k.json``:
pids 33, 117, 172, 336, 1178, 1310), so no test problem is shown. The ScienceQA
data here holds test problems only, so three of them are reserved for demos and
must be left out of evaluations and benchmarks: :data:`SCIENCEQA_DEMO_PIDS`.

Example:
    >>> "22" in SCIENCEQA_DEMO_PIDS
    True
"""

from __future__ import annotations

#: TabMWP dev-split problems the demos were written from.
TABMWP_DEMO_PIDS: tuple[str, ...] = ("33", "117", "172", "336", "1178", "1310")

#: ScienceQA test problems used as demos; exclude them from evaluation.
SCIENCEQA_DEMO_PIDS: tuple[str, ...] = ("22", "29", "62")
