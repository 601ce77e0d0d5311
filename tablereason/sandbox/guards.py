"""Python-level guards inside the sandboxed process: audit hook, builtins, output cap.

Like the AST check, these give the model readable errors ("file access is not
allowed") rather than being the boundary; module attributes and C extensions
can reach around them, and the kernel layers stop what does.
"""

from __future__ import annotations

import builtins
import io
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

from tablereason.sandbox.ast_check import ALLOWED_IMPORTS

_DENIED_EVENT_PREFIXES = (
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "os.kill", "os.killpg", "os.chdir", "os.putenv", "os.unsetenv", "subprocess.",
    "pty.", "socket.", "ctypes.", "sys._getframe", "sys._current_frames",
    "sys.settrace", "sys.setprofile", "sys.addaudithook", "gc.get_objects",
    "gc.get_referrers", "gc.get_referents", "builtins.input", "webbrowser.",
    "urllib.", "http.", "ftplib.", "smtplib.", "poplib.", "imaplib.", "nntplib.",
    "telnetlib.", "mmap.", "syslog.", "resource.setrlimit", "signal.", "winreg.",
)  # fmt: skip
_PATH_EVENTS = frozenset({"os.listdir", "os.scandir"})
_WRITE_EVENTS = frozenset({
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link",
    "os.symlink", "os.truncate", "os.utime", "shutil.copyfile", "shutil.copymode",
    "shutil.copystat", "shutil.copytree", "shutil.move", "shutil.rmtree",
    "shutil.make_archive", "shutil.unpack_archive", "os.mkfifo", "os.mknod",
})  # fmt: skip
_DANGEROUS_MODULES = frozenset({
    "subprocess", "_posixsubprocess", "socket", "_socket", "ssl", "_ssl", "ctypes",
    "_ctypes", "multiprocessing", "_multiprocessing", "pty", "pdb", "bdb", "code",
    "codeop", "mmap", "fcntl", "resource", "signal", "asyncio", "http", "urllib",
    "ftplib", "smtplib", "poplib", "imaplib", "nntplib", "telnetlib", "webbrowser",
    "xmlrpc", "socketserver", "selectors", "select", "importlib", "marshal", "pickle",
    "_pickle", "shelve", "sqlite3", "gc", "inspect", "tracemalloc", "faulthandler",
    "threading", "_thread", "concurrent", "shutil", "tempfile", "pathlib", "glob",
    "os", "posix", "sys", "builtins", "io", "_io",
})  # fmt: skip
_INTERNAL_IMPORTS = frozenset({"pandas", "numpy", "dateutil", "pytz", "tzdata", "six"})

_REMOVED_BUILTINS = (
    "open", "exec", "eval", "compile", "input", "breakpoint", "help", "exit", "quit",
    "globals", "locals", "vars", "getattr", "setattr", "delattr", "memoryview",
)  # fmt: skip


class OutputLimitExceeded(Exception):
    """The program printed more than it may."""


class BoundedOutput(io.TextIOBase):
    """A text stream that keeps at most ``limit`` characters and then raises."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.size = 0

    def writable(self) -> bool:
        """Always true."""
        return True

    def write(self, text: str) -> int:
        """Keep ``text``, or raise once the total would pass the limit."""
        self.size += len(text)
        if self.size > self.limit:
            raise OutputLimitExceeded(
                f"the program printed more than {self.limit} characters; print less"
            )
        self.parts.append(text)
        return len(text)

    def getvalue(self) -> str:
        """Everything printed so far."""
        return "".join(self.parts)


def _under(path: str, roots: Iterable[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)


def _path_of(arg: Any) -> str | None:
    if isinstance(arg, bytes):
        return arg.decode("utf-8", "replace")
    if isinstance(arg, str):
        return arg
    if isinstance(arg, os.PathLike):
        return str(os.fspath(arg))
    return None


def make_audit_hook(
    read_roots: Iterable[str], scratch: str
) -> Callable[[str, tuple[Any, ...]], None]:
    """Build the audit hook for a sandboxed program.

    Args:
        read_roots: Trees the interpreter itself reads (standard library, site-packages).
        scratch: The program's private working directory.

    Returns:
        A function for :func:`sys.addaudithook`.

    Example:
        >>> hook = make_audit_hook(["/usr/lib"], "/tmp/s")
        >>> hook("os.system", (b"ls",))
        Traceback (most recent call last):
        ...
        PermissionError: os.system is not allowed in the sandbox
    """
    roots = tuple(os.path.realpath(r) for r in read_roots)
    own = (os.path.realpath(scratch),)
    allowed_imports = (
        ALLOWED_IMPORTS
        | _INTERNAL_IMPORTS
        | (frozenset(sys.stdlib_module_names) - _DANGEROUS_MODULES)
    )

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith(_DENIED_EVENT_PREFIXES):
            raise PermissionError(f"{event} is not allowed in the sandbox")
        if event == "open":
            path = _path_of(args[0]) if args else None
            if path is None:
                return
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
            writing = any(c in mode for c in "wax+")
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writing = writing or bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            if _under(path, own) or (not writing and _under(path, roots)):
                return
            raise PermissionError(
                f"file access is not allowed in the sandbox ({path!r}); use the data given"
            )
        if event in _PATH_EVENTS:
            path = _path_of(args[0]) if args else "."
            if path is None or _under(path, own + roots):
                return
            raise PermissionError(f"listing {path!r} is not allowed in the sandbox")
        if event in _WRITE_EVENTS:
            paths = [p for p in (_path_of(a) for a in args) if p is not None]
            if paths and all(_under(p, own) for p in paths):
                return
            raise PermissionError(f"{event} outside the scratch directory is not allowed")
        if event == "import":
            name = str(args[0]) if args else ""
            if name.split(".")[0] not in allowed_imports:
                raise ImportError(f"import of {name!r} is not allowed in the sandbox")

    return hook


def safe_builtins(allowed_imports: frozenset[str] = ALLOWED_IMPORTS) -> dict[str, Any]:
    """A copy of the builtins without file, code and introspection functions.

    ``__import__`` admits the allowed modules and anything already loaded (C
    extensions import their internals through the caller's ``__import__``).

    Example:
        >>> "open" in safe_builtins()
        False
    """
    table = dict(vars(builtins))
    for name in _REMOVED_BUILTINS:
        table.pop(name, None)
    real_import = builtins.__import__

    def guarded_import(
        name: str,
        globals: Any = None,
        locals: Any = None,
        fromlist: Any = (),
        level: int = 0,
    ) -> Any:
        if level == 0 and name.split(".")[0] not in allowed_imports and name not in sys.modules:
            raise ImportError(
                f"import of {name!r} is not allowed; "
                f"available: {', '.join(sorted(allowed_imports))}"
            )
        return real_import(name, globals, locals, fromlist, level)

    table["__import__"] = guarded_import
    return table
