"""The embedded model: llama-cpp-python running a GGUF file in this process.

A constrained request is generated under a ``llama_cpp.LlamaGrammar`` (GBNF, from
:func:`~tablereason.llm.constraints.to_gbnf`; a JSON schema through llama-cpp-python's own
converter). A slot after free text (``after=``) is generated in two steps, so the
grammar's cost is paid only for the slot: the free text without a grammar, up to the
marker, a stop string or three quarters of the token limit (the last quarter is kept for
the slot); then the marker, and the slot under the slot's grammar (llama.cpp keeps the
evaluated prompt, so the second step evaluates only the new tokens). The reply therefore
always holds the marker. Requests through the chat template use one grammar for the whole reply.
The grammar judges the token the model chose freely and masks the whole vocabulary only
when it refuses it (:mod:`~tablereason.llm.backends.grammar_sampler`; ``grammar_sampling=
"full"`` masks it at every token, as llama-cpp-python does).

Each request's prompt starts from the longest exact beginning the model already evaluated,
in the context or in a saved prefix state (:mod:`~tablereason.llm.backends.llama_context`),
and with ``workers > 1`` several requests run at once, one context each
(:mod:`~tablereason.llm.backends.context_pool`).
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from pathlib import Path
from typing import Any, Literal

from tablereason.errors import ConfigurationError, LLMError, MissingDependencyError
from tablereason.llm.backends.context_pool import DEFAULT_MEMORY_MB, ContextPool
from tablereason.llm.backends.enforcement import Enforcement
from tablereason.llm.backends.grammar_sampler import GrammarCounts, lazy_grammar_llama
from tablereason.llm.backends.llama_context import ModelContext, ReuseStats
from tablereason.llm.backends.model_files import LOCAL_INSTALL, default_model_path
from tablereason.llm.backends.prefix_states import DEFAULT_BUDGET_MB, PrefixStore
from tablereason.llm.backends.registry import AUTO, BACKENDS, LOCAL_MODEL, ModelSpec
from tablereason.llm.backends.state_files import DEFAULT_FOLDER_MB, StateFolder, state_key
from tablereason.llm.backends.stops import mend_blank_stops
from tablereason.llm.base import (
    Capabilities,
    Choice,
    Completion,
    Request,
    SyncLLM,
    TokenLogprob,
    Usage,
)
from tablereason.llm.constraints import Constraint, slot_grammar, to_gbnf
from tablereason.llm.errors import ContextLengthError

GRAMMARS_KEPT = 64
"""Grammars kept built, most recently used first (tables differ: so do their grammars)."""
SLOT_SHARE = 4
"""With a slot after free text, the free text may use all but a quarter of ``max_tokens``."""
CONTEXT_HINT = (
    "shrink the table view, or give the embedded model a larger context window "
    "(--n-ctx on the command line, n_ctx= in Python)"
)


def _llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as error:
        raise MissingDependencyError(
            f"the local model backend needs llama-cpp-python; run: {LOCAL_INSTALL}"
        ) from error
    return llama_cpp


def default_threads() -> int:
    """Threads for llama.cpp: ``$TABLEREASON_THREADS``, else the CPUs that are idle now.

    llama.cpp's worker threads spin while they wait for each other, so on a machine
    where other processes keep the cores busy, fewer threads are much faster (measured
    on 2 busy cores: 1 thread generated 17-25 tokens/s, 2 threads 1-4 tokens/s). The idle
    CPUs are those this process may use minus the 1-minute load average, at least 1
    and at most 8.

    Example:
        >>> default_threads() >= 1
        True
    """
    explicit = os.environ.get("TABLEREASON_THREADS")
    if explicit:
        return max(1, int(explicit))
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    try:
        idle = int(cpus - os.getloadavg()[0] + 0.5)
    except OSError:  # pragma: no cover - load average unavailable
        idle = cpus
    return max(1, min(8, cpus, idle))


class LocalLlama(SyncLLM):
    """A GGUF model run in-process by llama-cpp-python (default: Gemma 3 270M).

    The model loads on the first request, so building the backend is free (offline
    replay never loads it). ``n > 1`` is answered by ``n`` seeded samples (``seed``,
    ``seed + 1``, ...) that share the evaluated prompt. Usage is counted by the model's
    tokenizer: the prompt once, completion tokens summed over the choices (as OpenAI
    counts). With ``temperature == 0`` all choices are the same greedy answer, generated
    once.

    **Reuse.** A prompt starts from the longest beginning already evaluated, in the
    context or in a saved state of a prompt prefix its call site's recent prompts
    share, cut at a multiple of ``n_batch`` so that the completion is the one a fresh
    evaluation gives (see :mod:`~tablereason.llm.backends.prefix_states`). Saved states
    take at most ``state_budget_mb``. With ``state_dir`` they are also kept in that folder
    (at most ``state_dir_mb``; :mod:`~tablereason.llm.backends.state_files`), keyed by the
    model file and these settings, so a new process restores them instead of evaluating
    the demos again.

    **Concurrency.** One context answers one request at a time; with ``workers > 1``
    up to that many contexts (a model each, the file's pages shared) answer at once,
    loaded as requests contend for them, within ``memory_budget_mb`` and no more than
    ``n_threads``. The threads are shared among the contexts busy at the time.

    Chat requests use the model's chat template when its GGUF has one; otherwise (the
    default Gemma 3 270M base model) the messages are joined into one prompt with
    :meth:`Request.as_text`. Log-probabilities need ``logits_all=True`` (memory grows
    with ``n_ctx`` times the vocabulary); without it choices carry none.

    Args:
        model_path: A GGUF file; defaults to the packaged Gemma 3 270M (assembled once).
        n_ctx: Context window in tokens (``--n-ctx``).
        n_threads: CPU threads (``--threads``) for all contexts together; defaults to
            :func:`default_threads` at load time.
        n_batch: Prompt tokens evaluated per batch, also the step at which prompt
            beginnings are reused.
        seed: Sampling seed used when a request has none.
        chat: ``"auto"`` (template if the model has one), ``"template"`` or ``"text"``.
        logits_all: Keep logits of every position (needed for log-probabilities).
        verbose: Let llama.cpp print its logs.
        reuse: Reuse evaluated prompt beginnings (False: every prompt is evaluated from
            its first token).
        state_budget_mb: Memory for saved prefix states (MB).
        state_dir: A folder to keep saved prefix states in across processes (None: in
            memory only; ``$TABLEREASON_STATE_DIR`` sets it for models named by a spec).
        state_dir_mb: Disk the folder's states may take (MB).
        workers: Contexts that may answer at once (``tablereason eval`` sets its
            concurrency).
        memory_budget_mb: Memory the contexts may take together, beyond the shared
            model file (MB).
        grammar_sampling: ``"lazy"`` (the grammar judges the freely chosen token first
            and masks the whole vocabulary only when it refuses it,
            :mod:`~tablereason.llm.backends.grammar_sampler`) or ``"full"`` (the grammar
            masks the vocabulary at every token, llama-cpp-python's way); the same
            completions at temperature 0.

    Example:
        >>> llm = LocalLlama("model.gguf")  # nothing is loaded yet
        >>> llm.name, llm.model
        ('local', 'model')
    """

    name = "local"

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        n_batch: int = 128,
        seed: int = 0,
        chat: Literal["auto", "template", "text"] = "auto",
        logits_all: bool = False,
        verbose: bool = False,
        reuse: bool = True,
        state_budget_mb: float = DEFAULT_BUDGET_MB,
        workers: int = 1,
        memory_budget_mb: float | None = DEFAULT_MEMORY_MB,
        state_dir: str | os.PathLike[str] | None = None,
        state_dir_mb: float = DEFAULT_FOLDER_MB,
        grammar_sampling: Literal["lazy", "full"] = "lazy",
    ) -> None:
        if grammar_sampling not in ("lazy", "full"):
            raise ConfigurationError(
                f"grammar_sampling must be 'lazy' or 'full', got {grammar_sampling!r}"
            )
        self.model_path = Path(model_path) if model_path is not None else None
        self.model = self.model_path.stem if self.model_path else "gemma-3-270m-q4_k_m"
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.n_batch = n_batch
        self.seed = seed
        self.chat = chat
        self.logits_all = logits_all
        self.verbose = verbose
        self.reuse = reuse
        self.prefixes = PrefixStore(int(state_budget_mb * 1e6), step=n_batch) if reuse else None
        """The saved prefix states (None with ``reuse=False``)."""
        self.state_dir = Path(state_dir) if state_dir is not None else None
        self.state_dir_mb = state_dir_mb
        budget = None if memory_budget_mb is None else int(memory_budget_mb * 1e6)
        self._pool = ContextPool(
            self._new_context,
            workers=workers,
            memory_budget_bytes=budget,
            cap=lambda: int(self.n_threads or default_threads()),
        )
        self._lock = threading.Lock()  # loading, and the grammars
        self._grammars: dict[str, Any] = {}
        self.enforcement = Enforcement("the embedded model")
        self.grammar_sampling = grammar_sampling
        self.grammar_counts = GrammarCounts()
        """Tokens chosen under a grammar, and those the grammar refused first (lazy only)."""

    @property
    def workers(self) -> int:
        """Contexts that may answer at once (settable)."""
        return self._pool.workers

    @workers.setter
    def workers(self, count: int) -> None:
        if count < 1:
            raise ConfigurationError(f"workers must be at least 1, got {count}")
        self._pool.workers = count

    def reuse_stats(self) -> ReuseStats:
        """Prompt tokens sent and evaluated, and where the rest came from, over all contexts.

        Example:
            >>> LocalLlama("model.gguf").reuse_stats().prompts
            0
        """
        total = ReuseStats()
        for context in self._pool.contexts():
            total = total + context.stats
        return total

    @property
    def capabilities(self) -> Capabilities:
        """What it supports: every constraint kind; log-probabilities with ``logits_all``."""
        declared = BACKENDS.get("local").capabilities
        return declared if self.logits_all else dataclasses.replace(declared, logprobs=False)

    def __repr__(self) -> str:
        return f"LocalLlama({str(self.model_path or self.model)!r}, n_ctx={self.n_ctx})"

    def load(self) -> Any:
        """Load the model now (it otherwise loads on the first request); returns the Llama."""
        return self._pool.first().llama

    def _new_context(self) -> ModelContext:
        llama_cpp = _llama_cpp()
        path = self.model_path or default_model_path()
        with self._lock:
            if self.n_threads is None:
                self.n_threads = default_threads()
        if not Path(path).is_file():
            raise LLMError(f"no GGUF model file at {path}; pass an existing model_path=")
        model_class = llama_cpp.Llama
        if self.grammar_sampling == "lazy":
            model_class = lazy_grammar_llama(llama_cpp, self.grammar_counts)
        llama = model_class(
            model_path=str(path),
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            n_threads_batch=self.n_threads,
            n_batch=self.n_batch,
            seed=self.seed,
            logits_all=self.logits_all,
            verbose=self.verbose,
        )
        with self._lock:
            if self.state_dir is not None and self.prefixes and self.prefixes.folder is None:
                self.prefixes.folder = StateFolder(
                    self.state_dir, self._state_key(path), int(self.state_dir_mb * 1e6)
                )
        self.n_ctx = int(llama.n_ctx())
        return ModelContext(llama, self.prefixes, reuse=self.reuse, threads=self.n_threads)

    def _state_key(self, path: str | os.PathLike[str]) -> str:
        """What a saved state depends on: the model file, the context's settings, llama.cpp."""
        version = getattr(_llama_cpp(), "__version__", "")
        return state_key(path, n_ctx=self.n_ctx, n_batch=self.n_batch, llama_cpp=version)

    def _has_template(self, llama: Any) -> bool:
        return bool(llama.metadata.get("tokenizer.chat_template"))

    def _use_template(self, request: Request, llama: Any) -> bool:
        if request.messages is None or self.chat == "text":
            return False
        return self.chat == "template" or self._has_template(llama)

    def complete(self, request: Request) -> Completion:
        """Answer one request with ``request.n`` seeded samples.

        A blank sample of a request with a whitespace stop is sampled again without it
        and cut after its leading whitespace
        (:func:`~tablereason.llm.backends.stops.mend_blank_stops`).

        Raises:
            ConstraintViolationError: A sample breaks the request's constraint.
            ContextLengthError: The prompt does not fit the context window.
        """
        started = time.perf_counter()
        sent = self.enforcement.will_send(request)
        completion = self._complete(request)
        choices, again = mend_blank_stops(request, completion.choices, self._ask_again)
        if again is not None:
            completion = completion.model_copy(
                update={
                    "choices": tuple(choices),
                    "usage": completion.usage + again,
                    "latency_s": time.perf_counter() - started,
                }
            )
        return self.enforcement.check(request, completion, sent=sent)

    def _ask_again(self, request: Request) -> tuple[tuple[Choice, ...], Usage]:
        completion = self._complete(request)
        return completion.choices, completion.usage

    def _complete(self, request: Request) -> Completion:
        started = time.perf_counter()
        with self._pool.context() as context:
            llama = context.llama
            tokens = llama.tokenize(request.as_text().encode("utf-8"), add_bos=True, special=True)
            prompt_tokens = len(tokens)
            if prompt_tokens >= self.n_ctx:
                raise ContextLengthError(
                    f"the prompt has {prompt_tokens} tokens but the context window is "
                    f"{self.n_ctx}; {CONTEXT_HINT}"
                )
            max_tokens = min(request.max_tokens, self.n_ctx - prompt_tokens)
            base_seed = self.seed if request.seed is None else request.seed
            use_template = self._use_template(request, llama)
            context.share_threads(int(self.n_threads or 1), self._pool.busy)
            if use_template:  # the template's tokens are not known here: no saved states
                context.start_unknown()
            else:
                context.start(tokens, request.call_site)
            # greedy decoding gives every choice the same answer: generate it once
            samples = 1 if request.temperature == 0 else request.n
            raws = [
                self._sample(llama, request, use_template, max_tokens, base_seed + i)
                for i in range(samples)
            ]
        choices = [self._choice(raw, chat=use_template) for raw in raws]
        counts = [int((raw.get("usage") or {}).get("completion_tokens", 0)) for raw in raws]
        if samples < request.n:
            choices, counts = choices * request.n, counts * request.n
        first_usage = raws[0].get("usage") or {}
        usage = Usage(
            prompt_tokens=int(first_usage.get("prompt_tokens", prompt_tokens)),
            completion_tokens=sum(counts),
        )
        return Completion(
            choices=tuple(choices),
            usage=usage,
            latency_s=time.perf_counter() - started,
            backend=self.name,
            model=self.model,
        )

    def _grammar(self, gbnf: str) -> Any:
        """The ``LlamaGrammar`` of a GBNF text (the last :data:`GRAMMARS_KEPT` are kept)."""
        with self._lock:
            grammar = self._grammars.pop(gbnf, None)
            if grammar is None:
                grammar = _llama_cpp().LlamaGrammar.from_string(gbnf, verbose=self.verbose)
            self._grammars[gbnf] = grammar  # most recently used last
            while len(self._grammars) > GRAMMARS_KEPT:
                del self._grammars[next(iter(self._grammars))]
            return grammar

    def _sample(
        self, llama: Any, request: Request, use_template: bool, max_tokens: int, seed: int
    ) -> dict[str, Any]:
        constraint = request.constraint if self.enforcement.will_send(request) else None
        if constraint is None:
            return self._generate(llama, request, use_template, max_tokens, seed)
        if constraint.after is None or use_template:
            grammar = self._grammar(to_gbnf(constraint))
            return self._generate(llama, request, use_template, max_tokens, seed, grammar=grammar)
        return self._free_then_slot(llama, request, constraint, max_tokens, seed)

    def _free_then_slot(
        self, llama: Any, request: Request, constraint: Constraint, max_tokens: int, seed: int
    ) -> dict[str, Any]:
        """The free text without a grammar, then the marker and the slot under its grammar."""
        marker = str(constraint.after)
        room = max_tokens - max(1, max_tokens // SLOT_SHARE)  # the rest is kept for the slot
        if room > 0:
            free = self._generate(llama, request, False, room, seed, stop=[*request.stop, marker])
        else:  # (llama.cpp reads a limit of 0 as "no limit")
            free = {"choices": [{"text": "", "logprobs": None}], "usage": {}}
        used = int((free.get("usage") or {}).get("completion_tokens", 0))
        if used >= max_tokens:
            return free  # no room left for the slot
        text = str(free["choices"][0].get("text") or "") + marker
        grammar = self._grammar(slot_grammar(constraint))
        slot = self._generate(
            llama, request, False, max_tokens - used, seed, grammar=grammar, prompt=text
        )
        first, second = free["choices"][0], slot["choices"][0]
        logprobs = None
        if first.get("logprobs") and second.get("logprobs"):
            logprobs = {
                key: list(first["logprobs"].get(key) or [])
                + list(second["logprobs"].get(key) or [])
                for key in ("tokens", "token_logprobs")
            }
        choice = {
            "text": text + str(second.get("text") or ""),
            "logprobs": logprobs,
            "finish_reason": second.get("finish_reason"),
        }
        generated = used + int((slot.get("usage") or {}).get("completion_tokens", 0))
        usage = {**(free.get("usage") or {}), "completion_tokens": generated}
        return {"choices": [choice], "usage": usage}

    def _generate(
        self,
        llama: Any,
        request: Request,
        use_template: bool,
        max_tokens: int,
        seed: int,
        *,
        grammar: Any = None,
        stop: list[str] | None = None,
        prompt: str = "",
    ) -> dict[str, Any]:
        """One sample from llama.cpp; ``prompt`` is text the reply already holds."""
        options: dict[str, Any] = {
            "max_tokens": max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "top_k": 0,
            "min_p": 0.0,
            "repeat_penalty": 1.0,
            "stop": list(request.stop) if stop is None else stop,
            "seed": seed,
        }
        if grammar is not None:
            options["grammar"] = grammar
        try:
            if use_template:
                messages = [{"role": m.role, "content": m.content} for m in request.messages or ()]
                if request.logprobs and self.logits_all:
                    options.update(logprobs=True, top_logprobs=1)
                return dict(llama.create_chat_completion(messages=messages, **options))
            if request.logprobs and self.logits_all:
                options["logprobs"] = 1
            return dict(llama.create_completion(request.as_text() + prompt, **options))
        except ValueError as error:
            if "context window" in str(error) or "exceed" in str(error):
                raise ContextLengthError(f"{error}; {CONTEXT_HINT}") from error
            raise LLMError(f"llama.cpp failed: {error}") from error

    @staticmethod
    def _choice(raw: dict[str, Any], *, chat: bool) -> Choice:
        c = raw["choices"][0]
        logprobs = None
        if chat:
            text = (c.get("message") or {}).get("content") or ""
            content = (c.get("logprobs") or {}).get("content")
            if content:
                logprobs = tuple(
                    TokenLogprob(token=t["token"], logprob=float(t["logprob"])) for t in content
                )
        else:
            text = c.get("text") or ""
            lp = c.get("logprobs")
            if lp and lp.get("tokens"):
                logprobs = tuple(
                    TokenLogprob(token=t, logprob=float(v or 0.0))
                    for t, v in zip(lp["tokens"], lp.get("token_logprobs") or [], strict=False)
                )
        return Choice(text=text, logprobs=logprobs, finish_reason=c.get("finish_reason"))


def from_spec(spec: ModelSpec) -> LocalLlama:
    """The embedded model a model spec names (the registry's builder for ``local``).

    Raises:
        ConfigurationError: A server's setting (``endpoint``, ``server_kind``) given with
            the embedded model, or a ``.gguf`` path that does not exist.

    Example:
        >>> from_spec(ModelSpec(LOCAL_MODEL, n_ctx=4096))
        LocalLlama('gemma-3-270m-q4_k_m', n_ctx=4096)
    """
    if spec.endpoint is not None or spec.server_kind not in (None, AUTO):
        raise ConfigurationError(
            "--endpoint and --server-kind set an OpenAI-compatible server, but no server is "
            "in use: give --base-url (or set OPENAI_BASE_URL), or leave them out for the "
            "embedded model"
        )
    path = None if spec.model in (None, LOCAL_MODEL) else spec.model
    if path is not None and not os.path.isfile(path):
        raise ConfigurationError(f"model file {path!r} does not exist; give a .gguf path")
    options: dict[str, Any] = {}
    if spec.n_ctx is not None:
        options["n_ctx"] = spec.n_ctx
    if spec.threads is not None:
        options["n_threads"] = spec.threads
    if os.environ.get("TABLEREASON_STATE_DIR"):
        options["state_dir"] = os.environ["TABLEREASON_STATE_DIR"]
    return LocalLlama(path, **options)
