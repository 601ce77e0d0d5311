"""How the bytes of a table file become text: its encoding, and the refusal of binary files.

:func:`sniff_encoding` picks the codec a text table is read with, from the start of the
file and one streaming pass over it (nothing is held but a 1 MiB buffer):

- a byte-order mark says UTF-8, UTF-16 or UTF-32 (little- or big-endian);
- UTF-16 without a mark is recognised by its pattern of NUL bytes;
- otherwise a file that is valid UTF-8 throughout is UTF-8, and any other file is read
  as Windows-1252 (what Excel writes on Windows), undefined bytes becoming U+FFFD.

Files that are not text are refused with :class:`~tablereason.errors.TableParseError`:
known binary formats by their signature (ZIP, which includes ``.xlsx``; PDF, images,
SQLite, compressed files, old ``.xls``...), any other file with NUL bytes in its first
64 KiB, and files whose first 64 KiB are more than 5% control characters.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from tablereason.errors import TableParseError

SAMPLE_BYTES = 64 * 1024
"""How much of a file is examined for its signature, NUL bytes and control characters."""
MAX_CONTROL_SHARE = 0.05
"""Largest share of control characters in the sample of a file still read as text."""
_MIN_CONTROLS = 8  # a few stray control characters never make a file binary
_CHUNK = 1 << 20

_BOMS = (  # UTF-32 first: its little-endian mark starts with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SIGNATURES = (
    (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook is one: give it the .xlsx suffix)"),
    (b"PK\x05\x06", "an empty ZIP archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Office file (an .xls workbook?)"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x1f\x8b", "a gzip-compressed file (decompress it first)"),
    (b"BZh", "a bzip2-compressed file (decompress it first)"),
    (b"\xfd7zXZ\x00", "an xz-compressed file (decompress it first)"),
    (b"(\xb5/\xfd", "a zstd-compressed file (decompress it first)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"SQLite format 3\x00", "an SQLite database (name it .sqlite, or give format='database')"),
    (b"PAR1", "a Parquet file (name it .parquet, or give format='parquet')"),
    (b"\x7fELF", "an executable"),
)
_TEXT_CONTROLS = frozenset("\t\n\r\x0b\x0c")


def sniff_encoding(path: Path) -> str:
    r"""The codec to read a text table with; refuses files that are not text.

    Args:
        path: The file.

    Returns:
        A Python codec name: ``"utf-8-sig"``, ``"utf-16"``, ``"utf-16-le"``,
        ``"utf-16-be"``, ``"utf-32"`` or ``"cp1252"``.

    Raises:
        TableParseError: When the file is not text (see the module notes).

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
        >>> _ = path.write_bytes("a,b\n1,2\n".encode("utf-16"))
        >>> sniff_encoding(path)
        'utf-16'
    """
    with path.open("rb") as handle:
        head = handle.read(SAMPLE_BYTES)
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec
    for signature, what in _SIGNATURES:
        if head.startswith(signature):
            raise TableParseError(
                f"{path}: this is {what}, not a text table; give a CSV, TSV, JSON or .xlsx file"
            )
    if b"\x00" in head:
        utf16 = _bomless_utf16(head)
        if utf16 is None:
            raise TableParseError(
                f"{path}: the file holds NUL bytes, so it is binary, not a text table; give "
                "a CSV, TSV, JSON or .xlsx file (or re-save this one as CSV)"
            )
        return utf16
    return "utf-8-sig" if _is_utf8(path) else "cp1252"


def check_text(sample: str, path: Path) -> None:
    r"""Refuse a file whose decoded sample is mostly control characters.

    Args:
        sample: The first characters of the file, decoded.
        path: The file, for the message.

    Raises:
        TableParseError: When more than :data:`MAX_CONTROL_SHARE` of ``sample`` (and at
            least 8 characters) are control characters or undecodable bytes.

    Example:
        >>> check_text("a,b\n\x1b[31mred\x1b[0m,2\n", Path("t.csv"))  # a few: text
    """
    controls = sum(1 for ch in sample if _is_control(ch))
    if controls >= _MIN_CONTROLS and controls > MAX_CONTROL_SHARE * len(sample):
        share = 100 * controls / len(sample)
        raise TableParseError(
            f"{path}: {share:.0f}% of the first {len(sample):,} characters are control "
            "characters or undecodable bytes, so this is not a text table; give a CSV, "
            "TSV, JSON or .xlsx file (or check the file's encoding)"
        )


def _is_control(ch: str) -> bool:
    code = ord(ch)
    if ch in _TEXT_CONTROLS:
        return False
    return code < 0x20 or 0x7F <= code <= 0x9F or code == 0xFFFD


def _bomless_utf16(head: bytes) -> str | None:
    """``utf-16-le``/``-be`` when NUL bytes sit at every other position (ASCII text)."""
    pairs = head[: len(head) - len(head) % 2]
    if len(pairs) < 4:
        return None
    even, odd = pairs[0::2], pairs[1::2]
    half = len(pairs) // 2
    if odd.count(0) > 0.3 * half and even.count(0) == 0:
        return "utf-16-le"
    if even.count(0) > 0.3 * half and odd.count(0) == 0:
        return "utf-16-be"
    return None


def _is_utf8(path: Path) -> bool:
    decoder = codecs.getincrementaldecoder("utf-8")()
    with path.open("rb") as handle:
        try:
            while chunk := handle.read(_CHUNK):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
    return True
