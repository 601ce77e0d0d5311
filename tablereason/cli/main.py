"""The ``tablereason`` command: ask, eval, merge, report, show, datasets, download, methods.

Each sub-command parses its arguments and calls one library function. Exit codes
(stable, for scripts):

====  ===========================================================================
0     success
1     unexpected internal error (a bug: please report it with the traceback)
2     bad usage: unknown option, method, dataset or example; invalid settings
3     bad input: a table, dataset or result file is missing or unreadable
4     model failure: the server is unreachable, the backend failed after retries,
      or a dependency is missing (``ask``, for every method; ``eval`` when the
      server stays unreachable)
5     ``ask`` ran but produced no answer (the trace or stderr says why)
130   interrupted (Ctrl-C)
====  ===========================================================================
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from tablereason.cli.ask_command import cmd_ask
from tablereason.cli.data_commands import cli_words, cmd_datasets, cmd_download
from tablereason.cli.exit_codes import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_MODEL,
    EXIT_OK,
    EXIT_USAGE,
)
from tablereason.cli.parser import build_parser
from tablereason.errors import (
    ConfigurationError,
    DatasetError,
    LLMError,
    MissingDependencyError,
    SandboxError,
    TableError,
    TableReasonError,
    UnknownNameError,
)
from tablereason.trace.terminal import visible


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigurationError(f"--option takes KEY=VALUE, got {item!r}")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    if args.profile:
        options["profile"] = args.profile
    return options


def _model_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The model options besides its name, as :func:`~tablereason.llm.resolve_llm` takes them.

    Constraints on the replies, and the embedded model's settings.
    """
    return {
        "constrain": args.constrain,
        "server_kind": args.server_kind,
        "n_ctx": args.n_ctx,
        "threads": args.threads,
    }


def _cmd_ask(args: argparse.Namespace) -> int:
    return cmd_ask(args, _options(args))


def _executor(args: argparse.Namespace) -> Any:
    if args.executor == "ray":
        from tablereason.evaluate.ray_executor import RayExecutor

        return RayExecutor(address=args.ray_address)
    if args.executor == "processes":
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(max_workers=args.shards)
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=args.shards)


def _cmd_eval(args: argparse.Namespace) -> int:
    from tablereason.cli.data_commands import data_root
    from tablereason.cli.method_catalog import check_options
    from tablereason.datasets import DATASETS
    from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark
    from tablereason.evaluate.run_loop import Interrupted
    from tablereason.evaluate.server_watch import ServerUnreachableError

    dataset = DATASETS.get(args.dataset)  # refused before anything is read or written
    check_options(args.method or dataset.default_method, _options(args))
    data_root(args.data_dir)
    spec = BenchmarkSpec(
        dataset=args.dataset,
        out=args.out,
        split=args.split,
        method=args.method,
        model=args.model,
        base_url=args.base_url,
        endpoint=args.endpoint,
        timeout=args.timeout,
        options={k: v for k, v in _options(args).items() if k != "profile"},
        profile=args.profile,
        limit=args.limit,
        concurrency=args.concurrency,
        data_dir=args.data_dir,
        cache="" if args.no_cache else None,
        offline=args.offline,
        seed=args.seed,
        traces=not args.no_traces,
        max_connection_failures=args.max_connection_failures,
        **_model_settings(args),
    )
    if args.shard and args.shards:
        raise ConfigurationError("use --shard i/n (one shard here) or --shards N, not both")
    executor = _executor(args) if args.shards else None
    rerun = f"the results so far are kept in {args.out}; rerun the same command to continue"
    try:
        summary = run_benchmark(
            spec, shards=args.shards, shard=args.shard, executor=executor, progress=not args.quiet
        )
    except Interrupted as stop:
        if stop.abandoned:  # main() leaves at once, without waiting for their threads
            raise
        print(f"tablereason: interrupted: {rerun}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ServerUnreachableError as error:
        print(f"tablereason: error: {visible(error, lines=True)}\n{rerun}", file=sys.stderr)
        return EXIT_MODEL
    finally:
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)
    score = f"{summary.result.headline()} · " if summary.result else ""
    lost = (
        f"\n{summary.unreachable} examples could not reach the model server and were not "
        "recorded; rerun the same command to run them"
        if summary.unreachable
        else ""
    )
    print(
        f"{score}{summary.total} examples ({summary.resumed} resumed, {summary.ran} run, "
        f"{summary.failed} failed) · {summary.tokens:,} tokens · {summary.wall_s:.1f} s\n"
        f"results: {summary.path}\nreport:  tablereason report {args.out}{lost}"
    )
    return EXIT_OK


def _cmd_merge(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tablereason.evaluate.merge import merge_inputs, merge_shards
    from tablereason.evaluate.report.page import summarize
    from tablereason.evaluate.results import RESULTS_FILE

    paths, default = merge_inputs(args.inputs)
    out = Path(args.out) if args.out else default
    if out is None:
        raise ConfigurationError(
            "these shard files are not in a run's shards/ folder; say where the merged "
            "file goes with --out merged.jsonl"
        )
    merged = merge_shards(paths, out, allow_partial=args.allow_partial)
    if merged.problems:
        print(
            f"tablereason: warning: partial merge: {'; '.join(merged.problems)}; examples "
            "without a result count as wrong",
            file=sys.stderr,
        )
    run = out.parent if out.name == RESULTS_FILE else out
    summary = visible(summarize(merged.path).to_text(), lines=True)
    print(
        f"merged {len(merged.shards)} of {merged.count} shards ({merged.records:,} results) "
        f"into {merged.path}\n{summary}\nreport:  tablereason report {run}"
    )
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from tablereason.evaluate.report.page import build_report

    print(visible(build_report(args.run, out_dir=args.out, top=args.top).to_text(), lines=True))
    return EXIT_OK


def _cmd_show(args: argparse.Namespace) -> int:
    from tablereason.evaluate.report.show import show

    show(
        args.run, example=args.example, html=args.html, max_rows=args.max_rows,
        prompts=args.prompts,
    )  # fmt: skip
    return EXIT_OK


def _cmd_methods(args: argparse.Namespace) -> int:
    from tablereason.cli.methods_command import methods_text

    sys.stdout.write(methods_text(args.names))
    return EXIT_OK


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "ask": _cmd_ask,
    "eval": _cmd_eval,
    "merge": _cmd_merge,
    "report": _cmd_report,
    "show": _cmd_show,
    "datasets": cmd_datasets,
    "download": cmd_download,
    "methods": _cmd_methods,
}


def exit_code(error: BaseException) -> int:
    """The exit code for an error that ended a command.

    Example:
        >>> exit_code(ConfigurationError("bad")), exit_code(DatasetError("missing"))
        (2, 3)
    """
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(error, (ConfigurationError, UnknownNameError)):
        return EXIT_USAGE
    if isinstance(error, (LLMError, MissingDependencyError, SandboxError)):
        return EXIT_MODEL
    if isinstance(error, (TableError, DatasetError, FileNotFoundError)):
        return EXIT_INPUT
    from tablereason.evaluate.results import ResultFileError

    if isinstance(error, ResultFileError):
        return EXIT_INPUT
    return EXIT_INTERNAL


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tablereason`` command; returns the exit code.

    Example:
        >>> main(["datasets", "--data-dir", "/nonexistent"])  # doctest: +SKIP
        3
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = HANDLERS[args.command](args)
    except KeyboardInterrupt as interrupt:
        abandoned = int(getattr(interrupt, "abandoned", 0) or 0)
        if abandoned:
            print(
                f"tablereason: stopped at once; {abandoned} running example(s) abandoned (they "
                "run again when the same command is rerun)",
                file=sys.stderr,
            )
        else:
            print("tablereason: interrupted", file=sys.stderr)
        if abandoned:  # their threads are still busy: leave without waiting for them
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    except (TableReasonError, FileNotFoundError) as error:
        text = visible(error, lines=True)
        if isinstance(error, DatasetError):
            text = cli_words(text)
        print(f"tablereason: error: {text}", file=sys.stderr)
        return exit_code(error)
    sys.stdout.flush()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
