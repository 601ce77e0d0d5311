# ruff: noqa: E501 - the cases read best one per line
"""Hostile programs are contained: a clear error, the host untouched, the pool still working.

Guarded cases run with every layer; raw cases switch the Python layers off (no AST
check, audit hook or restricted builtins) to show that the kernel layers alone
contain the program. Fork and memory bombs run only after the harmless probe of
:func:`active_layers` shows that the layer which stops them is on; if it is not,
the test fails rather than the machine.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from tablereason.sandbox import ExecResult, Limits, PythonSandbox, active_layers

SECRET = "s3cr3t-canary-value"
CANARY_TEXT = "canary-original"
CHECKOUT = str(Path(__file__).resolve().parents[2])
SHORT = Limits(wall_seconds=2.0, cpu_seconds=1.0)


@dataclass(frozen=True)
class Host:
    box: PythonSandbox
    canary: Path
    marker: Path
    listener: socket.socket

    def inputs(self) -> dict[str, Any]:
        return {
            "path": str(self.canary),
            "marker": str(self.marker),
            "port": self.listener.getsockname()[1],
            "checkout": CHECKOUT,
        }


@pytest.fixture(scope="module")
def host() -> Iterator[Host]:
    os.environ["TABLEREASON_CANARY_SECRET"] = SECRET
    folder = Path(tempfile.mkdtemp(prefix="tablereason-canary-"))
    canary = folder / "canary.txt"
    canary.write_text(CANARY_TEXT)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    box = PythonSandbox(workers=1)
    try:
        yield Host(box, canary, folder / "pwned", listener)
    finally:
        box.close()
        listener.close()
        canary.unlink(missing_ok=True)
        folder.rmdir()
        os.environ.pop("TABLEREASON_CANARY_SECRET", None)


def err(*words: str) -> Callable[[ExecResult], bool]:
    def check(result: ExecResult) -> bool:
        return result.error is not None and all(w.lower() in result.error.lower() for w in words)

    return check


def no_secret(result: ExecResult) -> bool:
    return SECRET not in json.dumps(result.value) + result.stdout + str(result.error)


def nonzero(result: ExecResult) -> bool:
    return result.error is not None or result.value != 0


REJECTED = err("rejected before running")
DENIED = err("permission")


@dataclass(frozen=True)
class Case:
    name: str
    code: str
    check: Callable[[ExecResult], bool]
    raw: bool = False
    limits: Limits = SHORT


GUARDED = [
    Case("read_etc_passwd", "ans = open('/etc/passwd').read()", REJECTED),
    Case("read_canary", "ans = open(path).read()", REJECTED),
    Case("pandas_read_csv_passwd", "import pandas as pd\nans = pd.read_csv('/etc/passwd').shape",
         err("file access is not allowed")),
    Case("numpy_loadtxt_canary", "import numpy as np\nans = np.loadtxt(path, dtype=str).tolist()",
         err("not allowed")),
    Case("pandas_to_csv_outside", "import pandas as pd\npd.DataFrame({'a': [1]}).to_csv(marker)\nans = 1",
         err("not allowed")),
    Case("import_os", "import os\nans = os.listdir('/')", REJECTED),
    Case("import_subprocess", "import subprocess\nans = subprocess.check_output(['id'])", REJECTED),
    Case("import_socket", "import socket\nsocket.create_connection(('127.0.0.1', port))", REJECTED),
    Case("import_ctypes", "import ctypes\nans = ctypes.CDLL(None).getpid()", REJECTED),
    Case("subclasses_walk", "ans = [c for c in ().__class__.__base__.__subclasses__()]", REJECTED),
    Case("function_globals", "def f():\n    pass\nans = f.__globals__", REJECTED),
    Case("generator_frame", "g = (i for i in [1])\nans = g.gi_frame.f_back.f_globals", REJECTED),
    Case("string_built_attribute", "ans = getattr(1, '_' + '_class_' + '_')", REJECTED),
    Case("importlib", "import importlib\nans = importlib.import_module('os').getcwd()", REJECTED),
    Case("builtins_replacement", "__builtins__['len'] = print\nans = 1", REJECTED),
    Case("import_builtins", "import builtins\nbuiltins.open = None\nans = 1", REJECTED),
    Case("exec_string", "exec('import os')\nans = 1", REJECTED),
    Case("eval_string", "ans = eval('1 + 1')", REJECTED),
    Case("dunder_import", "ans = __import__('os').getcwd()", REJECTED),
    Case("module_attribute_os", "import pandas as pd\nans = pd.io.common.os.listdir('/')", REJECTED),
    Case("numpy_ctypes", "import numpy as np\nans = np.ctypeslib.ctypes.CDLL(None).fork()", REJECTED),
    Case("environ_through_pandas", "import pandas as pd\nans = dict(pd.io.common.os.environ)",
         REJECTED),
    Case("format_string_dunder", "ans = '{0.__class__}'.format(1)", REJECTED),
    Case("signal_handler", "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)", REJECTED),
    Case("gc_objects", "import gc\nans = len(gc.get_objects())", REJECTED),
    Case("sys_modules", "import sys\nans = list(sys.modules)", REJECTED),
    Case("input_call", "ans = input()", REJECTED),
    Case("open_via_vars", "ans = vars()['__builtins__']", REJECTED),
    Case("thread_import", "import threading\nans = threading.active_count()", REJECTED),
    Case("infinite_loop", "while True:\n    pass", err("time limit")),
    Case("sleep_forever", "import time\ntime.sleep(60)", err("time limit")),
    Case("deep_recursion", "def f(n):\n    return f(n + 1)\nans = f(0)", err("RecursionError")),
    Case("huge_output", "while True:\n    print('spam' * 100)", err("printed more than")),
    Case("huge_value", "ans = list(range(30_000))", err("larger than")),
    Case("huge_string_value", "ans = 'x' * 200_000", err("larger than")),
    Case("memory_grab_guarded", "ans = len('x' * (10**10))", err("MemoryError")),
]  # fmt: skip

RAW_CASES = [
    Case("raw_read_etc_passwd", "ans = open('/etc/passwd').read()", DENIED),
    Case("raw_read_canary", "ans = open(path).read()", DENIED),
    Case("raw_overwrite_canary", "open(path, 'w').write('pwned')", DENIED),
    Case("raw_create_marker", "open(marker, 'w').write('pwned')", DENIED),
    Case("raw_list_checkout", "import os\nans = os.listdir(checkout)", DENIED),
    Case("raw_read_checkout_source", "ans = open(checkout + '/tablereason/errors.py').read()", DENIED),
    Case("raw_list_root_home", "import os\nans = os.listdir(os.path.expanduser('~'))", DENIED),
    Case("raw_proc_environ", "ans = open('/proc/self/environ', 'rb').read().decode()", DENIED),
    Case("raw_proc_parent_cmdline", "import os\nans = open(f'/proc/{os.getppid()}/cmdline').read()",
         DENIED),
    Case("raw_environment", "import os\nans = dict(os.environ)",
         lambda r: no_secret(r) and r.value == {}),
    Case("raw_tcp_connect", "import socket\nsocket.create_connection(('127.0.0.1', port), 1)",
         DENIED),
    Case("raw_udp_socket", "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM)", DENIED),
    Case("raw_unix_socket", "import socket\nsocket.socket(socket.AF_UNIX)", DENIED),
    Case("raw_urllib", "import urllib.request\nurllib.request.urlopen(f'http://127.0.0.1:{port}')",
         err("")),
    Case("raw_subprocess", "import subprocess\nans = subprocess.run(['id']).returncode", DENIED),
    Case("raw_os_system", "import os\nans = os.system('touch ' + marker)", nonzero),
    Case("raw_fork_once", "import os\nans = os.fork()", DENIED),
    Case("raw_execv", "import os\nos.execv('/bin/sh', ['sh', '-c', 'id'])", DENIED),
    Case("raw_posix_spawn", "import os\nos.posix_spawn('/bin/true', ['true'], {})", err("")),
    Case("raw_ctypes_system", "import ctypes\nans = ctypes.CDLL(None).system(b'touch /tmp/x')",
         nonzero),
    Case("raw_ctypes_unshare", "import ctypes\nans = ctypes.CDLL(None).unshare(0x10000000)", nonzero),
    Case("raw_ctypes_mount",
         "import ctypes\nans = ctypes.CDLL(None).mount(b'none', b'/', None, 16384 | (1 << 18), None)",
         nonzero),
    Case("raw_ctypes_ptrace",
         "import ctypes, os\nans = ctypes.CDLL(None).ptrace(16, os.getppid(), 0, 0)", nonzero),
    Case("raw_ctypes_bpf", "import ctypes\nans = ctypes.CDLL(None).syscall(321, 0, 0, 0)", nonzero),
    Case("raw_ctypes_io_uring", "import ctypes\nans = ctypes.CDLL(None).syscall(425, 8, 0)", nonzero),
    Case("raw_kill_server", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)", DENIED),
    Case("raw_kill_init", "import os\nos.kill(1, 0)", DENIED),
    Case("raw_raise_rlimit",
         "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))", err("")),
    Case("raw_ignore_cpu_signal",
         "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass",
         err("")),
    Case("raw_symlink_escape",
         "import os\nos.symlink('/etc/passwd', 'p')\nans = open('p').read()", DENIED),
    Case("raw_dev_shm", "open('/dev/shm/pwned', 'w').write('x')", DENIED),
    Case("raw_sysfs", "import os\nans = os.listdir('/sys/class/net')", DENIED),
    Case("raw_chdir_root", "import os\nos.chdir('/')\nans = os.listdir('.')", DENIED),
    Case("raw_gc_secret_hunt",
         f"import gc\nans = any('{SECRET}' in o for o in gc.get_objects() if isinstance(o, str))",
         lambda r: r.error is None and r.value is False),
    Case("raw_crash_deep_recursion",
         "import sys\nsys.setrecursionlimit(10**7)\ndef f(n):\n    return f(n + 1)\nf(0)",
         err("")),
    Case("raw_thread_bomb",
         "import threading, time\nfor _ in range(100000):\n"
         "    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()",
         err("")),
    Case("raw_exit_without_result", "import os\nos._exit(0)", err("before reporting")),
    Case("raw_fill_scratch",
         "for i in range(100):\n    open(f'f{i}', 'wb').write(b'x' * 10_000_000)",
         err("")),
    Case("raw_huge_file", "open('big', 'wb').write(b'x' * 100_000_000)", err("")),
]  # fmt: skip


RAW = [replace(case, raw=True) for case in RAW_CASES]


def assert_host_untouched(host: Host) -> None:
    assert host.canary.read_text() == CANARY_TEXT
    assert not host.marker.exists()
    assert not Path("/tmp/x").exists() or Path("/tmp/x").stat().st_size == 0
    assert os.environ["TABLEREASON_CANARY_SECRET"] == SECRET
    with pytest.raises(BlockingIOError):
        host.listener.accept()  # nobody connected
    follow_up = host.box.run("ans = 40 + 2")
    assert follow_up.value == 42, follow_up.error


def test_enough_cases() -> None:
    assert len(GUARDED) + len(RAW) >= 40


@pytest.mark.parametrize("case", GUARDED + RAW, ids=lambda c: c.name)
def test_hostile_program_is_contained(host: Host, case: Case) -> None:
    result = host.box.run(case.code, host.inputs(), case.limits, python_layers=not case.raw)
    assert case.check(result), f"not contained: {result}"
    assert result.error is None or len(result.error) < 4000
    assert no_secret(result)
    assert result.duration < case.limits.wall_seconds + 0.5 + 0.5
    assert_host_untouched(host)


def test_fork_bomb_after_probe(host: Host) -> None:
    layers = active_layers(host.box)
    assert layers["seccomp"], "seccomp is not active: refusing to run a fork bomb"
    code = "import os\nwhile True:\n    os.fork()"
    result = host.box.run(code, limits=SHORT, python_layers=False)
    assert result.error is not None and "PermissionError" in result.error
    assert_host_untouched(host)


@pytest.mark.parametrize(
    "code",
    [
        "x = bytearray(16 * 1024**3)",
        "blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 1024**2))",
        "import numpy as np\nans = np.ones((60000, 60000)).sum()",
    ],
    ids=["one_huge_block", "growing_list", "numpy_matrix"],
)
def test_memory_bomb_after_probe(host: Host, code: str) -> None:
    layers = active_layers(host.box)
    assert layers["rlimits"], "memory limit is not active: refusing to run a memory bomb"
    result = host.box.run(code, limits=Limits(memory_bytes=256 * 1024**2, wall_seconds=5),
                          python_layers=False)  # fmt: skip
    assert result.error is not None and "MemoryError" in result.error, result
    assert_host_untouched(host)
