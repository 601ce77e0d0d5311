"""Image captioning for MM-ReAct-style inputs: an interface and an offline default.

Images are referred to by file path (or by ScienceQA problem id). The default
backend reads the captions ScienceQA's Chameleon release ships (``captions.json``),
so nothing is computed or downloaded; another captioning model plugs in through
the :class:`CaptionModel` protocol.

Example:
    >>> class Fixed:
    ...     def caption(self, image: str) -> str:
    ...         return "a red kite"
    >>> ImageCaptioner(Fixed())("images/test/5/image.png")
    'a red kite'
"""

from __future__ import annotations

import json
import os
import re
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from tablereason.datasets import resolve_data_dir
from tablereason.errors import DatasetError
from tablereason.llm.base import Usage
from tablereason.tools.base import BaseTool, ToolFailure

_IMAGE_IN_FOLDER = re.compile(r"([^/\\\s]+)[/\\][^/\\\s]+\.(?:png|jpe?g|gif|bmp|webp)\b", re.I)
_PID = re.compile(r"\b(?:pid|problem|id)\s*[:=#]?\s*(\d+)\b", re.I)


def image_id(text: str) -> str | None:
    """The ScienceQA problem id an input refers to: a path ``.../<pid>/image.png`` or an id.

    Example:
        >>> image_id("/data/scienceqa/images/test/1002/image.png"), image_id(" 23 ")
        ('1002', '23')
        >>> image_id("pid: 7"), image_id("a cat") is None
        ('7', True)
    """
    text = text.strip().strip("\"'[]()")
    match = _IMAGE_IN_FOLDER.search(text)
    if match:
        return match.group(1)
    if text.isdigit():
        return text
    match = _PID.search(text)
    return match.group(1) if match else None


def scienceqa_folder(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The ScienceQA folder under a data root (or the root itself when it holds the files).

    Defaults to ``$TABLEREASON_DATA_DIR``.
    """
    root = resolve_data_dir(data_dir)
    return root / "scienceqa" if (root / "scienceqa").is_dir() else root


def read_json_field(path: Path, field: str) -> dict[str, Any]:
    """``json.load(path)[field]`` as a dict, with a clear error when missing."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(
            f"{str(path)!r} not found; it ships with the ScienceQA data (scienceqa/)"
        ) from None
    except json.JSONDecodeError as error:
        raise DatasetError(f"{str(path)!r} is not valid JSON: {error}") from None
    value = data.get(field) if isinstance(data, dict) else None
    if not isinstance(value, dict):
        raise DatasetError(f"{str(path)!r} has no {field!r} object of pid -> value")
    return value


class CaptionModel(Protocol):
    """A captioning backend: image path (or id) to one caption. May raise on failure."""

    def caption(self, image: str) -> str:
        """Describe the image."""
        ...


class ScienceQACaptions:
    """Captions precomputed for ScienceQA (``captions.json``), looked up by path or pid.

    Args:
        data_dir: The data root or the ScienceQA folder; ``$TABLEREASON_DATA_DIR`` when None.
        captions: A ``{pid: caption}`` mapping to use instead of the file.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        captions: dict[str, str] | None = None,
    ) -> None:
        self._data_dir = data_dir
        if captions is not None:
            self.__dict__["captions"] = dict(captions)

    @cached_property
    def captions(self) -> dict[str, str]:
        """``{pid: caption}``, read on first use."""
        path = scienceqa_folder(self._data_dir) / "captions.json"
        return {str(k): str(v) for k, v in read_json_field(path, "captions").items()}

    def caption(self, image: str) -> str:
        """The caption of the image at ``image`` (a path or a pid)."""
        pid = image_id(image)
        if pid is None:
            raise ToolFailure(f"{image!r} is not an image path or a problem id")
        found = self.captions.get(pid)
        if not found:
            raise ToolFailure(f"no caption for image {pid}")
        return found


class ImageCaptioner(BaseTool):
    """Describe an image given by its file path.

    Args:
        model: The captioning backend; :class:`ScienceQACaptions` when None.
        name: Tool name shown to the model.
    """

    name = "ImageCaptioner"
    description = "Describes the content of an image in one sentence. Input: the image file path."

    def __init__(self, model: CaptionModel | None = None, *, name: str | None = None) -> None:
        self.model: CaptionModel = model or ScienceQACaptions()
        if name:
            self.name = name

    def run(self, text: str) -> tuple[str, Usage]:
        """Return the caption."""
        return self.model.caption(text).strip(), Usage(requests=0)
