r"""Reading the SQL query or Python program out of a model's reply.

Small models seldom answer with code alone: they wrap it in markdown fences, open with a
sentence, echo ``#`` comment lines, add ``--`` comments, or explain what the code does.
:func:`extract_sql` and :func:`extract_python` find the code in such a reply without
running anything. :func:`extract_sql` takes a whole statement out of prose and fences and
never a part of one: a reply that holds more than one statement, or a statement other
than a query, comes back whole for the SQL guard to refuse (a fragment taken out of
``CREATE VIEW v AS SELECT ...`` would run). :func:`extract_python` keeps the longest
stretch of lines that parses with :mod:`ast`. Neither ever raises; when nothing parses
they return their best candidate, so the caller's parser reports the error on the text
the model meant as code.

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
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_LINE_BREAK = re.compile(r"\r\n|[\n\r\x00\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
"""What ends a line for the extractor: every line break Python knows, and NUL."""
_FIRST_WORD = re.compile(r"[^\W\d_]\w*")
_MAX_LINES = 200

STATEMENT_WORDS = frozenset((
    "SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "CREATE", "DROP", "ALTER",
    "TRUNCATE", "COPY", "ATTACH", "DETACH", "PRAGMA", "SET", "RESET", "USE", "INSTALL", "FORCE",
    "LOAD", "CALL", "EXPORT", "IMPORT", "CHECKPOINT", "VACUUM", "ANALYZE", "EXPLAIN", "DESCRIBE",
    "DESC", "SHOW", "SUMMARIZE", "BEGIN", "START", "COMMIT", "ROLLBACK", "ABORT", "END", "GRANT",
    "REVOKE", "PREPARE", "EXECUTE", "DEALLOCATE", "COMMENT", "PIVOT", "UNPIVOT", "DECLARE", "LOCK",
))  # fmt: skip
"""First words of SQL statements: a line that begins with one begins a statement."""
_SQL_WORDS = (
    STATEMENT_WORDS
    | {
        word
        for word in (
            *sqlglot.tokens.Tokenizer.KEYWORDS,
            *sqlglot.Dialect.get_or_raise("duckdb").tokenizer_class.KEYWORDS,
        )
        if word.isalpha()
    }
    | {"FROM", "VALUES", "TABLE"}
)
"""Words that are SQL: a line that begins with one is not prose."""


def sql_parses(query: str) -> bool:
    """Whether sqlglot reads ``query`` as exactly one query (SELECT, set operation, CTE).

    Example:
        >>> sql_parses('SELECT "a" FROM t'), sql_parses("# SELECT a"), sql_parses("DROP TABLE t")
        (True, False, False)
    """
    if not query.strip():
        return False
    try:
        trees = [t for t in sqlglot.parse(query, read="duckdb") if t is not None]
    except Exception:  # sqlglot raises several kinds (ParseError, TokenError, ValueError...)
        return False
    return len(trees) == 1 and isinstance(trees[0], exp.Query)


def _blocks(text: str) -> tuple[list[tuple[str, str]], str]:
    """The fenced blocks of ``text`` (language, body), and the text outside them."""
    lines = text.split("\n")
    blocks: list[tuple[str, str]] = []
    outside: list[str] = []
    index = 0
    while index < len(lines):
        match = _FENCE_LINE.match(lines[index])
        if match is None:
            outside.append(lines[index])
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not _FENCE_LINE.match(lines[end]):
            end += 1
        blocks.append((match.group(1).lower(), "\n".join(lines[index + 1 : end])))
        index = end + 1
    return blocks, "\n".join(outside)


def _preferred(blocks: list[tuple[str, str]], languages: tuple[str, ...]) -> str:
    """The body of the first block in one of ``languages``, else of the first filled one."""
    preferred = [body for language, body in blocks if language in languages and body.strip()]
    filled = [body for _, body in blocks if body.strip()]
    return (preferred or filled or [blocks[0][1]])[0]


def _lines(text: str) -> list[tuple[int, str]]:
    """Each line of ``text`` with its offset (lines end at any line break, or NUL)."""
    found: list[tuple[int, str]] = []
    start = 0
    for match in _LINE_BREAK.finditer(text):
        found.append((start, text[start : match.start()]))
        start = match.end()
    found.append((start, text[start:]))
    return found


def _first_word(line: str) -> str:
    """The line's first word, past spaces, punctuation and comment markers (upper-cased)."""
    match = _FIRST_WORD.search(line)
    return match.group(0).upper() if match else ""


def _starts_statement(line: str) -> bool:
    return _first_word(line) in STATEMENT_WORDS


def _holds_statement(text: str) -> bool:
    """Whether a line of ``text``, or a part after a ``;``, begins with a statement word.

    Read without regard to quotes or comments, so nothing can hide a statement from it
    (a statement in a comment counts too).
    """
    return any(_starts_statement(part) for _, line in _lines(text) for part in line.split(";"))


def _code(reply: str) -> str:
    """The part of a reply that is code: its fenced blocks, else its code spans, else all.

    When several blocks (or spans) hold a statement, or one holds a statement and a line
    outside the blocks begins one, all of them are kept, so that the query is refused as
    more than one statement rather than one of them run.
    """
    blocks, outside = _blocks(reply)
    if blocks:
        bodies = [body for _, body in blocks if _holds_statement(body)]
        if bodies and _holds_statement(outside):
            bodies.append(outside)
        if len(bodies) > 1:
            return "\n;\n".join(bodies)
        return (
            bodies[0] if bodies else _preferred(blocks, ("sql", "duckdb", "sqlite", "postgresql"))
        )
    spans = [m.group(1) for m in _INLINE_CODE.finditer(reply)]
    with_statements = [span for span in spans if _holds_statement(span)]
    if len(with_statements) == 1 and not _holds_statement(_INLINE_CODE.sub(" ", reply)):
        return with_statements[0]
    return reply


def _top_level_semicolon(text: str) -> int | None:
    """The offset of the first ``;`` outside quotes and comments, if any."""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in "'\"":
            end = i + 1
            while end < n and not (text[end] == char and text[end + 1 : end + 2] != char):
                end += 2 if text[end] == char else 1  # a doubled quote stays inside
            i = end + 1
        elif text.startswith("--", i):
            breaks = [p for p in (text.find("\n", i), text.find("\r", i)) if p >= 0]
            i = min(breaks) if breaks else n
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif char == ";":
            return i
        else:
            i += 1
    return None


def _is_prose(line: str) -> bool:
    """A line that cannot continue a statement: it starts with a word that is not SQL."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return True
    match = re.match(r"[^\W\d_]\w*", stripped)
    return match is not None and match.group(0).upper() not in _SQL_WORDS


def _opens_reply(line: str, prefix: str) -> bool:
    """Whether a line before a continuation of ``prefix`` is not part of it.

    Blank lines, echoed ``#`` lines and sentences (words that are not SQL, ended by ``.``,
    ``:``, ``!`` or ``?``, that do not continue ``prefix`` into a query) are not.
    """
    if _starts_statement(line):
        return False
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return True
    sentence = re.search(r"[.:!?]$", stripped) is not None
    return sentence and _is_prose(line) and not sql_parses(f"{prefix} {stripped}")


def _ended(statement: str) -> str:
    """The statement without what follows it: a ``;`` and prose, or trailing prose lines.

    Text after the first ``;`` is left out only when no statement begins in it; trailing
    lines are left out only while the statement does not parse and they read as prose.
    """
    semicolon = _top_level_semicolon(statement)
    if semicolon is not None:
        if _holds_statement(statement[semicolon + 1 :]):
            return statement.strip()  # more than one statement: refused as a whole
        return statement[:semicolon].strip()
    lines = _lines(statement)[:_MAX_LINES]
    end = len(lines)
    while end > 1 and not sql_parses(statement[: lines[end - 1][0] + len(lines[end - 1][1])]):
        if not _is_prose(lines[end - 1][1]):
            break
        end -= 1
    offset, last = lines[end - 1]
    return statement[: offset + len(last)].strip()


def extract_sql(reply: str, *, prefix: str = "") -> str:
    r"""The SQL statement in a model's reply, whole (never raises).

    The code is the reply's fenced block (or a code span in backticks) when there is one;
    prose before the statement (lines that do not begin with a SQL statement word such as
    ``SELECT``, ``WITH``, ``CREATE`` or ``COPY``) and after it (past a ``;``, or lines of
    words that are not SQL) is left out. Nothing inside the statement is dropped, its
    comments included, and no statement is taken out of another: a reply that holds a
    second statement, or a statement other than a query, comes back whole, so the SQL
    guard refuses it as :meth:`Table.sql` does.

    Args:
        reply: The model's text.
        prefix: What the prompt ended with when it began the query itself (``"SELECT"``):
            the reply then continues it from its first line (past blank lines, echoed
            ``#`` lines and opening sentences) unless that line begins a statement of its
            own.

    Returns:
        The statement, or the code part without its ``#`` lines (stripped) when no
        statement begins in it.

    Example:
        >>> extract_sql(' "name" FROM t\nORDER BY "score" DESC\nLIMIT 1', prefix="SELECT")
        'SELECT "name" FROM t\nORDER BY "score" DESC\nLIMIT 1'
        >>> extract_sql("# The previous attempt failed\nSELECT 1;\nThis is the answer.")
        'SELECT 1'
        >>> extract_sql("SELECT 1;\nSELECT 2;")
        'SELECT 1;\nSELECT 2;'
    """
    code = _code(reply)
    lines = _lines(code)
    for index, (offset, line) in enumerate(lines):
        if (prefix and _opens_reply(line, prefix)) or (not prefix and not _starts_statement(line)):
            continue  # prose before the statement
        if any(_holds_statement(before) for _, before in lines[:index]):
            return code.strip()  # a statement after a ";" in the prose: refused as a whole
        if prefix and not _starts_statement(line):
            return _ended(f"{prefix} {code[offset:].lstrip()}")
        return _ended(code[offset:])
    prose = [line for _, line in lines if line.strip() and not line.lstrip().startswith("#")]
    return "\n".join(prose).strip()


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
    blocks, _ = _blocks(reply)
    return _preferred(blocks, ("python", "py", "python3"))


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
