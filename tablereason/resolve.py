"""Turning names into objects: a model spec into an LLM, a method name into a method.

These helpers are shared by :func:`tablereason.ask`, the evaluation harness and the
command line, so all three accept the same ``model`` and ``method`` strings.

Example:
    >>> from tablereason.llm import ScriptedLLM
    >>> method = build_method("chain_of_table", ScriptedLLM(replies=[]), task="wikitq")
    >>> method.task
    'wikitq'
"""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Any

from tablereason.errors import ConfigurationError
from tablereason.llm.base import LLM
from tablereason.trace.record import Prediction

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.datasets.example import Example
    from tablereason.llm.usage import UsageTracker

LOCAL_MODEL = "local"


def base_llm(
    model: str | None = None,
    *,
    base_url: str | None = None,
    quiet: bool = False,
    endpoint: str | None = None,
    timeout: float | None = None,
) -> LLM:
    """The backend a model spec names, not yet wrapped.

    Args:
        model: ``None`` (choose from the environment, see :func:`tablereason.llm.default`),
            ``"local"`` (the embedded model), a path to a ``.gguf`` file (llama.cpp), or a
            model name served by an OpenAI-compatible server (``"gpt-4o-mini"``).
        base_url: The OpenAI-compatible server (``http://127.0.0.1:8000/v1``); implies an
            OpenAI-compatible backend.
        quiet: Do not announce the environment's choice on stderr.
        endpoint: The server's API, ``"chat"`` or ``"completion"``; ``$OPENAI_ENDPOINT``,
            else chat, when None (see :func:`tablereason.llm.selection.server_endpoint`).
        timeout: Seconds one request to a server may take in all (the backend's 120 s
            when None); no effect on the embedded model.

    Returns:
        The backend. Nothing connects or loads until the first request.

    Raises:
        ConfigurationError: For an ``endpoint`` given with the embedded model or a
            ``.gguf`` file (they have no endpoint), or an unknown endpoint.

    Example:
        >>> base_llm("gpt-4o-mini", base_url="http://127.0.0.1:8000/v1").model
        'gpt-4o-mini'
        >>> base_llm("qwen", base_url="http://127.0.0.1:8000/v1", endpoint="completion").endpoint
        'completion'
    """
    from tablereason.llm import LocalLlama, default
    from tablereason.llm.selection import server_backend, server_endpoint

    if endpoint is not None:
        server_endpoint(endpoint)  # an unknown name fails here, whatever the model
    if model is None and base_url is None:
        llm = default(quiet=quiet, endpoint=endpoint, timeout=timeout)
        if endpoint is not None and getattr(llm, "endpoint", None) is None:
            raise ConfigurationError(_NO_SERVER)
        return llm
    if base_url is None and model is not None and (model == LOCAL_MODEL or model.endswith(".gguf")):
        if endpoint is not None:
            raise ConfigurationError(_NO_SERVER)
        if model == LOCAL_MODEL:
            return LocalLlama()
        if not os.path.isfile(model):
            raise ConfigurationError(f"model file {model!r} does not exist; give a .gguf path")
        return LocalLlama(model)
    limits = {} if timeout is None else {"timeout": timeout}
    return server_backend(endpoint, model=model, base_url=base_url, **limits)


_NO_SERVER = (
    "--endpoint chooses the API of an OpenAI-compatible server, but no server is in use: "
    "give --base-url (or set OPENAI_BASE_URL), or leave --endpoint out for the embedded model"
)


def resolve_llm(
    model: str | LLM | None = None,
    *,
    base_url: str | None = None,
    cache: str | os.PathLike[str] | None = None,
    offline: bool = False,
    max_concurrency: int | None = None,
    tracker: UsageTracker | None = None,
    quiet: bool = False,
    endpoint: str | None = None,
    timeout: float | None = None,
) -> LLM:
    """A ready model: the backend :func:`base_llm` names, with cache, retries and limits.

    Args:
        model: A model spec (see :func:`base_llm`) or an LLM object to wrap.
        base_url: OpenAI-compatible server URL.
        cache: SQLite response cache; every answer is recorded there and replayed later.
        offline: Answer only from ``cache`` (a miss is an error); no model is called.
        max_concurrency: Requests in flight at most.
        tracker: Records tokens and cost.
        quiet: Do not announce the environment's choice on stderr.
        endpoint: ``"chat"`` or ``"completion"`` for an OpenAI-compatible server (see
            :func:`base_llm`); not used with an LLM object.
        timeout: Seconds one request to a server may take in all (see :func:`base_llm`);
            not used with an LLM object.

    Example:
        >>> from tablereason.llm import Request, ScriptedLLM
        >>> resolve_llm(ScriptedLLM(replies=["hi"])).complete(Request(prompt="x")).text
        'hi'
    """
    from tablereason.llm import stack

    if model is None or isinstance(model, str):
        llm = base_llm(model, base_url=base_url, quiet=quiet, endpoint=endpoint, timeout=timeout)
    else:
        llm = model
    return stack(
        llm, cache=cache, offline=offline, max_concurrency=max_concurrency, tracker=tracker
    )


def method_names() -> list[str]:
    """Names of the registered methods.

    Example:
        >>> "chain_of_table" in method_names()
        True
    """
    from tablereason.methods import METHODS

    return METHODS.names()


def build_method(
    name: str,
    llm: LLM,
    *,
    task: str | None = None,
    data_dir: str | os.PathLike[str] | None = None,
    **options: Any,
) -> Any:
    """Create the method registered as ``name`` for ``llm``.

    Args:
        name: A name in :data:`tablereason.methods.METHODS` (``"chain_of_table"``).
        llm: The model the method asks.
        task: What kind of question it answers (``"wikitq"``: open questions,
            ``"tabfact"``: statements to verify); passed only to methods that take a task.
        data_dir: The run's data folder; passed only to methods that take one (ReWOO and
            ReAct, whose default tools read the HotpotQA or ScienceQA files).
        **options: Further constructor options (``profile="paper"``, ...).

    Raises:
        UnknownNameError: For an unknown method (naming the closest one).
        ConfigurationError: For options the method does not accept.

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> method = build_method("chain_of_table", ScriptedLLM(replies=[]), profile="paper")
        >>> method.settings.profile
        'paper'
    """
    from tablereason.methods import METHODS

    factory = METHODS.get(name)
    kwargs = dict(options)
    if task is not None and _accepts(factory, "task"):
        kwargs.setdefault("task", task)
    if data_dir is not None and _accepts(factory, "data_dir"):
        kwargs.setdefault("data_dir", str(data_dir))
    try:
        return factory(llm, **kwargs)
    except TypeError as err:
        raise ConfigurationError(
            f"method {name!r} does not accept these options {sorted(kwargs)}: {err}"
        ) from None


def _accepts(factory: Any, parameter: str) -> bool:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return False
    return parameter in params


def run_example(method: Any, example: Example) -> Prediction:
    """Run a method on one dataset example.

    A method with ``run_example(example)``, or whose ``run`` takes an ``example`` first,
    gets the whole example (choices, passages, metadata); a method whose ``run`` takes a
    ``table`` first gets ``run(example.table, example.question)`` (and TabFact's cleaned
    statement when its ``run`` takes ``cleaned_question``); any other gets
    ``run(example.question)``.

    Raises:
        ConfigurationError: When the method needs a table and the example has none.

    Example:
        >>> from tablereason.datasets import Example
        >>> class Echo:
        ...     def run_example(self, example): return Prediction(answer=example.question)
        >>> run_example(Echo(), Example(dataset="d", id="1", question="hi", answer="")).answer
        'hi'
    """
    runner = getattr(method, "run_example", None)
    first = _first_parameter(getattr(method, "run", None))
    if not callable(runner) and first == "example":
        runner = method.run
    if callable(runner):
        return _prediction(runner(example))
    if first not in ("table", None):
        return _prediction(method.run(example.question))
    table = example.table
    if table is None:
        raise ConfigurationError(
            f"method {type(method).__name__} needs a table, but {example.dataset} example "
            f"{example.id!r} has none; pick a method for this dataset"
        )
    cleaned = example.metadata.get("cleaned_statement")
    if cleaned and _accepts(method.run, "cleaned_question"):
        return _prediction(method.run(table, example.question, cleaned_question=cleaned))
    return _prediction(method.run(table, example.question))


def _prediction(result: Any) -> Prediction:
    if isinstance(result, Prediction):
        return result
    if result is None:
        return Prediction(error="the method returned no prediction")
    return Prediction(answer=result if isinstance(result, (str, list)) else str(result))


def takes_table(method: Any) -> bool:
    """Whether the method is run as ``run(table, question)`` (see :func:`run_example`).

    Example:
        >>> from tablereason.llm import ScriptedLLM
        >>> takes_table(build_method("chain_of_table", ScriptedLLM(replies=[])))
        True
    """
    if callable(getattr(method, "run_example", None)):
        return False
    return _first_parameter(method.run) in ("table", None)


def _first_parameter(function: Any) -> str | None:
    if function is None:
        return None
    try:
        params = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None
    return params[0] if params else None


def method_config(method: Any) -> dict[str, Any]:
    """The method's own description of its configuration (``config()``), or ``{}``."""
    config = getattr(method, "config", None)
    if callable(config):
        try:
            value = config()
        except Exception:  # a method without a usable config still runs
            return {}
        return dict(value) if isinstance(value, dict) else {}
    return {}
