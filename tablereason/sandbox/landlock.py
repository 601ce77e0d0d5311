"""Landlock: kernel file-system and TCP access control without root, via ctypes.

Once :func:`restrict` runs, the process (and anything it could start) can read
only the listed read-only trees, read and write only the listed read-write
trees, and cannot bind or connect TCP sockets (ABI 4 and later) or signal
processes outside its own domain (ABI 6 and later).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REFER = 1 << 13
TRUNCATE = 1 << 14
IOCTL_DEV = 1 << 15
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
NET_BIND_TCP = 1 << 0
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
SCOPE_SIGNAL = 1 << 1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
]


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _sys(number: int, *args: object) -> int:
    converted = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    return int(_libc.syscall(ctypes.c_long(number), *converted))


def abi_version() -> int:
    """The Landlock ABI the kernel offers, or 0 when Landlock is unavailable.

    Example:
        >>> abi_version() >= 0
        True
    """
    result = _sys(_SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION)
    return result if result > 0 else 0


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def prepare(read_only: Iterable[str], read_write: Iterable[str]) -> tuple[int, dict[str, bool]]:
    """Build a ruleset for the given trees (enforced later by :func:`enforce`).

    Paths that do not exist are skipped. Handled but unlisted accesses are denied:
    all other files, TCP bind and connect (ABI 4+), signals and abstract UNIX
    sockets outside the domain (ABI 6+).

    Args:
        read_only: Trees that may be read and executed.
        read_write: Trees that may be read, written and changed.

    Returns:
        The ruleset file descriptor and what it covers: ``{"fs", "net", "scope"}``.

    Raises:
        OSError: Landlock is unavailable or a call failed.

    Example:
        >>> fd, covers = prepare(["/usr/lib"], ["/tmp/scratch"])  # doctest: +SKIP
        >>> enforce(fd)  # doctest: +SKIP
    """
    abi = abi_version()
    if abi < 1:
        raise OSError("landlock is not available on this kernel")
    fs = _fs_rights(abi)
    attr = _RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0, 0)
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _sys(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        ro = EXECUTE | READ_FILE | READ_DIR
        for paths, rights in ((read_only, ro), (read_write, fs)):
            for path in paths:
                _add_path(ruleset, path, rights)
    except OSError:
        os.close(ruleset)
        raise
    return ruleset, {"fs": True, "net": abi >= 4, "scope": abi >= 6}


def enforce(ruleset: int) -> None:
    """Restrict the calling process with a prepared ruleset, then close it.

    Sets ``no_new_privs`` as Landlock requires.

    Raises:
        OSError: The kernel refused.
    """
    try:
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if _sys(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)


def restrict(read_only: Iterable[str], read_write: Iterable[str]) -> dict[str, bool]:
    """Prepare and enforce in one step; see :func:`prepare`.

    Example:
        >>> restrict(["/usr/lib"], ["/tmp/scratch"])  # doctest: +SKIP
        {'fs': True, 'net': True, 'scope': True}
    """
    ruleset, covers = prepare(read_only, read_write)
    enforce(ruleset)
    return covers


def _add_path(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= _FILE_ONLY
        rule = _PathBeneathAttr(rights, fd)
        if _sys(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0):
            raise OSError(ctypes.get_errno(), f"landlock_add_rule({path}) failed")
    finally:
        os.close(fd)
