"""Program-aided baselines: Program-of-Thought (Python) and Text-to-SQL, run in the sandbox.

``program_of_thought`` and ``text_to_sql`` hold one method each; ``code_text`` the text they
share (column names as the code sees them, the question and answer text).

Program-of-Thought asks the model for a Python program that sets ``ans``, with
the table shown as text and passed to the program as the DataFrame ``df``; it
uses the shared generate-verify-retry loop. Text-to-SQL asks for one DuckDB
SELECT over the table ``t`` and answers with the cells of the result. Both
prompts (``prompts/baselines/``) show three worked WikiTQ training examples and end
where the code must follow (``SQL: SELECT``, an opened ```` ```python ```` fence); a retry
states the last failure above that same ending, so the model goes on writing code
rather than echoing the error. The code is read out of the reply with
:mod:`~tablereason.methods.code_extraction` (fences, prose, comments, a second query).
Both record every model call, program and result in a trace and never raise on a bad
model answer: the prediction then carries an empty answer and the error.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> from tablereason.table import Table
    >>> table = Table.from_records(["name", "score"], [["ann", "12"], ["bo", "9"]])
    >>> llm = ScriptedLLM(replies=["ans = int(df['score'].astype(int).max())"])
    >>> ProgramOfThought(llm).run(table, "What is the top score?").answer  # doctest: +SKIP
    '12'
"""

from tablereason.methods.baselines.code_text import (
    PROGRAM_STOP,
    SQL_START,
    SQL_STOP,
    code_column_names,
)
from tablereason.methods.baselines.program_of_thought import ProgramOfThought
from tablereason.methods.baselines.text_to_sql import TextToSQL

__all__ = [
    "PROGRAM_STOP",
    "SQL_START",
    "SQL_STOP",
    "ProgramOfThought",
    "TextToSQL",
    "code_column_names",
]
