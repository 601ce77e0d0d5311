"""The built-in tools, registered in :data:`~tablereason.tools.base.TOOLS` by name.

| name | tool | needs |
|---|---|---|
| ``wikipedia`` | :class:`~tablereason.tools.docstore.WikiSearch` | a document store |
| ``lookup`` | :class:`~tablereason.tools.docstore.WikiLookup` | the same explorer |
| ``llm`` | :class:`~tablereason.tools.llm_tool.LLMTool` | a model |
| ``calculator`` | :class:`~tablereason.tools.calculator.Calculator` | nothing |
| ``table`` | :class:`~tablereason.tools.table_tool.TableTool` | a model and tables |
| ``image_captioner`` | :class:`~tablereason.tools.captioner.ImageCaptioner` | ScienceQA data |
| ``ocr`` | :class:`~tablereason.tools.ocr.OCR` | ScienceQA data |
| ``web_search`` | :class:`~tablereason.tools.web_search.WebSearch` | a backend (none) |

Example:
    >>> TOOLS.names()[:3]
    ['wikipedia', 'lookup', 'llm']
"""

from __future__ import annotations

from tablereason.tools.base import TOOLS, Tool, ToolContext
from tablereason.tools.calculator import Calculator
from tablereason.tools.captioner import ImageCaptioner, ScienceQACaptions
from tablereason.tools.docstore import WikiLookup, WikiSearch
from tablereason.tools.llm_tool import LLMTool
from tablereason.tools.ocr import OCR, ScienceQAOCR
from tablereason.tools.table_tool import TableTool
from tablereason.tools.web_search import WebSearch


def _wikipedia(ctx: ToolContext) -> Tool:
    return WikiSearch(ctx.explorer())


def _lookup(ctx: ToolContext) -> Tool:
    return WikiLookup(ctx.explorer())


def _llm(ctx: ToolContext) -> Tool:
    return LLMTool(ctx.require_llm("LLM"))


def _calculator(ctx: ToolContext) -> Tool:
    return Calculator()


def _table(ctx: ToolContext) -> Tool:
    return TableTool(ctx.require_llm("Table"), ctx.tables)


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
    ("image_captioner", _image_captioner),
    ("ocr", _ocr),
    ("web_search", _web_search),
):
    TOOLS.register(_name, _factory)
