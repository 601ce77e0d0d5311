"""Where the Chain-of-Table prompt demos come from.

TabFact demos are cut from these tables of the TabFact small test set; they are
reserved for prompts and must be left out of any evaluation sample. WikiTQ demos come
from WikiTQ training questions and their tables, which never occur in the test split.
"""

from __future__ import annotations

DEMO_TABLE_IDS: frozenset[str] = frozenset(
    {
        "2-15214004-2.html.csv",  # 2008 mls superdraft
        "2-17025909-3.html.csv",  # 2003 world taekwondo championships
        "2-12582968-1.html.csv",  # lukáš melich
        "2-17245513-1.html.csv",  # 1975 u.s. open (golf)
        "2-12076689-7.html.csv",  # 2006 texas rangers season
    }
)
"""TabFact ``table_id`` values whose tables appear in the prompt demos."""

WIKITQ_DEMO_QUESTIONS: tuple[str, ...] = ("nt-1041", "nt-1069", "nt-1115", "nt-994", "nt-2500")
"""WikiTQ training question ids whose tables (and some questions) appear in the demos."""
