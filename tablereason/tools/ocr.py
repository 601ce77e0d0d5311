"""Text detection (OCR) for MM-ReAct-style inputs: an interface and an offline default.

The default backend reads ScienceQA's precomputed EasyOCR results (``ocrs.json``:
per problem id, the Python literal of a list of ``(box, text, confidence)``),
parsed with :func:`ast.literal_eval` (literals only, never code). The observation
comes in one of three formats (:data:`OCRFormat`):

- ``"positions"`` (the tool's default): each text with the top-left corner of its box;
- ``"texts"``: the texts only, comma-separated (Chameleon's default profile);
- ``"published"``: the Python repr of the list of ``(box, text)`` pairs, confidence
  dropped, which is what Chameleon's published text detector puts in its prompts.

Example:
    >>> boxes = parse_easyocr("[([[1, 2], [9, 2], [9, 8], [1, 8]], 'fox', 0.9)]")
    >>> boxes[0].text, boxes[0].x, boxes[0].y
    ('fox', 1, 2)
    >>> format_detections(boxes)
    "'fox' at (1, 2)"
    >>> format_detections(boxes, style="published")
    "[([[1, 2], [9, 2], [9, 8], [1, 8]], 'fox')]"
"""

from __future__ import annotations

import ast
import os
from functools import cached_property
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from tablereason.llm.base import Usage
from tablereason.tools.base import BaseTool, ToolFailure
from tablereason.tools.captioner import image_id, read_json_field, scienceqa_folder

OCRFormat = Literal["positions", "texts", "published"]


class TextBox(BaseModel):
    """One detected text with the top-left corner of its box, the box and a confidence.

    ``box`` keeps the corner points exactly as the detector gave them (for the
    published format); it is None for backends that give only a position.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    x: int = 0
    y: int = 0
    confidence: float = 1.0
    box: Any = None


def parse_easyocr(raw: str) -> list[TextBox]:
    """Read EasyOCR's printed result list; malformed items are skipped.

    Raises:
        ValueError: If ``raw`` is not a Python literal.
    """
    value = ast.literal_eval(raw.strip() or "[]")
    boxes: list[TextBox] = []
    for item in value if isinstance(value, (list, tuple)) else []:
        try:
            box, text, confidence = item
            x, y = box[0]
            boxes.append(
                TextBox(text=str(text), x=int(x), y=int(y), confidence=float(confidence),
                        box=box)
            )  # fmt: skip
        except (TypeError, ValueError, IndexError):
            continue
    return boxes


def format_detections(boxes: list[TextBox], *, style: OCRFormat = "positions") -> str:
    """The detections as text, in one of the :data:`OCRFormat` styles.

    ``"positions"``: ``'text' at (x, y)`` items joined by ``; ``. ``"texts"``: the
    texts joined by ``, ``. ``"published"``: ``repr([(box, text), ...])`` with each
    box as the detector's list of corner points.

    Example:
        >>> format_detections([TextBox(text="a", x=1, y=2), TextBox(text="b")], style="texts")
        'a, b'
    """
    if style == "published":
        return repr([(b.box if b.box is not None else [[b.x, b.y]], b.text) for b in boxes])
    if style == "texts":
        return ", ".join(b.text for b in boxes)
    return "; ".join(f"{b.text!r} at ({b.x}, {b.y})" for b in boxes)


class OCRModel(Protocol):
    """A text-detection backend: image path (or id) to text boxes. May raise on failure."""

    def detect(self, image: str) -> list[TextBox]:
        """Detect the texts in the image."""
        ...


class ScienceQAOCR:
    """EasyOCR results precomputed for ScienceQA (``ocrs.json``), by path or pid.

    Args:
        data_dir: The data root or the ScienceQA folder; ``$TABLEREASON_DATA_DIR`` when None.
        texts: A ``{pid: raw EasyOCR list}`` mapping to use instead of the file.
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        texts: dict[str, str] | None = None,
    ) -> None:
        self._data_dir = data_dir
        if texts is not None:
            self.__dict__["texts"] = dict(texts)

    @cached_property
    def texts(self) -> dict[str, str]:
        """``{pid: raw EasyOCR list}``, read on first use."""
        path = scienceqa_folder(self._data_dir) / "ocrs.json"
        return {str(k): str(v) for k, v in read_json_field(path, "texts").items()}

    def detect(self, image: str) -> list[TextBox]:
        """The text boxes of the image at ``image`` (a path or a pid)."""
        pid = image_id(image)
        if pid is None:
            raise ToolFailure(f"{image!r} is not an image path or a problem id")
        if pid not in self.texts:
            raise ToolFailure(f"no OCR result for image {pid}")
        try:
            return parse_easyocr(self.texts[pid])
        except (ValueError, SyntaxError):
            raise ToolFailure(f"the OCR result for image {pid} is unreadable") from None


class OCR(BaseTool):
    """Read the text in an image given by its file path.

    Args:
        model: The OCR backend; :class:`ScienceQAOCR` when None.
        style: How detections are shown (:data:`OCRFormat`); ``"positions"`` by default.
        name: Tool name shown to the model.
    """

    name = "OCR"
    description = (
        "Reads the words written in an image, with their positions. Input: the image file path."
    )

    def __init__(
        self,
        model: OCRModel | None = None,
        *,
        style: OCRFormat = "positions",
        name: str | None = None,
    ) -> None:
        self.model: OCRModel = model or ScienceQAOCR()
        self.style: OCRFormat = style
        if name:
            self.name = name

    def run(self, text: str) -> tuple[str, Usage]:
        """Return the detected texts."""
        boxes = self.model.detect(text)
        if not boxes:
            shown = image_id(text) or repr(text)
            raise ToolFailure(f"no text detected in image {shown}")
        return format_detections(boxes, style=self.style), Usage(requests=0)
