"""The watch on a run's model: an unreachable server fails fast, other failures pass through."""

from __future__ import annotations

import asyncio
import errno
import socket
import time

import pytest
from support.fake_server import Fault
from support.scripted_server import ScriptedServer

from tablereason.evaluate.server_watch import (
    ServerUnreachableError,
    ServerWatch,
    server_url,
    unreachable_reason,
)
from tablereason.llm import OpenAIChat, Request, RetryingLLM, RetryPolicy, ScriptedLLM
from tablereason.llm.errors import TransientLLMError, is_retryable


def _wrapped(inner: BaseException) -> TransientLLMError:
    """An error as HTTP clients raise it: the socket's error two causes down."""
    try:
        try:
            raise inner
        except OSError as error:
            raise ConnectionError("connect failed") from error
    except ConnectionError as error:
        wrapped = TransientLLMError(f"connection failed: {error}")
        wrapped.__cause__ = error
        return wrapped


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), "connection refused"),
        (socket.gaierror(-2, "Name or service not known"), "the host name is unknown"),
        (OSError(errno.EHOSTUNREACH, "no route"), "no route to the host"),
        (OSError(errno.ENETUNREACH, "unreachable"), "the network is unreachable"),
    ],
)
def test_unreachable_reasons_are_found_down_the_cause_chain(error, reason) -> None:
    assert unreachable_reason(error) == reason
    assert unreachable_reason(_wrapped(error)) == reason


@pytest.mark.parametrize(
    "error",
    [TimeoutError("slow"), ConnectionResetError(errno.ECONNRESET, "reset"),
     TransientLLMError("HTTP 503", status=503), ValueError("bad")],
)  # fmt: skip
def test_other_failures_are_not_unreachable(error) -> None:
    assert unreachable_reason(error) is None


def test_a_refusing_server_is_tried_a_bounded_number_of_times_then_named() -> None:
    waits: list[float] = []
    down = ScriptedLLM(replies=[_wrapped(ConnectionRefusedError(111, "refused"))] * 5)
    watch = ServerWatch(down, attempts=3, pause_s=0.25, sleep=waits.append)
    with pytest.raises(ServerUnreachableError, match="the model server is unreachable"):
        watch.complete(Request(prompt="hi"))
    assert len(down.requests) == 3 and waits == [0.25, 0.5]
    assert watch.down and not is_retryable(watch.last_error)  # the retry layer lets it pass


def test_a_server_that_comes_up_while_retried_is_used() -> None:
    flaky = ScriptedLLM(replies=[ConnectionRefusedError(111, "refused"), "ok"])
    watch = ServerWatch(flaky, sleep=lambda s: None)
    assert watch.complete(Request(prompt="hi")).text == "ok"
    assert watch.last_error is None and not watch.down


def test_other_errors_pass_through_once_and_are_remembered_until_a_success() -> None:
    busy = TransientLLMError("HTTP 503", status=503)
    model = ScriptedLLM(replies=[busy, "ok"])
    watch = ServerWatch(model, sleep=lambda s: pytest.fail("no pause for other errors"))
    with pytest.raises(TransientLLMError):
        watch.complete(Request(prompt="hi"))
    assert watch.last_error is busy and not watch.down and len(model.requests) == 1
    watch.complete(Request(prompt="hi"))
    assert watch.last_error is None and watch.failures == 1 and watch.requests == 2


def test_under_the_retry_layer_a_dead_server_fails_in_well_under_a_second() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    for transport in ("http", "openai"):
        backend = OpenAIChat("m", base_url=url, api_key="unused", transport=transport)
        model = RetryingLLM(ServerWatch(backend), RetryPolicy())  # the default 6 attempts
        started = time.monotonic()
        with pytest.raises(ServerUnreachableError, match=f"the server at {url} is unreachable"):
            model.complete(Request(prompt="hi"))
        assert time.monotonic() - started < 5.0, transport


def test_a_running_server_is_not_disturbed() -> None:
    with ScriptedServer(lambda prompt: "fine") as server:
        server.inject(Fault("500"))
        backend = OpenAIChat("m", base_url=server.url, api_key="unused")
        watch = ServerWatch(backend)
        model = RetryingLLM(watch, RetryPolicy(base_delay=0.0), sleep=lambda s: None)
        assert model.complete(Request(prompt="hi")).text == "fine"
        assert watch.last_error is None and watch.failures == 1


def test_the_async_twin_fails_fast_too() -> None:
    down = ScriptedLLM(replies=[ConnectionRefusedError(111, "refused")] * 3)
    watch = ServerWatch(down, pause_s=0.0)
    with pytest.raises(ServerUnreachableError):
        asyncio.run(watch.acomplete(Request(prompt="hi")))
    assert watch.down


def test_server_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert server_url(OpenAIChat("m", base_url="http://h:1/v1")) == "http://h:1/v1"
    assert server_url(OpenAIChat("m")) == "https://api.openai.com/v1"
    assert server_url(ScriptedLLM(replies=[])) is None
