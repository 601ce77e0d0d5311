r"""The shared per-example cache every Chameleon module reads and writes.

One :class:`ChameleonCache` is made per example. Modules read the fields their
inventory entry lists under ``update_input`` and write only those under
``update_cache``; ``records`` keeps each module's input and output under
``"<module>:input"`` / ``"<module>:output"``, as the published cache does.

Example:
    >>> cache = ChameleonCache(task="scienceqa", question="Which is a mammal?",
    ...                        choices=["frog", "dog"])
    >>> cache.add_evidence("Knowledge:\n- Dogs are mammals.", glue=False)
    >>> cache.evidence
    'Knowledge:\n- Dogs are mammals.'
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: Fields that modules may change (what the inventory's ``update_cache`` may name).
STATE_FIELDS = (
    "table",
    "context",
    "evidence",
    "program",
    "program_verified",
    "program_value",
    "solution",
    "query",
    "answer",
    "raw_answer",
)


class ChameleonCache(BaseModel):
    """Everything one example's module chain knows.

    Attributes:
        task: ``"tabmwp"`` or ``"scienceqa"``.
        pid: Example id.
        question: The question as asked (TabMWP) or as Chameleon's question text
            (ScienceQA: question, context and lettered options).
        choices: Answer options, when multiple choice.
        unit: The TabMWP answer unit.
        title: The TabMWP table title.
        table: The current table (row and column lookup replace it).
        original_table: The example's table before any lookup.
        table_rows: Table lines including the header, as the published ``row_num``.
        table_columns: Columns of the original table.
        metadata: ScienceQA metadata shown to the planner and modules.
        plain_question: The question alone (ScienceQA chain-of-thought prompt).
        hint: The ScienceQA hint (text context).
        image: ScienceQA image file name (empty when none).
        caption: The precomputed caption (ScienceQA).
        ocr: The precomputed OCR repr string (ScienceQA).
        lecture: The problem's own lecture (ScienceQA). Never shown to the model: the
            default search leaves it, and every lecture of the same skill, out of its
            corpus.
        data_folder: The ScienceQA folder the problem was read from (where the default
            search builds its corpus); empty for hand-made examples.
        context: Accumulated TabMWP context (verbalisation, knowledge).
        evidence: Accumulated ScienceQA evidence (caption, OCR, search, knowledge).
        program: The current program (raw model text).
        program_verified: Whether the program verified.
        program_value: The executed program's ``ans`` (None when not executed or empty).
        solution: The solution text.
        query: The search query.
        answer: The final answer as text.
        raw_answer: The final answer as the published code scored it (float, bool, str
            or None).
        records: ``"<module>:input"`` / ``"<module>:output"`` entries.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    task: str
    pid: str = ""
    question: str
    choices: list[str] | None = None
    unit: str | None = None
    title: str | None = None
    table: Any = None
    original_table: Any = None
    table_rows: int = 0
    table_columns: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)
    plain_question: str = ""
    hint: str = ""
    image: str = ""
    caption: str = ""
    ocr: str = "[]"
    lecture: str = ""
    data_folder: str = ""
    context: str = ""
    evidence: str = ""
    program: str | None = None
    program_verified: bool | None = None
    program_value: Any = None
    solution: str | None = None
    query: str | None = None
    answer: str = ""
    raw_answer: Any = None
    records: dict[str, Any] = Field(default_factory=dict)

    def add_context(self, label: str, text: str, *, glue: bool) -> None:
        """Append a labelled TabMWP context fragment.

        With ``glue`` (the published behaviour) the fragment is stripped and appended
        with no separator; otherwise fragments are separated by a blank line.
        """
        fragment = f"{label}{text}"
        if glue:
            self.context += f"\n\n{fragment}".strip()
        else:
            self.context = f"{self.context}\n\n{fragment.strip()}".strip()

    def add_evidence(self, text: str, *, glue: bool) -> None:
        """Append a ScienceQA evidence block (``glue`` strips the whole text, as published)."""
        if glue:
            self.evidence = f"{self.evidence}\n\n{text}".strip()
        else:
            self.evidence = f"{self.evidence}\n\n{text.strip()}".strip()

    def state(self) -> dict[str, Any]:
        """The module-writable fields, for checking what a module changed."""
        out = {}
        for name in STATE_FIELDS:
            value = getattr(self, name)
            out[name] = value.to_records() if hasattr(value, "to_records") else value
        return out
