"""Pluggable text tools for ReWOO, ReAct and Chameleon.

A tool has a ``name``, a ``description`` (shown in planner prompts) and a call
from text to text; a failure comes back as a ``"No evidence found: <reason>"``
observation, never as an exception. Built-in tools are registered by name in
:data:`TOOLS` and built from a :class:`ToolContext` with :func:`build_tools`
(both in :mod:`~tablereason.tools.catalog`).

Example:
    >>> from tablereason.tools import TOOLS, ToolContext, build_tools
    >>> calc, = build_tools(["calculator"], ToolContext())
    >>> calc("12 * 12")
    '144'
    >>> "wikipedia" in TOOLS
    True
"""

from tablereason.tools.base import (
    NO_EVIDENCE,
    BaseTool,
    FailingTool,
    Tool,
    ToolFailure,
    ToolOutput,
    describe,
    invoke,
    is_no_evidence,
    no_evidence,
)
from tablereason.tools.bm25 import BM25, tokenize
from tablereason.tools.calculator import CalculationError, Calculator, evaluate
from tablereason.tools.captioner import CaptionModel, ImageCaptioner, ScienceQACaptions, image_id
from tablereason.tools.catalog import TOOLS, ToolContext, ToolFactory, build_tools
from tablereason.tools.docstore import (
    DocStore,
    Document,
    DocumentExplorer,
    SearchHit,
    WikiLookup,
    WikiSearch,
    search_tools,
)
from tablereason.tools.llm_tool import LLMTool
from tablereason.tools.local_search import CorpusText, LeaveOut, LocalCorpus, LocalSearch
from tablereason.tools.ocr import OCR, OCRFormat, OCRModel, ScienceQAOCR, TextBox, parse_easyocr
from tablereason.tools.python_tool import PythonTool
from tablereason.tools.scienceqa_corpus import folder_corpus, scienceqa_corpus
from tablereason.tools.sql_tool import SQLTool
from tablereason.tools.table_tool import (
    TABLE_REASONERS,
    ReasonerFactory,
    TableReasoner,
    TableTool,
)
from tablereason.tools.web_search import SearchBackend, WebSearch

__all__ = [
    "BM25",
    "NO_EVIDENCE",
    "OCR",
    "TABLE_REASONERS",
    "TOOLS",
    "BaseTool",
    "CalculationError",
    "Calculator",
    "CaptionModel",
    "CorpusText",
    "DocStore",
    "Document",
    "DocumentExplorer",
    "FailingTool",
    "ImageCaptioner",
    "LLMTool",
    "LeaveOut",
    "LocalCorpus",
    "LocalSearch",
    "OCRFormat",
    "OCRModel",
    "PythonTool",
    "ReasonerFactory",
    "SQLTool",
    "ScienceQACaptions",
    "ScienceQAOCR",
    "SearchBackend",
    "SearchHit",
    "TableReasoner",
    "TableTool",
    "TextBox",
    "Tool",
    "ToolContext",
    "ToolFactory",
    "ToolFailure",
    "ToolOutput",
    "WebSearch",
    "WikiLookup",
    "WikiSearch",
    "build_tools",
    "describe",
    "evaluate",
    "folder_corpus",
    "image_id",
    "invoke",
    "is_no_evidence",
    "no_evidence",
    "parse_easyocr",
    "scienceqa_corpus",
    "search_tools",
    "tokenize",
]
