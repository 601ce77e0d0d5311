"""The warm fork server: a process with pandas and numpy loaded that forks one child per program.

It is started by :class:`tablereason.sandbox.python.PythonSandbox` with an empty
environment and speaks length-prefixed JSON on stdin/stdout. For every request
it makes a scratch directory, forks, lets the child apply the sandbox layers and
run the program (:mod:`tablereason.sandbox.child`), waits at most the wall-clock
limit, kills the child's whole process group if needed, and answers. No state
carries from one program to the next because each runs in a fresh fork.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import shutil
import signal
import struct
import sys
import sysconfig
import tempfile
import time
from typing import Any

from tablereason.sandbox import child, landlock, namespaces, seccomp

_HEADER = struct.Struct(">I")
_LIB_DIRS = ("/usr/lib", "/lib", "/usr/lib64", "/lib64", "/usr/share/zoneinfo")
_SIGNAL_MESSAGES: dict[int, str] = {
    signal.SIGXCPU: "the program used more than its CPU time limit ({cpu}s); make it faster",
    signal.SIGKILL: "the program used more than its CPU time limit ({cpu}s); make it faster",
    signal.SIGSEGV: "the program crashed (segmentation fault), usually from too deep recursion",
    signal.SIGBUS: "the program crashed (bus error), usually from running out of memory",
    signal.SIGSYS: "the program made a forbidden system call and was stopped",
    signal.SIGABRT: "the program aborted, usually from running out of memory",
}


def read_roots(checkout: str | None) -> list[str]:
    """Trees the sandboxed interpreter may read: standard library, site-packages, system libraries.

    The checkout (and any folder above it) is left out, so its files stay hidden.

    Example:
        >>> any("python" in r for r in read_roots(None))
        True
    """
    candidates = [p for p in sys.path if p]
    paths = sysconfig.get_paths()
    candidates += [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    candidates += list(_LIB_DIRS)
    hidden = os.path.realpath(checkout) if checkout else None
    roots: list[str] = []
    for path in candidates:
        real = os.path.realpath(path)
        if not os.path.exists(real) or real in roots:
            continue
        if hidden and (real == hidden or hidden.startswith(real.rstrip("/") + "/")):
            continue
        roots.append(real)
    return roots


def _preload() -> None:
    import collections  # noqa: F401
    import datetime  # noqa: F401
    import decimal  # noqa: F401
    import fractions  # noqa: F401
    import itertools  # noqa: F401
    import random  # noqa: F401
    import re  # noqa: F401
    import statistics  # noqa: F401

    import numpy
    import pandas

    pandas.DataFrame({"a": [1, 2], "b": ["x", "y"]}).groupby("b").sum().to_dict()
    numpy.arange(3).mean()
    gc.collect()
    gc.freeze()


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _send(fd: int, message: dict[str, Any]) -> None:
    data = json.dumps(message, allow_nan=True).encode()
    child._write_all(fd, _HEADER.pack(len(data)) + data)


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)


def _describe_exit(status: int, cpu_used: float, limits: dict[str, Any]) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGKILL and cpu_used < float(limits["cpu_seconds"]) - 0.05:
            return "the program was killed (signal 9) before reporting a result"
        template = _SIGNAL_MESSAGES.get(sig, "the program was killed by signal {sig}")
        return template.format(cpu=limits["cpu_seconds"], sig=sig)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return f"the program exited (status {code}) before reporting a result"


class Spare:
    """A forked child that has its session, namespaces and scratch ready, waiting for a request."""

    def __init__(self, ctx: dict[str, Any]) -> None:
        self.scratch = (
            ctx["scratch"] if ctx["shared_scratch"] else tempfile.mkdtemp(dir=ctx["base"])
        )
        request_r, self.request_w = os.pipe()
        self.result_r, result_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child never returns
            os.close(self.request_w)
            os.close(self.result_r)
            child.run_in_child(request_r, result_w, {**ctx, "scratch": self.scratch})
        os.close(request_r)
        os.close(result_w)
        self.shared = bool(ctx["shared_scratch"])

    def discard(self) -> None:
        """Stop the child without giving it a request."""
        _kill_group(self.pid)
        self.cleanup(os.waitpid(self.pid, 0)[1])

    def close_pipes(self) -> None:
        """Close this side's pipe ends."""
        for fd in (self.request_w, self.result_r):
            if fd >= 0:
                os.close(fd)
        self.request_w = self.result_r = -1

    def cleanup(self, status: int) -> int:
        """Close pipes and remove a per-child scratch directory."""
        self.close_pipes()
        if not self.shared:
            shutil.rmtree(self.scratch, ignore_errors=True)
        return status


def run_one(req: dict[str, Any], spare: Spare) -> dict[str, Any]:
    """Hand one request to a prepared child, supervise it and return its result.

    Example:
        >>> run_one({"code": "ans = 1", "limits": {...}}, Spare(ctx))  # doctest: +SKIP
        {'value_json': '1', ...}
    """
    limits = req["limits"]
    started = time.monotonic()
    deadline = started + float(limits["wall_seconds"])
    with contextlib.suppress(OSError):  # a child that died early: its exit status tells why
        child._write_all(spare.request_w, json.dumps(req, allow_nan=True).encode())
    os.close(spare.request_w)
    spare.request_w = -1
    cap = int(limits["output_bytes"]) * 4 + int(limits["value_bytes"]) * 2 + 65536
    chunks: list[bytes] = []
    size = 0
    timed_out = oversized = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        if not select.select([spare.result_r], [], [], remaining)[0]:
            continue
        chunk = os.read(spare.result_r, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            oversized = True
            break
    _kill_group(spare.pid)  # its work is done (or it overran): nothing of it may linger
    elapsed = time.monotonic() - started
    try:
        result: dict[str, Any] = json.loads(b"".join(chunks)) if chunks else {}
    except ValueError:
        result = {}
    if result and not (timed_out or oversized):
        spare.close_pipes()
        _PENDING.append(spare)  # killed already; reaped later, off the critical path
        return result
    status, cpu_used = _reap(spare.pid, deadline)
    spare.cleanup(status)
    if timed_out:
        return {
            "error": f"the program ran longer than its time limit ({limits['wall_seconds']}s) "
            "and was stopped; avoid endless loops and heavy computation",
            "killed_after": elapsed,
        }
    if oversized:
        return {"error": "the program produced too much output and was stopped; print less"}
    return {"error": _describe_exit(status, cpu_used, limits), "killed_after": elapsed}


def _tmpfs_works(ctx: dict[str, Any]) -> bool:
    """Whether a child can mount a private tmpfs (then every child shares one empty mountpoint)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            shared = bool(ctx.get("server_namespaces"))
            namespaces.enter_namespaces(namespaces.CHILD if shared else namespaces.ALL)
            namespaces.mount_private_tmpfs(ctx["scratch"], 1 << 20)
            code = 0
        finally:
            os._exit(code)
    status = os.waitpid(pid, 0)[1]
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


_PENDING: list[Spare] = []


def reap_finished(block: bool = False) -> None:
    """Collect children that were killed after reporting, and clean up after them."""
    for spare in list(_PENDING):
        done, status = os.waitpid(spare.pid, 0 if block else os.WNOHANG)
        if done:
            _PENDING.remove(spare)
            spare.cleanup(status)


def _reap(pid: int, deadline: float) -> tuple[int, float]:
    """Wait for ``pid`` (killing its group if it outlives the deadline); status and CPU seconds."""
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline + 0.2:
            _kill_group(pid)
            _, status, usage = os.wait4(pid, 0)
            return status, usage.ru_utime + usage.ru_stime
        time.sleep(0.0005)


def main() -> None:
    """Serve requests from stdin until end of file or a ``shutdown`` request."""
    checkout = sys.argv[1] if len(sys.argv) > 1 else None
    kernel = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    server_namespaces = False
    if kernel.get("namespaces", True):
        # One user and network namespace for the server: its children share the
        # empty network namespace instead of each building and tearing down one.
        try:
            namespaces.enter_namespaces(namespaces.SERVER)
            server_namespaces = True
        except OSError:
            pass
    _preload()
    base = tempfile.mkdtemp(prefix="tablereason-sandbox-")
    os.chmod(base, 0o700)
    scratch = os.path.join(base, "scratch")
    os.mkdir(scratch, 0o700)
    ctx: dict[str, Any] = {
        "base": base,
        "scratch": scratch,
        "scratch_bytes": 16 << 20,
        "read_roots": read_roots(checkout),
        "outside_probe": checkout or "/etc",
        "kernel": kernel,
        "server_pid": os.getpid(),
        "server_namespaces": server_namespaces,
    }
    ctx["shared_scratch"] = kernel.get("namespaces", True) and _tmpfs_works(ctx)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    _send(1, {
        "ready": True,
        "pid": os.getpid(),
        "landlock_abi": landlock.abi_version(),
        "seccomp_supported": seccomp.supported(),
        "private_tmpfs": ctx["shared_scratch"],
        "base": base,
    })  # fmt: skip
    spare: Spare | None = None
    try:
        while True:
            if spare is None:
                spare = Spare(ctx)
            while _PENDING and not select.select([0], [], [], 0.001)[0]:
                reap_finished()
            header = _read_exact(0, _HEADER.size)
            body = _read_exact(0, _HEADER.unpack(header)[0]) if header else None
            if body is None:
                break
            req = json.loads(body)
            if req.get("op") == "shutdown":
                break
            try:
                if int(req["limits"]["scratch_bytes"]) != ctx["scratch_bytes"]:
                    ctx["scratch_bytes"] = int(req["limits"]["scratch_bytes"])
                    spare.discard()
                    spare = Spare(ctx)
                response = run_one(req, spare)
            except Exception as exc:
                response = {"error": f"fork server failed: {exc!r}", "setup": True}
            spare = None
            _send(1, response)
    finally:
        if spare is not None:
            spare.discard()
        reap_finished(block=True)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    main()
