"""Writing into a run folder without ever writing through a symlink that leaves it.

A run folder may come from elsewhere (copied, unpacked, shared), and a planted symlink
(``report.html -> ~/.bashrc``, ``examples -> /etc``) would make a report overwrite a
file outside the run. :func:`write_inside` refuses any link, of the file or of a folder
on the way, whose target is outside the run folder, and replaces files atomically
(a temporary file renamed over the old one), so even a link inside the folder is
replaced, not written through.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from tablereason.evaluate.results import ResultFileError


class RunFolderError(ResultFileError):
    """A write into a run folder would leave it (through a symlink) or hit a folder."""


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def check_inside(root: Path, path: Path) -> Path:
    """``path`` with its links resolved, when that stays inside ``root``.

    Args:
        root: The run folder (its own path may go through links: the user chose it).
        path: A path inside it, as written (``root / "examples" / "a.html"``).

    Returns:
        The resolved path.

    Raises:
        RunFolderError: When ``path``, or a folder on its way, is a link whose target
            is outside ``root``.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> (root / "examples").symlink_to("/etc")
        >>> try:
        ...     check_inside(root, root / "examples" / "passwd")
        ... except RunFolderError as error:
        ...     print(str(error).split(": ")[1].split(";")[0])
        examples is a symlink to /etc, outside the run folder
    """
    real_root = root.resolve()
    resolved = path.resolve()
    if _inside(resolved, real_root):
        return resolved
    links = [p for p in (path, *path.parents) if _inside(p, root) and p != root]
    link = next((p for p in reversed(links) if p.is_symlink()), None)
    if link is None:
        raise RunFolderError(f"refusing to write {path}: it is outside the run folder {root}")
    raise RunFolderError(
        f"refusing to write {path}: {link.relative_to(root)} is a symlink to "
        f"{os.readlink(link)}, outside the run folder; remove the link (or write the report "
        "elsewhere with --out)"
    )


def write_inside(root: Path, relative: str, text: str) -> Path:
    """Write ``text`` to ``root / relative`` atomically, staying inside ``root``.

    Folders on the way are created. The file is written to a temporary name in the same
    folder and renamed over the target, so a symlink at the target is replaced by the
    file, never followed.

    Raises:
        RunFolderError: When a link leads out of ``root``, or the target is a folder.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> write_inside(root, "examples/a.html", "<p>hi</p>").read_text()
        '<p>hi</p>'
    """
    target = root / relative
    folder = check_inside(root, target.parent)
    folder.mkdir(parents=True, exist_ok=True)
    check_inside(root, target.parent)  # a folder made meanwhile is checked again
    if target.is_symlink():
        check_inside(root, target)
    elif target.is_dir():
        raise RunFolderError(f"refusing to write {target}: it is a folder; remove or rename it")
    final = folder / target.name
    temporary = folder / f".{target.name}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    descriptor = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, final)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    return final
