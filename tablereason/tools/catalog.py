"""The built-in tools by name, and the context they are built from.

:data:`TOOLS` maps a name to a factory that builds the tool from a :class:`ToolContext`;
:func:`build_tools` builds several from one context.

| name | tool | needs |
|---|---|---|
| ``wikipedia`` | :class:`~tablereason.tools.docstore.WikiSearch` | a document store |
| ``lookup`` | :class:`~tablereason.tools.docstore.WikiLookup` | the same explorer |
| ``llm`` | :class:`~tablereason.tools.llm_tool.LLMTool` | a model |
| ``calculator`` | :class:`~tablereason.tools.calculator.Calculator` | nothing |
| ``table`` | :class:`~tablereason.tools.table_tool.TableTool` | a model and tables |
| ``sql`` | :class:`~tablereason.tools.sql_tool.SQLTool` | tables |
| ``python`` | :class:`~tablereason.tools.python_tool.PythonTool` | tables |
| ``image_captioner`` | :class:`~tablereason.tools.captioner.ImageCaptioner` | ScienceQA data |
| ``ocr`` | :class:`~tablereason.tools.ocr.OCR` | ScienceQA data |
| ``web_search`` | :class:`~tablereason.tools.web_search.WebSearch` | a backend (none) |

Example:
    >>> TOOLS.names()[:3]
    ['wikipedia', 'lookup', 'llm']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tablereason.errors import ConfigurationError
from tablereason.registry import Registry
from tablereason.tools.base import Tool
from tablereason.tools.calculator import Calculator
from tablereason.tools.captioner import ImageCaptioner, ScienceQACaptions
from tablereason.tools.docstore import DocStore, DocumentExplorer, WikiLookup, WikiSearch
from tablereason.tools.llm_tool import LLMTool
from tablereason.tools.ocr import OCR, ScienceQAOCR
from tablereason.tools.python_tool import PythonTool
from tablereason.tools.sql_tool import SQLTool
from tablereason.tools.table_tool import ReasonerFactory, TableTool
from tablereason.tools.web_search import WebSearch


class ToolContext:
    """What tool factories may need: a model, documents, tables, data and backends.

    Everything is optional; a factory that lacks what it needs raises
    :class:`~tablereason.errors.ConfigurationError` when the tool is built. The
    Wikipedia and Lookup tools built from one context share one explorer.

    Args:
        llm: The model for the LLM and Table tools.
        docstore: Documents for Wikipedia/Lookup; the HotpotQA paragraphs under
            ``data_dir`` when None.
        data_dir: The data root (``$TABLEREASON_DATA_DIR`` when None).
        tables: Tables the Table, SQL and Python tools read, by name.
        caption_model: Captioning backend (ScienceQA's precomputed captions when None).
        ocr_model: OCR backend (ScienceQA's precomputed OCR when None).
        search_backend: Web search backend (none: no network).
        table_reasoner: Builds the Table tool's reasoner from the model; the registered
            default (see :data:`~tablereason.tools.table_tool.TABLE_REASONERS`) when None.

    Example:
        >>> [t.name for t in build_tools(["calculator"], ToolContext())]
        ['Calculator']
    """

    def __init__(
        self,
        *,
        llm: Any = None,
        docstore: Any = None,
        data_dir: str | os.PathLike[str] | None = None,
        tables: Mapping[str, Any] | None = None,
        caption_model: Any = None,
        ocr_model: Any = None,
        search_backend: Any = None,
        table_reasoner: ReasonerFactory | None = None,
    ) -> None:
        self.llm = llm
        self.docstore = docstore
        self.data_dir = data_dir
        self.tables = dict(tables or {})
        self.caption_model = caption_model
        self.ocr_model = ocr_model
        self.search_backend = search_backend
        self.table_reasoner = table_reasoner
        self._explorer: DocumentExplorer | None = None

    def explorer(self) -> DocumentExplorer:
        """The document explorer shared by this context's Wikipedia and Lookup tools."""
        if self._explorer is None:
            if self.docstore is None:
                self.docstore = DocStore.from_hotpotqa(self.data_dir)
            self._explorer = DocumentExplorer(self.docstore)
        return self._explorer

    def require_tables(self, tool: str) -> dict[str, Any]:
        """The tables, or a clear error naming the tool that needs them."""
        if not self.tables:
            raise ConfigurationError(
                f"the {tool} tool needs tables: ToolContext(tables={{'name': table}})"
            )
        return self.tables

    def require_llm(self, tool: str) -> Any:
        """The model, or a clear error naming the tool that needs it."""
        if self.llm is None:
            raise ConfigurationError(f"the {tool} tool needs a model: ToolContext(llm=...)")
        return self.llm


ToolFactory = Callable[[ToolContext], Tool]

TOOLS: Registry[ToolFactory] = Registry("tool")
"""Built-in tool factories by name."""


def build_tools(names: Sequence[str], context: ToolContext | None = None) -> list[Tool]:
    """Build the named tools from one context.

    Raises:
        UnknownNameError: For an unregistered name (with the closest one).

    Example:
        >>> [t.name for t in build_tools(["calculator", "web_search"])]
        ['Calculator', 'Search']
    """
    context = context or ToolContext()
    return [TOOLS.get(name)(context) for name in names]


def _wikipedia(ctx: ToolContext) -> Tool:
    return WikiSearch(ctx.explorer())


def _lookup(ctx: ToolContext) -> Tool:
    return WikiLookup(ctx.explorer())


def _llm(ctx: ToolContext) -> Tool:
    return LLMTool(ctx.require_llm("LLM"))


def _calculator(ctx: ToolContext) -> Tool:
    return Calculator()


def _table(ctx: ToolContext) -> Tool:
    return TableTool(ctx.require_llm("Table"), ctx.tables, make_reasoner=ctx.table_reasoner)


def _sql(ctx: ToolContext) -> Tool:
    return SQLTool(ctx.require_tables("SQL"))


def _python(ctx: ToolContext) -> Tool:
    return PythonTool(ctx.require_tables("Python"))


def _image_captioner(ctx: ToolContext) -> Tool:
    return ImageCaptioner(ctx.caption_model or ScienceQACaptions(ctx.data_dir))


def _ocr(ctx: ToolContext) -> Tool:
    return OCR(ctx.ocr_model or ScienceQAOCR(ctx.data_dir))


def _web_search(ctx: ToolContext) -> Tool:
    return WebSearch(ctx.search_backend)


for _name, _factory in (
    ("wikipedia", _wikipedia),
    ("lookup", _lookup),
    ("llm", _llm),
    ("calculator", _calculator),
    ("table", _table),
    ("sql", _sql),
    ("python", _python),
    ("image_captioner", _image_captioner),
    ("ocr", _ocr),
    ("web_search", _web_search),
):
    TOOLS.register(_name, _factory)
