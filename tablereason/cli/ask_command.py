"""``tablereason ask``: one question about a table, its steps shown as they complete.

The exit code says how the run ended, for every method alike: 0 with an answer; 4
when the model failed (the server was unreachable, the backend failed after its
retries, a dependency is missing), which the model's
:class:`~tablereason.evaluate.server_watch.ServerWatch` tells, since methods record
model failures instead of raising them; 5 when the run ended without an answer for
any other reason (an empty answer included). Whatever the output mode, the reason
reaches the user: a ``Failed:`` line in the trace, or a line on stderr with
``--answer-only`` and ``--json`` (whose ``error`` field holds it too).

The answer's checks (:mod:`tablereason.answers`) reach the user the same way: after
the answer, ``Evidence:`` lines (row, column, value of the input table) and one
``Warning [code]:`` line per warning; with ``--answer-only`` the answer alone is on
stdout and those lines go to stderr; ``--json`` has ``value``, ``evidence`` and
``warnings``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from tablereason.cli.exit_codes import EXIT_MODEL, EXIT_NO_ANSWER, EXIT_OK, EXIT_USAGE
from tablereason.errors import ConfigurationError, TableParseError
from tablereason.trace.terminal import visible, visible_json

HIDDEN_HINT = "see every column with --html PAGE"
"""What the terminal says to do about the columns a wide table hides."""


def read_table(args: argparse.Namespace) -> Any:
    """The table of ``ask``, or its named tables.

    A suffix of no format is refused in the command's words.
    """
    from tablereason.api import load_table
    from tablereason.table.io.readers import FORMATS, UnknownFormatError

    given = list(getattr(args, "tables", None) or [])
    named = [t for t in given if "=" in t]
    database = [t for t in given if "=" not in t]
    types = table_types(args)
    if len(database) > 1 or (database and named):
        raise ConfigurationError(
            "give --table NAME once, for the table of a database file, or --table NAME=PATH "
            "for each of several tables"
        )
    if named and args.table is not None:
        raise ConfigurationError(
            f"{args.table!r} was given as well as --table NAME=PATH; name every table with "
            "--table NAME=PATH (a database's table as NAME=PATH with the table name first)"
        )
    if args.table is None and not named:  # one word given: argparse took it for the question
        print(
            "tablereason ask: error: give the table's path and the question (or --table "
            "NAME=PATH for each table, then the question)",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_USAGE)
    try:
        if named:
            tables: dict[str, Any] = {}
            for item in named:
                name, _, path = item.partition("=")
                if not name.strip() or not path.strip() or name.strip() in tables:
                    raise ConfigurationError(
                        f"--table {item!r}: write NAME=PATH with a name used once"
                    )
                tables[name.strip()] = load_table(
                    path.strip(), delimiter=args.delimiter, format=args.format, types=types
                )
            return tables
        return load_table(
            args.table,
            caption=args.caption,
            delimiter=args.delimiter,
            format=args.format,
            table=database[0] if database else None,
            types=types,
        )
    except UnknownFormatError as error:
        raise TableParseError(error.message(f"--format {'|'.join(FORMATS)}")) from None


def table_types(args: argparse.Namespace) -> dict[str, str] | str | None:
    """The column types ``--type COLUMN=TYPE`` and ``--all-text`` ask for."""
    if getattr(args, "all_text", False):
        if getattr(args, "types", None):
            raise ConfigurationError("give --all-text or --type COLUMN=TYPE, not both")
        return "text"
    types: dict[str, str] = {}
    for item in getattr(args, "types", None) or []:
        column, sep, kind = item.rpartition("=")
        if not sep or not column:
            raise ConfigurationError(f"--type {item!r}: write COLUMN=TYPE, e.g. zip=text")
        types[column] = kind.strip()
    return types or None


def _model(args: argparse.Namespace) -> tuple[Any, Any]:
    """The watched backend and the model stacked on it (cache, retries)."""
    from tablereason.evaluate.server_watch import ServerWatch
    from tablereason.llm.resolve import base_llm, resolve_llm

    bare = base_llm(
        args.model,
        base_url=args.base_url,
        endpoint=args.endpoint,
        timeout=args.timeout,
        server_kind=args.server_kind,
        n_ctx=args.n_ctx,
        threads=args.threads,
    )
    watch = ServerWatch(bare)
    return watch, resolve_llm(
        watch, cache=args.cache, offline=args.offline, constrain=args.constrain
    )


def outcome_code(prediction: Any, watch: Any) -> int:
    """0 answered; 4 the model failed (the watch saw the last request fail); 5 otherwise."""
    if prediction.error is None:
        return EXIT_OK
    return EXIT_MODEL if watch.last_error is not None else EXIT_NO_ANSWER


def cmd_ask(args: argparse.Namespace, options: dict[str, Any]) -> int:
    """Run ``tablereason ask``; returns the exit code."""
    from tablereason.api import ask
    from tablereason.cli.method_catalog import check_options
    from tablereason.trace.answer_view import checked_lines
    from tablereason.trace.console import TraceView
    from tablereason.trace.listen import following
    from tablereason.trace.live import LiveSteps
    from tablereason.trace.runs_view import run_lines

    table = read_table(args)  # a bad file fails before any model is looked for
    check_options(args.method, options)
    watch, llm = _model(args)
    live = not (args.json or args.answer_only or args.quiet)
    with contextlib.ExitStack() as stack:
        if live:
            view = stack.enter_context(
                LiveSteps(args.question, max_rows=args.max_rows, hidden_hint=HIDDEN_HINT)
            )
            stack.enter_context(following(view.finished, on_start=view.started))
        prediction = ask(table, args.question, method=args.method, llm=llm, task=args.task,
                         **options)  # fmt: skip
    code = outcome_code(prediction, watch)
    checks = prediction.checks()
    if args.html:
        prediction.to_html(args.html)
    if args.json:
        payload = {
            "answer": prediction.answer,
            **checks,
            "error": prediction.error,
            "exit_code": code,
            "trace": prediction.trace.to_dict(),
        }
        print(visible_json(json.dumps(payload, ensure_ascii=False)))
    elif args.answer_only:
        answer = prediction.answer
        print(" | ".join(map(visible, answer)) if isinstance(answer, list) else visible(answer))
        lines = checked_lines(answer, prediction.error, checks["evidence"], checks["warnings"])
        print("".join(f"tablereason: {line}\n" for line in lines), end="", file=sys.stderr)
    elif live:
        for line in run_lines(prediction.trace.to_dict()):  # a composed run's samples and vote
            print(line)
        view.outcome(prediction.answer, prediction.error, checks["evidence"], checks["warnings"])
    else:
        TraceView(max_rows=args.max_rows).outcome(
            prediction.answer, prediction.error, checks["evidence"], checks["warnings"]
        )
    if args.html and not (args.json or args.answer_only):
        print(f"trace page: {args.html}")
    if prediction.error and (args.json or args.answer_only):
        said = "error" if code == EXIT_MODEL else "no answer"
        print(f"tablereason: {said}: {visible(prediction.error, lines=True)}", file=sys.stderr)
    return code
