"""A fake OpenAI-compatible HTTP server on 127.0.0.1 with fault injection, for tests.

Serves ``/v1/chat/completions`` and ``/v1/completions`` (and, for GET, the JSON bodies
given in ``routes``: ``/v1/models``, a server's own ``/version``...). Replies are deterministic
(a digest of the prompt, the seed and the choice index) and usage counts words, so
tests can check exactly what came back. Faults are queued with :meth:`inject` and
applied to the next requests in arrival order, or drawn at random with ``fault_rate``.

Run it alone (for benchmarks): ``python tests/support/fake_server.py --latency 0.1``
prints ``PORT <n>`` and serves until killed or until its standard input closes.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = (
    "429",
    "500",
    "slow",
    "truncate",
    "badjson",
    "reset",
    "context",
    "empty",
    "nochoices",
    "reply",
    "dup",
    "dup_next",
    "trickle",
    "trickle_body",
)


@dataclass
class Fault:
    """One injected fault: ``kind`` is one of FAULTS; ``seconds`` is Retry-After or delay.

    ``reply``: answer with ``status``, ``body`` (bytes as they are, anything else as
    JSON) and ``headers``. ``429`` sends ``retry_after`` as the Retry-After text when
    given (else ``seconds``). ``dup``: the normal reply sent twice at once; ``dup_next``:
    the reply sent again, before the real one, in answer to the next request on the
    connection. ``trickle``: the whole reply, one byte every ``seconds``;
    ``trickle_body``: headers at once, then the body one byte every ``seconds``.
    """

    kind: str
    seconds: float = 0.0
    status: int = 200
    body: Any = None
    headers: dict[str, str] | None = None
    retry_after: str | None = None


class FakeSleep:
    """Records requested waits instead of sleeping (for retry tests)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@dataclass
class Counts:
    received: int = 0
    replies: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def prompt_of(body: dict[str, Any]) -> str:
    if "messages" in body:
        return "\n\n".join(str(m.get("content", "")) for m in body["messages"])
    prompt = body.get("prompt", "")
    return prompt if isinstance(prompt, str) else "\n".join(prompt)


def reply_text(prompt: str, seed: Any, index: int) -> str:
    digest = hashlib.sha256(f"{prompt}|{seed}|{index}".encode()).hexdigest()[:10]
    return f"reply {digest} choice {index}"


class FakeOpenAIServer:
    """The server; use as a context manager. ``url`` is the base URL for the client."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        ignore_n: bool = False,
        empty_chat: bool = False,
        fault_rate: float = 0.0,
        fault_kinds: tuple[str, ...] = ("429", "500", "truncate", "badjson", "reset"),
        seed: int = 0,
        port: int = 0,
        reply_id: str | None = None,
        routes: dict[str, Any] | None = None,
    ) -> None:
        self.latency = latency
        self.ignore_n = ignore_n
        self.empty_chat = empty_chat
        self.fault_rate = fault_rate
        self.fault_kinds = fault_kinds
        self._rng = random.Random(seed)
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self.reply_id = reply_id  # one id for every reply (else each gets its own)
        self.routes = dict(routes or {})  # GET path -> JSON body (others: 404)
        self.gets: list[str] = []
        self._ids = 0
        self.counts = Counts()
        self.bodies: list[dict[str, Any]] = []
        self.faults_applied: list[str] = []
        handler = type("Handler", (_Handler,), {"owner": self})
        self.httpd = _Server(("127.0.0.1", port), handler)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def inject(self, *faults: Fault | str) -> None:
        with self._lock:
            self._faults.extend(f if isinstance(f, Fault) else Fault(f) for f in faults)

    def next_fault(self) -> Fault | None:
        with self._lock:
            if self._faults:
                return self._faults.popleft()
            if self.fault_rate and self._rng.random() < self.fault_rate:
                return Fault(self._rng.choice(self.fault_kinds), 0.01)
            return None

    def start(self) -> FakeOpenAIServer:
        # A short poll interval: shutdown() waits for the loop's next poll (0.5 s by default,
        # paid by every test that stops a server).
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def build_reply(self, path: str, body: dict[str, Any], empty: bool = False) -> dict[str, Any]:
        prompt = prompt_of(body)
        n = 1 if self.ignore_n else int(body.get("n") or 1)
        chat = path.endswith("/chat/completions")
        choices, completion_tokens = [], 0
        for i in range(n):
            text = reply_text(prompt, body.get("seed"), i)
            if chat and (self.empty_chat or empty):
                text = ""
            completion_tokens += len(text.split())
            if chat:
                choices.append(
                    {
                        "index": i,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                )
            else:
                choices.append(
                    {"index": i, "text": text, "finish_reason": "stop", "logprobs": None}
                )
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": completion_tokens}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        with self._lock:
            self._ids += 1
            reply_id = self.reply_id or f"fake-{self._ids}"
        return {
            "id": reply_id,
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": choices,
            "usage": usage,
        }

    def count_reply(self, reply: dict[str, Any], sign: int = 1) -> None:
        """Count a reply (``sign=-1`` takes back one that could not be sent)."""
        with self._lock:
            self.counts.replies += sign
            self.counts.prompt_tokens += sign * reply["usage"]["prompt_tokens"]
            self.counts.completion_tokens += sign * reply["usage"]["completion_tokens"]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # the listen backlog: many clients connect at once


class _Handler(BaseHTTPRequestHandler):
    owner: FakeOpenAIServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        # reply at once: without this, Nagle + delayed ACK stall every reply by ~40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()

    def _send_reply(self, reply: dict[str, Any]) -> None:
        """Send a completion, counted *before* its bytes leave.

        A client may read ``counts`` as soon as it has the reply; counting after the
        write let it see the count without this reply when the server thread was
        descheduled between the two (seen on a loaded machine).
        """
        self.owner.count_reply(reply)
        try:
            if self.repeat is not None:  # dup_next: the previous reply once more first
                self.wfile.write(self.repeat)
                self.repeat = None
            self._send_json(200, reply)
        except OSError:
            self.owner.count_reply(reply, sign=-1)  # never reached the client
            raise

    repeat: bytes | None = None

    @staticmethod
    def _response_bytes(status: int, payload: Any, headers: dict[str, str] | None = None) -> bytes:
        """A whole HTTP response as bytes (for faults that write it in pieces)."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        lines = [f"HTTP/1.1 {status} Status", "Content-Type: application/json"]
        lines.append(f"Content-Length: {len(data)}")
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + data

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if isinstance(payload, bytes):
            self.wfile.write(self._response_bytes(status, payload, headers))
            return
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        owner = self.owner
        with owner._lock:
            owner.gets.append(self.path)
        if self.path in owner.routes:
            self._send_json(200, owner.routes[self.path])
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        owner = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with owner._lock:
            owner.counts.received += 1
            owner.bodies.append(body)
        if not self.path.endswith(("/chat/completions", "/completions")):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        fault = owner.next_fault()
        if owner.latency:
            time.sleep(owner.latency)
        try:
            if fault is not None:
                with owner._lock:
                    owner.faults_applied.append(fault.kind)
                if self._apply(fault, body):
                    return
            self._send_reply(owner.build_reply(self.path, body))
        except OSError:  # the client gave up (timeout) or the socket was reset
            self.close_connection = True

    def _apply(self, fault: Fault, body: dict[str, Any]) -> bool:
        """Apply a fault; True when the request is finished (no normal reply)."""
        kind = fault.kind
        if kind == "429":
            retry_after = fault.retry_after
            self._send_json(
                429,
                {"error": {"message": "rate limited", "type": "rate_limit"}},
                {
                    "Retry-After": f"{fault.seconds:g}" if retry_after is None else retry_after,
                    **(fault.headers or {}),
                },
            )
        elif kind == "reply":
            self._send_json(fault.status, fault.body, fault.headers)
        elif kind in ("dup", "dup_next", "trickle", "trickle_body"):
            reply = self.owner.build_reply(self.path, body)
            data = self._response_bytes(200, reply)
            self.owner.count_reply(reply)
            if kind == "dup":
                self.wfile.write(data + data)
            elif kind == "dup_next":
                self.wfile.write(data)
                self.repeat = data
            else:
                start = data.index(b"\r\n\r\n") + 4 if kind == "trickle_body" else 0
                self.wfile.write(data[:start])
                for i in range(start, len(data)):
                    time.sleep(fault.seconds)
                    self.wfile.write(data[i : i + 1])
        elif kind == "500":
            self._send_json(500, {"error": {"message": "internal error", "type": "server"}})
        elif kind == "context":
            self._send_json(
                400,
                {
                    "error": {
                        "message": "This model's maximum context length is 2048 tokens. "
                        "However, you requested 5000 tokens.",
                        "code": "context_length_exceeded",
                    }
                },
            )
        elif kind == "slow":
            time.sleep(fault.seconds)
            return False
        elif kind in ("truncate", "badjson"):
            data = json.dumps(self.owner.build_reply(self.path, body)).encode()
            part = data[: len(data) // 2]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data) if kind == "truncate" else len(part)))
            self.end_headers()
            self.wfile.write(part)
            self.wfile.flush()
            if kind == "truncate":
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
        elif kind == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif kind == "nochoices":
            self._send_json(200, {**self.owner.build_reply(self.path, body), "choices": []})
        elif kind == "empty":
            self._send_reply(self.owner.build_reply(self.path, body, empty=True))
        else:
            raise ValueError(f"unknown fault {kind!r}; known: {FAULTS}")
        return True


def spawn(latency: float) -> tuple[subprocess.Popen[str], str]:
    """Run the server in its own process (as benchmarks do); the process and base URL.

    The server stops when the process's standard input is closed.
    """
    proc = subprocess.Popen(
        [sys.executable, __file__, "--latency", str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    return proc, f"http://127.0.0.1:{line[1]}/v1"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = FakeOpenAIServer(latency=args.latency, port=args.port).start()
    print(f"PORT {server.port}", flush=True)
    try:
        sys.stdin.read()  # serve until the parent closes our stdin
    finally:
        server.stop()


if __name__ == "__main__":
    main()
