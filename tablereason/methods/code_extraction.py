r"""Reading the SQL query or Python program out of a model's reply.

Small models seldom answer with code alone: they wrap it in markdown fences, open with a
sentence, echo ``#`` comment lines, add ``--`` comments, write a second query after the
first, or explain what the code does. :func:`extract_sql` and :func:`extract_python`
find the code in such a reply without running anything: they strip what is not code and
keep the longest stretch of lines that parses (with sqlglot in the DuckDB dialect, or
with :mod:`ast`). Neither ever raises; when nothing parses they return their best
candidate, so the caller's parser reports the error on the text the model meant as code.

Example:
    >>> extract_sql("Here is the query:\n```sql\nSELECT \"a\" FROM t; -- the a\n```")
    'SELECT "a" FROM t'
    >>> extract_python("Sure!\n```python\nx = 2\nprint(x * 3)\n```")
    'x = 2\nans = x * 3'
"""

from __future__ import annotations

import ast
import re

import sqlglot
from sqlglot import exp

__all__ = ["extract_python", "extract_sql", "sql_parses"]

_FENCE_LINE = re.compile(r"^[ \t]*```[ \t]*([\w+.-]*)[ \t]*$")
_SQL_START = re.compile(r"\b(?:SELECT|WITH\s+(?:RECURSIVE\s+)?[\w\"]+[^;]*?\bAS\s*\()", re.I)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_SQL_KEYWORD_START = re.compile(r"^\s*(?:SELECT|WITH)\b", re.I)
_MAX_LINES = 200
_MAX_CANDIDATES = 8


def sql_parses(query: str) -> bool:
    """Whether sqlglot reads ``query`` as exactly one query (SELECT, set operation, CTE).

    Example:
        >>> sql_parses('SELECT "a" FROM t'), sql_parses("# SELECT a"), sql_parses("DROP TABLE t")
        (True, False, False)
    """
    return _sql_verdict(query) is True


def _sql_verdict(query: str) -> bool | int:
    """True when ``query`` is one query; else False, or the 1-based line a parse error names."""
    if not query.strip():
        return False
    try:
        trees = [t for t in sqlglot.parse(query, read="duckdb") if t is not None]
    except sqlglot.errors.ParseError as error:
        line = (error.errors[0].get("line") if error.errors else None) or 0
        return line if isinstance(line, int) and line > 0 else False
    except Exception:  # sqlglot raises several kinds (TokenError, ValueError, ...)
        return False
    return len(trees) == 1 and isinstance(trees[0], exp.Query)


def _fenced(text: str, languages: tuple[str, ...]) -> str | None:
    """The body of the first fenced block (one in ``languages`` first), or None."""
    lines = text.split("\n")
    blocks: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        match = _FENCE_LINE.match(lines[index])
        if match is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not _FENCE_LINE.match(lines[end]):
            end += 1
        blocks.append((match.group(1).lower(), "\n".join(lines[index + 1 : end])))
        index = end + 1
    if not blocks:
        return None
    preferred = [body for language, body in blocks if language in languages and body.strip()]
    filled = [body for _, body in blocks if body.strip()]
    return (preferred or filled or [blocks[0][1]])[0]


def _sql_without_comments(text: str) -> str:
    """The text without ``--`` and ``/* */`` comments, ``#`` comment lines and backticks.

    Quoted strings (``'...'``) and identifiers (``"..."``) are kept as they are.
    """
    out: list[str] = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        char = text[i]
        if char in "'\"":
            end = i + 1
            while end < n:
                if text[end] == char:
                    if end + 1 < n and text[end + 1] == char:  # doubled quote inside
                        end += 2
                        continue
                    break
                end += 1
            out.append(text[i : end + 1])
            i, line_start = end + 1, False
        elif text.startswith("--", i) or (char == "#" and line_start):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        elif char == "`":
            out.append(" ")
            i += 1
        else:
            out.append(char)
            line_start = char == "\n" or (line_start and char in " \t")
            i += 1
    return "".join(out)


def _first_statement(text: str) -> str:
    """The text up to the first ``;`` outside quotes."""
    quote = ""
    for i, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == ";":
            return text[:i]
    return text


def _longest_sql(candidate: str) -> str | None:
    """The longest run of the candidate's first lines that parses as one query.

    A parse error names its line; no run that reaches past that line is tried.
    """
    lines = _first_statement(candidate).split("\n")[:_MAX_LINES]
    end = len(lines)
    while end > 0:
        query = "\n".join(lines[:end])
        verdict = _sql_verdict(query)
        if verdict is True:
            return query.strip()
        end = min(end - 1, verdict) if isinstance(verdict, int) and verdict > 0 else end - 1
    return None


def extract_sql(reply: str, *, prefix: str = "") -> str:
    r"""The SQL query in a model's reply (never raises).

    Takes the first fenced block (or an inline code span in backticks holding a query)
    when there is one; drops ``--``, ``/* */`` and ``#`` comments and backticks; starts at
    the first ``SELECT`` or ``WITH`` (one at the start of a line first); ends at the first
    ``;`` and keeps the longest run of lines that parses, so a second query or a trailing
    explanation is left out.

    Args:
        reply: The model's text.
        prefix: What the prompt ended with when it began the query itself (``"SELECT"``);
            put before a reply that does not start a query of its own.

    Returns:
        The query, or the best candidate (stripped) when no part of the reply parses.

    Example:
        >>> extract_sql(' "name" FROM t\nORDER BY "score" DESC\nLIMIT 1', prefix="SELECT")
        'SELECT "name" FROM t\nORDER BY "score" DESC\nLIMIT 1'
        >>> extract_sql("# The previous attempt failed\nSELECT 1;\nSELECT 2;")
        'SELECT 1'
    """
    fenced = _fenced(reply, ("sql", "duckdb", "sqlite", "postgresql"))
    if fenced is None:
        spans = (m.group(1) for m in _INLINE_CODE.finditer(reply))
        fenced = next((span for span in spans if _SQL_START.search(span)), None)
    text = _sql_without_comments(fenced if fenced is not None else reply)
    candidates: list[str] = []
    if prefix and not _SQL_KEYWORD_START.match(text):
        candidates.append(f"{prefix} {text.lstrip()}")
    starts = [m.start() for m in _SQL_START.finditer(text)]
    line_starts = [
        s for s in starts if not text[:s].strip(" \t") or text[:s].rstrip(" \t")[-1] == "\n"
    ]
    candidates += [text[s:] for s in line_starts]
    candidates += [text[s:] for s in starts if s not in line_starts]
    for candidate in candidates[:_MAX_CANDIDATES]:
        query = _longest_sql(candidate)
        if query is not None:
            return query
    best = candidates[0] if candidates else text
    return _first_statement(best).strip()


def _python_parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def _python_body(reply: str) -> str:
    """The code part of a reply: a fenced block, or the text before a closing fence."""
    lines = reply.split("\n")
    fences = [i for i, line in enumerate(lines) if _FENCE_LINE.match(line)]
    if not fences:
        return reply
    first = fences[0]
    before = "\n".join(lines[:first])
    if before.strip() and _python_parses(before) and _code_statements(before):
        return before  # the prompt opened the fence; this one closes it
    fenced = _fenced(reply, ("python", "py", "python3"))
    return fenced if fenced is not None else reply


def _code_statements(code: str) -> list[ast.stmt]:
    try:
        return ast.parse(code).body
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return []


def _longest_python(lines: list[str]) -> tuple[int, int] | None:
    """(start, end) of the longest run of top-level lines that parses and holds code."""
    best: tuple[int, int] | None = None
    for start, line in enumerate(lines):
        if not line.strip() or line[0] in " \t":
            continue
        if best is not None and len(lines) - start <= best[1] - best[0]:
            break
        end = len(lines)
        while end > start:
            code = "\n".join(lines[start:end])
            try:
                tree = ast.parse(code)
            except SyntaxError as error:
                # no run that reaches the line where parsing failed can parse: skip them
                failed = error.lineno or 0
                limit = start + failed - 1 if 1 <= failed <= end - start else end - 1
                end = min(end - 1, max(limit, start))
                continue
            except (ValueError, RecursionError, MemoryError, OverflowError):
                end -= 1
                continue
            if tree.body and (best is None or end - start > best[1] - best[0]):
                best = (start, end)
            break
    return best


def _assign_last(code: str, answer: str) -> str:
    """``code`` with a final bare expression (or ``print(x)``) stored in ``answer``."""
    tree = ast.parse(code)
    stored = any(
        isinstance(node, ast.Name) and node.id == answer and isinstance(node.ctx, ast.Store)
        for node in ast.walk(tree)
    )
    last = tree.body[-1] if tree.body else None
    if stored or not isinstance(last, ast.Expr):
        return code
    value = last.value
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "print"
        and len(value.args) == 1
        and not value.keywords
    ):
        value = value.args[0]
    if isinstance(value, ast.Constant):
        return code  # a message or a docstring, not a computed answer
    segment = ast.get_source_segment(code, value)
    if segment is None or "\n" in segment:
        return code
    lines = code.split("\n")
    head = lines[: last.lineno - 1]
    return "\n".join([*head, f"{answer} = {segment}"])


def extract_python(reply: str, *, answer: str = "ans") -> str:
    r"""The Python program in a model's reply (never raises).

    Takes the fenced block (or, when the prompt opened the fence, the text before the
    closing one), drops leading prose and trailing text that do not parse, and, when the
    program never assigns ``answer`` but ends with a bare expression or ``print(x)`` (of
    something computed, not a literal), assigns that value to ``answer``. Nothing is run.

    Args:
        reply: The model's text.
        answer: The variable that must hold the answer.

    Returns:
        The program, or the reply's code part (stripped) when no line of it parses.

    Example:
        >>> extract_python("ans = df['Name'].iloc[0]\n```\nThis picks the first name.")
        "ans = df['Name'].iloc[0]"
    """
    body = _python_body(reply).expandtabs(4)
    lines = body.split("\n")[:_MAX_LINES]
    span = _longest_python(lines)
    if span is None:
        return body.strip()
    start, end = span
    body_lines = lines[start:end]
    while body_lines and _is_lone_word(body_lines[0]):
        body_lines = body_lines[1:]  # "python" left over from a fence, "Sure", ...
    code = "\n".join(body_lines).strip("\n").rstrip()
    if not code or not _python_parses(code):
        return "\n".join(lines[start:end]).strip()
    try:
        return _assign_last(code, answer)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return code


def _is_lone_word(line: str) -> bool:
    return re.fullmatch(r"[A-Za-z_]\w*", line.strip()) is not None
