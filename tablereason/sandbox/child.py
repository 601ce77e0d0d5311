"""What runs inside the sandboxed process: apply every layer, run the program, report.

:func:`run_in_child` is called in a freshly forked child of the fork server. It
never returns: it writes one JSON result to ``result_fd`` and exits. Layers go
on strongest first and in an order that keeps each one effective: namespaces
and the private tmpfs, resource limits (hard limits before seccomp, which then
forbids raising them), Landlock, seccomp, then the Python guards.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import select
import sys
import traceback
from collections.abc import Callable
from typing import Any

from tablereason.sandbox import landlock, namespaces, seccomp
from tablereason.sandbox.ast_check import find_problems
from tablereason.sandbox.guards import BoundedOutput, make_audit_hook, safe_builtins
from tablereason.sandbox.values import decode_input, dump_value, to_data

_ERROR_CHARS = 2000


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _set_limit(which: int, soft: int, hard: int | None = None) -> None:
    hard = soft if hard is None else hard
    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def prepare(ctx: dict[str, Any], layers: dict[str, bool]) -> dict[str, Any]:
    """First phase, before the request is known: everything that does not depend on it.

    Starts a session, enters the namespaces, mounts the scratch tmpfs and builds
    the Landlock ruleset, the seccomp filter and the Python guards, so that the
    second phase (:func:`restrict`) only has to switch them on.

    Returns:
        Prepared state for :func:`restrict` and the program run.

    Raises:
        OSError: The private scratch directory could not be set up.
    """
    os.setsid()
    layers["process_group"] = True
    scratch = ctx["scratch"]
    kernel = ctx.get("kernel", {})
    if kernel.get("namespaces", True):
        try:
            shared = bool(ctx.get("server_namespaces"))
            namespaces.enter_namespaces(namespaces.CHILD if shared else namespaces.ALL)
            layers["user_namespace"] = layers["network_namespace"] = True
            layers["mount_namespace"] = True
            namespaces.mount_private_tmpfs(scratch, int(ctx["scratch_bytes"]))
            layers["tmpfs_scratch"] = True
        except OSError:
            if ctx.get("shared_scratch"):
                raise
    namespaces.set_parent_death_signal()
    if os.getppid() != ctx["server_pid"]:
        os._exit(0)
    os.chdir(scratch)
    layers["scratch_dir"] = True
    state: dict[str, Any] = {}
    with open("/proc/self/statm", "rb") as f:
        state["baseline"] = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    if kernel.get("landlock", True):
        with contextlib.suppress(OSError):  # reported as an inactive layer
            state["landlock"] = landlock.prepare(ctx["read_roots"], [scratch])
    if kernel.get("seccomp", True):
        with contextlib.suppress(OSError):
            state["seccomp"] = seccomp.compile_filter()
    state["builtins"] = safe_builtins()
    state["hook"] = make_audit_hook(ctx["read_roots"], scratch)
    return state


def _warm_up_steps() -> list[Callable[[], object]]:
    import pandas as pd

    def frame() -> object:
        return decode_input(
            {"kind": "frame", "columns": ["a", "b"], "dtypes": {}, "rows": [[1, "x"], [2.5, "y"]]}
        )

    return [
        lambda: float(pd.Series([1.0, 2.0]).mean()),
        lambda: frame()["a"].sum(),  # type: ignore[index]
        lambda: frame()[frame()["a"] > 1]["b"].tolist(),  # type: ignore[index]
        lambda: find_problems("ans = [x for x in range(3)]"),
        lambda: dump_value(to_data({"a": [1.5, "x"]})),
    ]


def _warm_up_while_idle(request_fd: int) -> None:
    """While no request is waiting, touch the common pandas paths.

    A forked child pays copy-on-write page faults the first time it touches
    pandas; doing that before the request arrives takes it off the caller's
    time. Each step first checks for a request, so a busy pool skips the work.
    """
    if select.select([request_fd], [], [], 0.002)[0]:
        return
    for step in _warm_up_steps():
        if select.select([request_fd], [], [], 0)[0]:
            return
        step()


def restrict(req: dict[str, Any], state: dict[str, Any], layers: dict[str, bool]) -> None:
    """Second phase, once the request is known: limits, Landlock, seccomp, environment."""
    limits = req["limits"]
    cpu = math.ceil(float(limits["cpu_seconds"]))
    _set_limit(resource.RLIMIT_CPU, cpu, cpu + 1)
    _set_limit(resource.RLIMIT_AS, state["baseline"] + int(limits["memory_bytes"]))
    _set_limit(resource.RLIMIT_FSIZE, int(limits["file_bytes"]))
    _set_limit(resource.RLIMIT_NOFILE, int(limits["open_files"]))
    _set_limit(resource.RLIMIT_CORE, 0)
    layers["rlimits"] = True
    if "landlock" in state:
        ruleset, covers = state.pop("landlock")
        try:
            landlock.enforce(ruleset)
            layers["landlock_fs"] = covers["fs"]
            layers["landlock_net"] = covers["net"]
            layers["landlock_signal_scope"] = covers["scope"]
        except OSError:
            pass
    if "seccomp" in state:
        try:
            seccomp.install(state["seccomp"])
            layers["seccomp"] = True
        except OSError:
            pass
    os.environ.clear()
    layers["empty_env"] = True


def _probe(ctx: dict[str, Any], layers: dict[str, bool]) -> dict[str, bool]:
    """Harmless checks that the kernel layers really refuse what they should."""
    checks: dict[str, bool] = {}
    try:
        pid = os.fork()
    except PermissionError:
        checks["fork_denied"] = True
    else:
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        checks["fork_denied"] = False
    import socket

    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        checks["socket_denied"] = False
    except PermissionError:
        checks["socket_denied"] = True
    try:
        os.listdir(ctx["outside_probe"])
        checks["outside_read_denied"] = False
    except PermissionError:
        checks["outside_read_denied"] = True
    soft_as, _ = resource.getrlimit(resource.RLIMIT_AS)
    soft_cpu, _ = resource.getrlimit(resource.RLIMIT_CPU)
    checks["memory_limited"] = soft_as != resource.RLIM_INFINITY
    checks["cpu_limited"] = soft_cpu != resource.RLIM_INFINITY
    checks["env_empty"] = not os.environ
    checks["seccomp_mode_filter"] = seccomp.mode() == 2
    return checks


def _describe_exception(exc: BaseException) -> str:
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<program>":
            line = frame.lineno
    where = f" (line {line})" if line else ""
    text = f"{type(exc).__name__}: {exc}{where}"
    return text[:_ERROR_CHARS]


def _execute(req: dict[str, Any], state: dict[str, Any], layers: dict[str, bool]) -> dict[str, Any]:
    limits = req["limits"]
    code = req["code"]
    answer = req.get("answer", "ans")
    guarded = req.get("python_layers", True)
    if len(code) > int(limits["max_code_chars"]):
        return {"error": f"the program is longer than {limits['max_code_chars']} characters"}
    if guarded:
        problems = find_problems(code)
        layers["ast_check"] = True
        if problems:
            return {"error": "the program was rejected before running:\n" + "\n".join(problems)}
    try:
        compiled = compile(code, "<program>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return {"error": f"the program does not compile: {exc}"}
    inputs = {name: decode_input(tagged) for name, tagged in req.get("inputs", {}).items()}
    out = BoundedOutput(int(limits["output_bytes"]))
    sys.stdout = sys.stderr = out  # type: ignore[assignment]
    builtins_table = state["builtins"] if guarded else __builtins__
    layers["safe_builtins"] = guarded
    globals_ns: dict[str, Any] = {"__builtins__": builtins_table, "__name__": "__main__"}
    globals_ns.update(inputs)
    scope = {} if req.get("mode") == "paper" else globals_ns
    if guarded:
        sys.addaudithook(state["hook"])
        layers["audit_hook"] = True
    result: dict[str, Any] = {}
    try:
        exec(compiled, globals_ns, scope)  # the sandboxed process runs the program
    except BaseException as exc:
        result["error"] = _describe_exception(exc)
    result["stdout"] = out.getvalue()
    result["has_value"] = answer in scope
    if answer in scope:
        raw = scope[answer]
        try:
            value = to_data(raw)
            text = dump_value(value)
        except BaseException as exc:
            result.setdefault(
                "error", f"the answer could not be converted: {_describe_exception(exc)}"
            )
            return result
        if len(text.encode()) > int(limits["value_bytes"]):
            result.setdefault(
                "error",
                f"the answer is larger than {limits['value_bytes']} bytes; return a smaller value",
            )
            return result
        result["value_json"] = text
        result["value_type"] = type(raw).__name__
    return result


def _read_request(fd: int) -> dict[str, Any]:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    if not chunks:
        os._exit(0)  # the server went away or no longer needs this child
    return dict(json.loads(b"".join(chunks)))


def run_in_child(request_fd: int, result_fd: int, ctx: dict[str, Any]) -> None:
    """Prepare, wait for one request on ``request_fd``, run it, report on ``result_fd``, exit.

    The request holds ``code``, ``inputs`` (tagged), ``limits`` (dict), ``answer``,
    ``mode`` (``"default"`` or ``"paper"``), ``python_layers`` and ``probe``.

    Args:
        request_fd: Read end of the request pipe (read to end of file).
        result_fd: Write end of the result pipe.
        ctx: Server context: ``scratch``, ``shared_scratch``, ``scratch_bytes``,
            ``read_roots``, ``outside_probe``, ``kernel``, ``server_pid``.
    """
    status = 0
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        low, high = sorted((request_fd, result_fd))
        os.closerange(3, low)
        os.closerange(low + 1, high)
        os.closerange(high + 1, 1 << 16)
        layers: dict[str, bool] = {}
        state = prepare(ctx, layers)
        _warm_up_while_idle(request_fd)
        req = _read_request(request_fd)
        restrict(req, state, layers)
        probe = _probe(ctx, layers) if req.get("probe") else None
        result = _execute(req, state, layers)
        result["layers"] = sorted(k for k, v in layers.items() if v)
        if probe is not None:
            result["probe"] = probe
        _write_all(result_fd, json.dumps(result, allow_nan=True).encode())
        os.close(result_fd)  # end of file for the server now, not after teardown
    except BaseException as exc:
        status = 3
        try:
            detail = "".join(traceback.format_exception(exc))[-_ERROR_CHARS:]
            message = {"error": f"sandbox setup failed: {detail}", "setup": True}
            _write_all(result_fd, json.dumps(message).encode())
        except BaseException:
            pass
    finally:
        os._exit(status)
