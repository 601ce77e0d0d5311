"""User, network, mount, IPC and UTS namespaces through ``unshare(2)`` via ctypes.

``os.unshare`` only exists from Python 3.12, so the call goes through libc. A
process that enters a new user namespace is mapped to uid 0 *inside* it, which
lets it mount a private tmpfs as its scratch directory; outside the namespace it
keeps its own uid and loses every capability. The new network namespace holds
only a loopback device that is down, so no packet can leave.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REC = 16384
MS_PRIVATE = 1 << 18

_PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
]


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


#: Every namespace a sandboxed child gets.
ALL = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS
#: What the fork server enters once, so its children share an empty network namespace.
SERVER = CLONE_NEWUSER | CLONE_NEWNET
#: What each child adds when the server already holds the user and network namespaces.
CHILD = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS


def enter_namespaces(flags: int = ALL) -> None:
    """Move the calling (single-threaded) process into fresh namespaces.

    Args:
        flags: ``CLONE_NEW*`` flags; with ``CLONE_NEWUSER`` the process is mapped
            to uid and gid 0 inside the new user namespace.

    Raises:
        OSError: The kernel refused (user namespaces disabled, or the process
            has more than one thread).

    Example:
        >>> import os
        >>> pid = os.fork()
        >>> if pid == 0:  # doctest: +SKIP
        ...     enter_namespaces(); os._exit(0)
    """
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(flags), "unshare")
    if not flags & CLONE_NEWUSER:
        return
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"0 {uid} 1")
    _write("/proc/self/gid_map", f"0 {gid} 1")


def mount_private_tmpfs(target: str, size_bytes: int) -> None:
    """Make every mount private to this namespace, then mount a tmpfs on ``target``.

    Args:
        target: An existing, empty directory.
        size_bytes: Size cap of the tmpfs.

    Raises:
        OSError: Mounting was refused (no mount namespace).

    Example:
        >>> mount_private_tmpfs("/tmp/scratch", 16 * 2**20)  # doctest: +SKIP
    """
    _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    options = f"size={int(size_bytes)},mode=0700,nr_inodes=4096".encode()
    _check(
        _libc.mount(b"tmpfs", target.encode(), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options),
        f"mount tmpfs on {target}",
    )


def set_parent_death_signal() -> None:
    """Have the kernel kill this process when its parent (the fork server) dies.

    Example:
        >>> set_parent_death_signal()  # doctest: +SKIP
    """
    _check(_libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
