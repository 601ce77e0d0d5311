"""Run model-written Python in a separate, contained process.

:func:`run_python` is the entry point. Programs run in fresh forks of a warm
server process (pandas and numpy preloaded), never in the caller's process.
The layers (see ``docs/sandbox.md``) are: a new process group with resource
limits and a wall-clock timeout that kills the group; an empty environment; a
private tmpfs scratch directory as working directory; new user, network and
mount namespaces; Landlock (read-only interpreter and libraries, no TCP); a
seccomp filter (no exec, fork, sockets, ptrace, mounts, BPF...); and, for
readable errors, an audit hook, restricted builtins and an AST check.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from tablereason.errors import SandboxError
from tablereason.sandbox.limits import ExecResult, Limits, Mode
from tablereason.sandbox.values import encode_inputs

_HEADER = struct.Struct(">I")
_CHECKOUT = str(Path(__file__).resolve().parents[2])
_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from tablereason.sandbox.server import main; main()"
)
_CHILD_ENV = {
    "LANG": "C.UTF-8",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}
_STARTUP_SECONDS = 60.0
_SLACK_SECONDS = 10.0


class ForkServer:
    """One warm server process; runs one program at a time.

    Args:
        kernel: Which kernel layers to try (``{"namespaces": bool, "landlock": bool,
            "seccomp": bool}``); all by default. Turning one off is for tests.

    Example:
        >>> limits = Limits().to_json()
        >>> server = ForkServer()  # doctest: +SKIP
        >>> server.request({"code": "ans = 1", "limits": limits})["value_json"]  # doctest: +SKIP
        '1'
    """

    def __init__(self, kernel: Mapping[str, bool] | None = None) -> None:
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, _CHECKOUT, json.dumps(dict(kernel or {}))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(_CHILD_ENV),
            cwd="/",
            bufsize=0,
            close_fds=True,
        )
        self.info = self._receive(time.monotonic() + _STARTUP_SECONDS)
        if not self.info.get("ready"):
            tail = self._stderr_tail()
            self.close()
            raise SandboxError(f"the sandbox server did not start: {tail}")

    def _stderr_tail(self) -> str:
        if self._stderr.closed:
            return "(closed)"
        self._stderr.seek(0)
        text = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return text or "(no output); check that pandas and numpy import in this interpreter"

    @property
    def alive(self) -> bool:
        """Whether the server process is still running."""
        return self._proc.poll() is None

    def _receive(self, deadline: float) -> dict[str, Any]:
        header = self._read(_HEADER.size, deadline)
        return dict(json.loads(self._read(_HEADER.unpack(header)[0], deadline)))

    def _read(self, size: int, deadline: float) -> bytes:
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        chunks: list[bytes] = []
        while size:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                self.close()
                raise SandboxError("the sandbox server stopped answering; it was restarted")
            chunk = os.read(fd, size)
            if not chunk:
                tail = self._stderr_tail()
                self.close()
                raise SandboxError(f"the sandbox server exited: {tail}")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def request(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its answer.

        Raises:
            SandboxError: The server died or stopped answering.
        """
        data = json.dumps(message, allow_nan=True).encode()
        wall = float(message.get("limits", {}).get("wall_seconds", 5.0))
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(_HEADER.pack(len(data)) + data)
        except (BrokenPipeError, OSError) as exc:
            self.close()
            raise SandboxError(f"the sandbox server is gone ({exc}); it will be restarted") from exc
        return self._receive(time.monotonic() + wall + _SLACK_SECONDS)

    def close(self) -> None:
        """Stop the server (its running child dies with it)."""
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.close()
                self._proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()
        base = self.info.get("base") if hasattr(self, "info") else None
        if isinstance(base, str) and os.path.basename(base).startswith("tablereason-sandbox-"):
            shutil.rmtree(base, ignore_errors=True)  # a killed server could not clean up


class PythonSandbox:
    """A pool of warm fork servers shared by concurrent callers.

    Args:
        workers: Servers to keep (programs that can run at once).
        limits: Default limits for :meth:`run`.
        kernel: Kernel layers to try (all by default); for tests.

    Example:
        >>> with PythonSandbox(workers=1) as box:  # doctest: +SKIP
        ...     box.run("ans = sum(xs)", {"xs": [1, 2, 3]}).value
        6
    """

    def __init__(
        self,
        workers: int = 2,
        limits: Limits | None = None,
        kernel: Mapping[str, bool] | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self._kernel = dict(kernel or {})
        self._idle: queue.Queue[ForkServer | None] = queue.Queue()
        self._all: list[ForkServer] = []
        self._lock = threading.Lock()
        self._closed = False
        for _ in range(max(1, workers)):
            self._idle.put(None)  # started on first use

    def __enter__(self) -> PythonSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        code: str,
        inputs: Mapping[str, Any] | None = None,
        limits: Limits | None = None,
        *,
        answer: str = "ans",
        mode: Mode = "default",
        python_layers: bool = True,
    ) -> ExecResult:
        """Run ``code`` in a fresh contained process and return what it left in ``answer``.

        See :func:`run_python` for the arguments. ``python_layers=False`` switches off
        the AST check, restricted builtins and audit hook (the kernel layers stay); it
        exists to test that the kernel layers alone contain a program.
        """
        limits = limits or self.limits
        reply, duration = self.request({
            "code": code,
            "inputs": encode_inputs(inputs),
            "limits": limits.to_json(),
            "answer": answer,
            "mode": mode,
            "python_layers": python_layers,
            "probe": False,
        })  # fmt: skip
        value = json.loads(reply["value_json"]) if "value_json" in reply else None
        return ExecResult(
            value=value,
            stdout=str(reply.get("stdout", "")),
            error=reply.get("error"),
            duration=duration,
            value_type=reply.get("value_type"),
            has_value=bool(reply.get("has_value", False)),
            layers=tuple(reply.get("layers", ())),
        )

    def request(self, message: Mapping[str, Any]) -> tuple[dict[str, Any], float]:
        """Send one raw request to an idle server; return its reply and the elapsed time.

        Raises:
            SandboxError: The sandbox broke or reported a setup failure.
        """
        if self._closed:
            raise SandboxError("this sandbox was closed; create a new PythonSandbox")
        started = time.perf_counter()
        server = self._idle.get()
        try:
            if server is None or not server.alive:
                server = ForkServer(self._kernel)
                with self._lock:
                    self._all.append(server)
            reply = server.request(message)
        except SandboxError:
            server = None
            raise
        finally:
            self._idle.put(server)
        if reply.get("setup"):
            raise SandboxError(str(reply.get("error")))
        return reply, time.perf_counter() - started

    def close(self) -> None:
        """Stop every server of the pool."""
        self._closed = True
        with self._lock:
            servers, self._all = self._all, []
        for server in servers:
            server.close()


_default: PythonSandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> PythonSandbox:
    """The process-wide pool used by :func:`run_python` (started lazily, closed at exit).

    Example:
        >>> default_sandbox() is default_sandbox()  # doctest: +SKIP
        True
    """
    global _default
    with _default_lock:
        if _default is None or _default._closed:
            _default = PythonSandbox(workers=min(2, os.cpu_count() or 1))
            atexit.register(_default.close)
        return _default


def run_python(
    code: str,
    inputs: Mapping[str, Any] | None = None,
    limits: Limits | None = None,
    *,
    answer: str = "ans",
    mode: Mode = "default",
    sandbox: PythonSandbox | None = None,
) -> ExecResult:
    """Run a program in the sandbox and return the value it assigned to ``answer``.

    Args:
        code: Python source written by a model.
        inputs: Names bound before the program runs: JSON data, pandas DataFrames,
            or objects with ``to_pandas()`` (they arrive as DataFrames).
        limits: Resource limits; :class:`Limits` defaults when None.
        answer: The variable that holds the answer.
        mode: ``"default"`` runs the program in one namespace; ``"paper"`` uses
            separate globals and locals like the Chameleon reference (names
            defined at top level are invisible inside comprehensions and functions).
        sandbox: The pool to use; the shared default pool when None.

    Returns:
        The :class:`ExecResult`; ``error`` holds a message for the model when the
        program failed, was rejected or hit a limit.

    Raises:
        SandboxError: The sandbox itself broke (abort rather than retry).

    Example:
        >>> run_python("ans = sum(xs) / len(xs)", {"xs": [1, 2, 3]}).value  # doctest: +SKIP
        2.0
    """
    box = sandbox or default_sandbox()
    return box.run(code, inputs, limits, answer=answer, mode=mode)


def active_layers(sandbox: PythonSandbox | None = None) -> dict[str, bool]:
    """Which containment layers are active on this machine, checked by a harmless probe.

    The probe runs an empty program with every layer on; kernel layers count as
    active only when the probe confirms that they refuse what they should
    (forking, sockets, reading outside the allowed trees).

    Example:
        >>> active_layers()["rlimits"]  # doctest: +SKIP
        True
    """
    box = sandbox or default_sandbox()
    reply, _ = box.request({
        "code": "ans = 1", "inputs": {}, "limits": box.limits.to_json(), "probe": True,
    })  # fmt: skip
    probe: dict[str, bool] = dict(reply.get("probe", {}))
    on = set(reply.get("layers", ()))
    names = (
        "process_group", "wall_timeout", "rlimits", "empty_env", "scratch_dir",
        "tmpfs_scratch", "user_namespace", "network_namespace", "mount_namespace",
        "landlock_fs", "landlock_net", "landlock_signal_scope", "seccomp",
        "audit_hook", "safe_builtins", "ast_check",
    )  # fmt: skip
    report = {name: name in on for name in names}
    report["wall_timeout"] = reply.get("error") is None
    report["rlimits"] &= probe.get("memory_limited", False) and probe.get("cpu_limited", False)
    report["empty_env"] &= probe.get("env_empty", False)
    report["landlock_fs"] &= probe.get("outside_read_denied", False)
    report["seccomp"] &= probe.get("fork_denied", False) and probe.get("socket_denied", False)
    report["seccomp"] &= probe.get("seccomp_mode_filter", False)
    return report
