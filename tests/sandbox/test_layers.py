"""Each containment layer is active where the kernel offers it, and the pool recovers."""

from __future__ import annotations

import os
import signal
import socket

import pytest

from tablereason.errors import SandboxError
from tablereason.sandbox import Limits, PythonSandbox, active_layers, landlock, seccomp
from tablereason.sandbox.seccomp import DENIED_X86_64, build_filter, encode

ALWAYS = ("process_group", "wall_timeout", "rlimits", "empty_env", "scratch_dir",
          "audit_hook", "safe_builtins", "ast_check")  # fmt: skip


def test_active_layers_reports_every_layer(box: PythonSandbox) -> None:
    layers = active_layers(box)
    for name in ALWAYS:
        assert layers[name], name
    if landlock.abi_version() >= 1:
        assert layers["landlock_fs"]
    if landlock.abi_version() >= 4:
        assert layers["landlock_net"]
    if seccomp.supported():
        assert layers["seccomp"]


def test_each_run_reports_its_layers(box: PythonSandbox) -> None:
    result = box.run("ans = 1")
    assert {"rlimits", "process_group", "ast_check", "audit_hook"} <= set(result.layers)


def test_kernel_layers_can_be_switched_off_for_tests() -> None:
    with PythonSandbox(workers=1, kernel={"seccomp": False, "landlock": False}) as plain:
        layers = active_layers(plain)
    assert not layers["seccomp"] and not layers["landlock_fs"]
    assert layers["rlimits"]


def test_program_sees_an_empty_environment(box: PythonSandbox, monkeypatch) -> None:
    monkeypatch.setenv("TABLEREASON_TEST_SECRET", "hunter2")
    result = box.run("import pandas as pd\nans = pd.io.common.os.environ.copy()",
                     python_layers=False)  # fmt: skip
    assert result.error is None and result.value == {}


def test_working_directory_is_private_scratch(box: PythonSandbox) -> None:
    code = (
        "import pandas as pd\nos = pd.io.common.os\n"
        "open('note.txt', 'w').write('hi')\nans = [os.listdir('.'), open('note.txt').read()]"
    )
    assert box.run(code, python_layers=False).value == [["note.txt"], "hi"]
    # The next program starts with an empty scratch directory.
    result = box.run("import pandas as pd\nans = pd.io.common.os.listdir('.')",
                     python_layers=False)  # fmt: skip
    assert result.value == []


def test_file_size_limit(box: PythonSandbox) -> None:
    code = "f = open('big', 'wb')\nf.write(b'x' * 5_000_000)\nf.flush()\nans = 1"
    result = box.run(code, limits=Limits(file_bytes=1_000_000), python_layers=False)
    assert result.error is not None


def test_wall_timeout_kills_within_limit_plus_half_second(box: PythonSandbox) -> None:
    result = box.run("import time\ntime.sleep(30)", limits=Limits(wall_seconds=0.5))
    assert result.error is not None and "time limit" in result.error
    assert result.duration < 0.5 + 0.5


def test_cpu_limit(box: PythonSandbox) -> None:
    result = box.run("while True:\n    pass", limits=Limits(cpu_seconds=1, wall_seconds=5))
    assert result.error is not None and "CPU time limit" in result.error
    assert result.duration < 5 + 0.5  # CPU seconds; on a busy machine wall time runs longer


def test_pool_recovers_after_server_dies() -> None:
    with PythonSandbox(workers=1) as pool:
        assert pool.run("ans = 1").value == 1
        server = pool._all[0]
        os.kill(server.info["pid"], signal.SIGKILL)
        with pytest.raises(SandboxError):
            pool.run("ans = 2")
        assert pool.run("ans = 3").value == 3


def test_closed_pool_refuses_work() -> None:
    pool = PythonSandbox(workers=1)
    pool.close()
    with pytest.raises(SandboxError):
        pool.run("ans = 1")


def test_seccomp_filter_shape() -> None:
    program = build_filter(4242)
    assert len(encode(program)) == 8 * len(program)
    assert program[-1] == (0x06, 0, 0, 0x7FFF0000)  # default: allow
    # every denied call number appears as a comparison
    compared = {k for code, _, _, k in program if code == 0x15}
    assert set(DENIED_X86_64.values()) <= compared
    assert 4242 in compared  # signals only to itself


def _alone(layer: str) -> dict[str, bool]:
    return {name: name == layer for name in ("namespaces", "landlock", "seccomp")}


def test_network_namespace_alone_blocks_connections() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    code = "import socket\nsocket.create_connection(('127.0.0.1', port), 1)"
    try:
        with PythonSandbox(workers=1, kernel=_alone("namespaces")) as pool:
            result = pool.run(code, {"port": listener.getsockname()[1]}, python_layers=False)
        assert result.error is not None and "OSError" in result.error, result
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


def test_landlock_alone_blocks_files() -> None:
    with PythonSandbox(workers=1, kernel=_alone("landlock")) as pool:
        result = pool.run("ans = open('/etc/passwd').read()", python_layers=False)
    assert result.error is not None and "PermissionError" in result.error, result


def test_seccomp_alone_blocks_processes_and_sockets() -> None:
    with PythonSandbox(workers=1, kernel=_alone("seccomp")) as pool:
        fork = pool.run("import os\nans = os.fork()", python_layers=False)
        sock = pool.run("import socket\nsocket.socket()", python_layers=False)
    assert fork.error is not None and "PermissionError" in fork.error, fork
    assert sock.error is not None and "PermissionError" in sock.error, sock


def test_command_line_report(capsys) -> None:
    from tablereason.sandbox.__main__ import main

    status = main()
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("rlimits") and line.endswith("active") for line in lines)
    assert status == (0 if all(line.endswith(" active") for line in lines) else 1)
