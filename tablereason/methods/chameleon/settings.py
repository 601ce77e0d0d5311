"""Chameleon settings and the two profiles: ``paper`` (the published code) and ``default``.

``paper`` keeps the published behaviour that decides scores: the released runs'
thresholds (18 cells), the 20-try program loop at a fixed retry temperature of 0.1,
the unanchored answer regex, the context fragments glued without separators, the
column-lookup threshold on the original table size, and no ordering check on plans.
``default`` fixes those and spends fewer retries; docs/chameleon.md lists each change.

Example:
    >>> profile_settings("paper", "tabmwp").sg_patience
    20
    >>> profile_settings("default", "tabmwp").enforce_order
    True
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from tablereason.calls.sampling import SamplingSettings
from tablereason.errors import ConfigurationError
from tablereason.sandbox.verify import RetrySettings
from tablereason.tools.ocr import OCRFormat

Profile = Literal["paper", "default"]


class ChameleonSettings(SamplingSettings):
    r"""Every knob of a Chameleon run.

    Attributes:
        profile: ``"paper"`` or ``"default"``.
        planner_max_tokens: Completion budget of the planner (released runs: 256 TabMWP,
            128 ScienceQA).
        enforce_order: Reject plans whose verifier or executor comes before the
            generator (the paper's rule; the published check never fires).
        answer_last: Require the answer generator to be the last module (the published
            TabMWP check only requires it to be present).
        require_answer_source: Reject TabMWP plans with neither a solution generator nor
            a program executor before the answer generator.
        rl_row_threshold: Row lookup is skipped for tables with at most this many rows
            (header included, as the published ``row_num``).
        rl_cell_threshold: ... or at most this many cells (paper 18, published runs 18,
            published code default 12).
        cl_column_threshold: Column lookup is skipped for at most this many columns.
        cl_cell_threshold: ... or at most this many cells.
        lookup_original_size: Column lookup measures the original table, not the table
            row lookup left (the published behaviour).
        lookup_max_tokens: Completion budget of row and column lookup.
        knowledge_max_tokens: Completion budget of knowledge retrieval.
        verbalizer_max_tokens: Completion budget of the table verbalizer.
        program_max_tokens: Completion budget of the program generator.
        program: Program checks and retries (the merged generate-verify loop).
        solution_max_tokens: Completion budget of the solution generator.
        sg_patience: Solution attempts until one states an answer.
        query_max_tokens: Completion budget of the query generator.
        search_count: Search snippets kept (released runs: 3); the default local search
            returns this many passages.
        search_corpus: A folder of text files (``*.txt``, ``*.md``) for the default
            search to use instead of the ScienceQA lecture corpus.
        paper_answer_regex: Use the published ``The answer is ([\s\S]+).$`` extraction
            (greedy, drops the last character) instead of the anchored one.
        glue_context: Append context fragments without a separator, as published.
        ocr_format: How detected text is shown: ``"texts"`` (the words only),
            ``"positions"`` (each text with its box's top-left corner) or ``"published"``
            (the Python repr of the list of ``(box, text)`` pairs, as the published text
            detector writes it).
        match_options: Map a TabMWP multiple-choice answer onto its options (default only;
            the paper leaves that to scoring).
        cot_caption: Show the image caption in the ScienceQA chain-of-thought prompt (the
            released ChatGPT chain-of-thought run did).
        temperature: Sampling temperature of every request (``None``: each call's own).
        top_p: Nucleus sampling bound of every request.
        seed: Seed sent with sampled requests.
        constrain: Send the planner's reply constraint (a list of the task's module
            names) to models that enforce it. The paper profile asks as the published
            code does: off unless set.
        view_rows: A TabMWP-task table of more lines than this (header included) is
            shown as a bounded view of this many lines, and programs get it whole as
            ``df`` (None: every table whole, however large). TabMWP's own tables have
            at most 11 lines, so both profiles show them whole, as published.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    profile: Profile = "default"
    planner_max_tokens: int = 128
    enforce_order: bool = True
    answer_last: bool = True
    require_answer_source: bool = True
    rl_row_threshold: int = 3
    rl_cell_threshold: int = 18
    cl_column_threshold: int = 2
    cl_cell_threshold: int = 18
    lookup_original_size: bool = False
    lookup_max_tokens: int = 64
    knowledge_max_tokens: int = 256
    verbalizer_max_tokens: int = 256
    program_max_tokens: int = 256
    program: RetrySettings = Field(default_factory=RetrySettings)
    solution_max_tokens: int = 384
    sg_patience: int = Field(default=2, ge=1)
    query_max_tokens: int = 64
    search_count: int = Field(default=3, ge=1)
    search_corpus: str | None = None
    paper_answer_regex: bool = False
    glue_context: bool = False
    ocr_format: OCRFormat = "texts"
    match_options: bool = True
    cot_caption: bool = False
    constrain: bool = True
    view_rows: int | None = Field(default=30, ge=4)


def profile_settings(profile: str, task: str, **overrides: Any) -> ChameleonSettings:
    """The settings of ``profile`` for ``task``, with individual fields overridden.

    Raises:
        ConfigurationError: For an unknown profile or an invalid override.

    Example:
        >>> profile_settings("paper", "scienceqa").planner_max_tokens
        128
    """
    if profile == "paper":
        base: dict[str, Any] = {
            "profile": "paper",
            "planner_max_tokens": 256 if task == "tabmwp" else 128,
            "enforce_order": False,
            "answer_last": task == "scienceqa",
            "require_answer_source": False,
            "lookup_original_size": True,
            "lookup_max_tokens": 256,
            "knowledge_max_tokens": 512,
            "verbalizer_max_tokens": 512,
            "program": RetrySettings.paper(),
            "solution_max_tokens": 512,
            "sg_patience": 20 if task == "tabmwp" else 5,
            "paper_answer_regex": True,
            "glue_context": True,
            "ocr_format": "published",
            "match_options": False,
            "cot_caption": True,
            "constrain": False,
        }
    elif profile == "default":
        base = {"profile": "default", "program": RetrySettings(patience=3)}
    else:
        raise ConfigurationError(
            f"unknown Chameleon profile {profile!r}; choose 'paper' or 'default'"
        )
    try:
        return ChameleonSettings.model_validate({**base, **overrides})
    except ValueError as err:
        raise ConfigurationError(f"invalid Chameleon settings: {err}") from None
