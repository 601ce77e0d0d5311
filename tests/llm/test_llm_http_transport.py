"""The lean JSON transport: choice of transport, connection reuse, error replies."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from support.fake_server import FakeOpenAIServer, reply_text

from tablereason.errors import ConfigurationError, LLMError
from tablereason.llm import OpenAIChat, OpenAICompletion, Request, TransientLLMError
from tablereason.llm.backends.server.transport import JSONObject, JSONTransport, proxied


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "http_proxy",
        "https_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
        "no_proxy",
        "NO_PROXY",
    ):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_auto_picks_http_for_self_hosted_and_openai_for_openai(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    assert OpenAIChat("m", base_url="http://127.0.0.1:8000/v1").transport == "http"
    assert OpenAICompletion("m", base_url="https://vllm.example:8000/v1").transport == "http"
    assert OpenAIChat("m", api_key="k").transport == "openai"
    assert OpenAIChat("m", base_url="https://api.openai.com/v1").transport == "openai"
    forced = OpenAIChat("m", base_url="http://127.0.0.1:8000/v1", transport="openai")
    assert forced.transport == "openai"


def test_auto_leaves_proxied_urls_to_the_openai_package(
    no_proxy_env: pytest.MonkeyPatch,
) -> None:
    no_proxy_env.setenv("https_proxy", "http://proxy.internal:3128")
    assert proxied("https://vllm.example/v1")
    assert OpenAIChat("m", base_url="https://vllm.example/v1").transport == "openai"
    no_proxy_env.setenv("no_proxy", "vllm.example")
    assert not proxied("https://vllm.example/v1")
    assert OpenAIChat("m", base_url="https://vllm.example/v1").transport == "http"


def test_bad_transport_and_bad_url_are_clear_errors() -> None:
    with pytest.raises(ConfigurationError, match="transport must be"):
        OpenAIChat("m", base_url="http://127.0.0.1:9/v1", transport="grpc")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="http:// or https://"):
        JSONTransport("ftp://host/v1", api_key="x", timeout=1)


def test_json_objects_read_as_attributes() -> None:
    reply = json.loads('{"choices": [{"message": {"content": "hi"}}]}', object_hook=JSONObject)
    assert reply.choices[0].message.content == "hi"
    assert reply.choices[0].logprobs is None and reply.usage is None


def test_one_connection_per_thread_is_reused() -> None:
    with FakeOpenAIServer() as server:
        llm = OpenAIChat("m", base_url=server.url, transport="http")
        for i in range(5):
            assert llm.complete(Request(prompt=f"q{i}")).text == reply_text(f"q{i}", None, 0)
        first = llm.http()._local.conn
        llm.complete(Request(prompt="again"))
        assert llm.http()._local.conn is first and first.sock is not None


@contextmanager
def one_reply_per_connection(
    status: int = 200, body: bytes = b"", headers: str = ""
) -> Iterator[tuple[str, list[int]]]:
    """A raw server that answers one request per connection, then closes it silently
    (no ``Connection: close``), as servers do with idle keep-alive connections."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    served: list[int] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, rest = data.partition(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                while len(rest) < length:
                    rest += conn.recv(65536)
                prompt = json.loads(rest)["prompt"]
                payload = (
                    body
                    or json.dumps(
                        {
                            "model": "m",
                            "choices": [{"index": 0, "text": f"echo {prompt}"}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 2},
                        }
                    ).encode()
                )
                conn.sendall(
                    f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{headers}"
                    f"Content-Length: {len(payload)}\r\n\r\n".encode()
                    + payload
                )
            served.append(1)  # after the close

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/v1", served
    finally:
        stop.set()
        listener.close()
        thread.join(timeout=5)


def test_a_connection_closed_while_idle_is_replaced_not_reported() -> None:
    with one_reply_per_connection() as (url, served):
        llm = OpenAICompletion("m", base_url=url, transport="http")
        outs = []
        for i in range(4):
            outs.append(llm.complete(Request(prompt=f"p{i}")).text)
            # idle until the server has closed the connection (as a keep-alive timeout
            # does), so the next request finds a closed connection, not a closing one
            deadline = time.monotonic() + 5
            while len(served) <= i and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(0.02)
    assert outs == [f"echo p{i}" for i in range(4)]
    assert len(served) == 4


def test_error_replies_carry_the_servers_message() -> None:
    body = json.dumps({"error": {"message": "invalid key", "type": "auth"}}).encode()
    with (
        one_reply_per_connection(401, body) as (url, _),
        pytest.raises(LLMError, match=r"HTTP 401: invalid key.*OPENAI_API_KEY"),
    ):
        OpenAICompletion("m", base_url=url, transport="http").complete(Request(prompt="x"))
    with (
        one_reply_per_connection(503, b"overloaded", "Retry-After: 7\r\n") as (url, _),
        pytest.raises(TransientLLMError, match="overloaded") as info,
    ):
        OpenAICompletion("m", base_url=url, transport="http").complete(Request(prompt="x"))
    assert info.value.status == 503 and info.value.retry_after == 7.0
