"""A seccomp-BPF filter installed through ctypes (x86-64).

The filter allows everything except a deny list: program execution, creating
processes (threads stay allowed), sockets, tracing other processes, namespace
and mount calls, BPF, io_uring, kernel keyrings, module loading, raising
resource limits, and signals to any process but this one. Denied calls fail
with ``EPERM`` so Python raises a readable ``PermissionError``. Calls from
another architecture or the x32 ABI kill the process.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_PR_GET_SECCOMP = 21
_SECCOMP_MODE_FILTER = 2
_SYS_SECCOMP = 317
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_SPEC_ALLOW = 1 << 2

_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_CLONE_THREAD = 0x00010000

# BPF opcodes.
_LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K

_OFF_NR = 0
_OFF_ARCH = 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


def _arg_high(index: int) -> int:
    return 20 + 8 * index


# x86-64 numbers of the calls the filter refuses outright.
DENIED_X86_64: dict[str, int] = {
    "execve": 59, "execveat": 322, "fork": 57, "vfork": 58,
    "socket": 41, "socketpair": 53,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
    "chroot": 161, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    "bpf": 321, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "tkill": 200, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
    "pidfd_send_signal": 424, "pidfd_open": 434, "pidfd_getfd": 438,
    "keyctl": 250, "add_key": 248, "request_key": 249,
    "perf_event_open": 298, "userfaultfd": 323,
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "reboot": 169, "swapon": 167, "swapoff": 168, "acct": 163,
    "setrlimit": 160, "mknod": 133, "mknodat": 259,
    "open_by_handle_at": 304, "name_to_handle_at": 303,
    "iopl": 172, "ioperm": 173, "settimeofday": 164, "clock_settime": 227,
    "adjtimex": 159, "clock_adjtime": 305, "sethostname": 170, "setdomainname": 171,
}  # fmt: skip
_CLONE, _CLONE3, _KILL, _TGKILL, _PRLIMIT64 = 56, 435, 62, 234, 302


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.argtypes = [
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
]


def supported() -> bool:
    """Whether this module has a filter for the machine's architecture.

    Example:
        >>> isinstance(supported(), bool)
        True
    """
    return platform.machine() in ("x86_64", "AMD64")


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> tuple[int, int, int, int]:
    return (code, jt, jf, k)


def build_filter(own_pid: int) -> list[tuple[int, int, int, int]]:
    """Build the BPF program as ``(code, jt, jf, k)`` tuples.

    Args:
        own_pid: The only process the filtered process may signal.

    Returns:
        The instructions, in order.

    Example:
        >>> build_filter(1234)[-1] == (0x06, 0, 0, 0x7FFF0000)
        True
    """
    errno_eperm = _RET_ERRNO | 1
    prog = [
        _op(_LD_ABS, _OFF_ARCH),
        _op(_JEQ, _AUDIT_ARCH_X86_64, 1, 0),
        _op(_RET, _RET_KILL_PROCESS),
        _op(_LD_ABS, _OFF_NR),
        _op(_JGE, _X32_BIT, 0, 1),
        _op(_RET, _RET_KILL_PROCESS),
    ]
    blocks: list[tuple[int, list[tuple[int, int, int, int]]]] = [
        (nr, [_op(_RET, errno_eperm)]) for nr in sorted(DENIED_X86_64.values())
    ]
    # clone3 cannot be inspected (its flags sit in memory): ENOSYS makes libc fall back to clone.
    blocks.append((_CLONE3, [_op(_RET, _RET_ERRNO | 38)]))
    # clone: threads only.
    blocks.append((_CLONE, [
        _op(_LD_ABS, _arg_low(0)),
        _op(_JSET, _CLONE_THREAD, 0, 1),
        _op(_RET, _RET_ALLOW),
        _op(_RET, errno_eperm),
    ]))  # fmt: skip
    # kill: only this process (or its own group, which holds only this process).
    blocks.append((_KILL, [
        _op(_LD_ABS, _arg_low(0)),
        _op(_JEQ, own_pid, 1, 0),
        _op(_JEQ, 0, 0, 1),
        _op(_RET, _RET_ALLOW),
        _op(_RET, errno_eperm),
    ]))  # fmt: skip
    # tgkill: only threads of this process.
    blocks.append((_TGKILL, [
        _op(_LD_ABS, _arg_low(0)),
        _op(_JEQ, own_pid, 0, 1),
        _op(_RET, _RET_ALLOW),
        _op(_RET, errno_eperm),
    ]))  # fmt: skip
    # prlimit64: reading is fine, setting is not.
    blocks.append((_PRLIMIT64, [
        _op(_LD_ABS, _arg_low(2)),
        _op(_JEQ, 0, 0, 3),
        _op(_LD_ABS, _arg_high(2)),
        _op(_JEQ, 0, 0, 1),
        _op(_RET, _RET_ALLOW),
        _op(_RET, errno_eperm),
    ]))  # fmt: skip
    for nr, block in blocks:
        prog.append(_op(_JEQ, nr, 0, len(block)))
        prog.extend(block)
    prog.append(_op(_RET, _RET_ALLOW))
    return prog


class Compiled:
    """A filter in kernel layout, ready for :func:`install`."""

    def __init__(self, instructions: list[tuple[int, int, int, int]]) -> None:
        self._array = (_SockFilter * len(instructions))(
            *(_SockFilter(c, jt, jf, k) for c, jt, jf, k in instructions)
        )
        self.prog = _SockFprog(len(instructions), self._array)


def compile_filter(own_pid: int | None = None) -> Compiled:
    """Build the filter for a process (the only one it may signal).

    Raises:
        OSError: The architecture is unsupported.

    Example:
        >>> len(compile_filter(1234)._array) > 50  # doctest: +SKIP
        True
    """
    if not supported():
        raise OSError(f"no seccomp filter for architecture {platform.machine()}")
    return Compiled(build_filter(os.getpid() if own_pid is None else own_pid))


def install(compiled: Compiled | None = None) -> None:
    """Install the filter on the calling thread (and every thread it starts later).

    Args:
        compiled: From :func:`compile_filter`; built for this process when None.

    Raises:
        OSError: The architecture is unsupported or the kernel refused.

    Example:
        >>> install()  # doctest: +SKIP
    """
    prog = (compiled or compile_filter()).prog
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    # SPEC_ALLOW: keep speculative-store-bypass mitigations as configured system-wide;
    # forcing them on per task makes every sandboxed program markedly slower.
    done = _libc.syscall(
        ctypes.c_long(_SYS_SECCOMP),
        ctypes.c_long(_SECCOMP_SET_MODE_FILTER),
        ctypes.c_long(_SECCOMP_FILTER_FLAG_SPEC_ALLOW),
        ctypes.byref(prog),
    )
    if done != 0 and _libc.prctl(
        _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(prog), 0, 0
    ):
        raise OSError(ctypes.get_errno(), "installing the seccomp filter failed")


def mode() -> int:
    """The calling thread's seccomp mode: 0 off, 1 strict, 2 filter.

    Example:
        >>> mode() in (0, 1, 2)
        True
    """
    return int(_libc.prctl(_PR_GET_SECCOMP, 0, 0, 0, 0))


def encode(instructions: list[tuple[int, int, int, int]]) -> bytes:
    """The filter in the kernel's binary layout (for inspection and tests).

    Example:
        >>> len(encode([(0x06, 0, 0, 0x7FFF0000)]))
        8
    """
    return b"".join(struct.pack("=HBBI", c, jt, jf, k) for c, jt, jf, k in instructions)
