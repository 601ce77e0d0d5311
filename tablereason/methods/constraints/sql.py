r"""Grammars of SQL over one table: row conditions, row expressions, and a SELECT over ``t``.

Built from the table's columns as a model must write them (each name exactly, quoted
where SQL needs it) and their types, so a reply under one of these grammars parses, names
columns of the table, and compares each column as what it holds:

- number columns with numbers (and arithmetic, ``BETWEEN``), date columns with
  ``'YYYY-MM-DD'`` dates, text columns with quoted text, ``LIKE``/``ILIKE`` patterns and
  ``IN`` lists; a text column with few distinct values compares only with its values, so a
  condition on it cannot name a value the table lacks;
- functions as the table's types allow them (``year(date)``, ``lower(text)``,
  ``TRY_CAST(regexp_extract(text, '[0-9.]+') AS DOUBLE)`` with a few fixed patterns),
  each used only when its sqlglot class is on the row-expression allowlist of
  :mod:`tablereason.operations.expression_checks` (read from there, so the grammar
  offers nothing the operation refuses);
- every predicate names a column, so no condition keeps all rows or none by itself.

Example:
    >>> cols = [Column("weather", "text", ("rain", "snow")), Column("temp max", "number")]
    >>> rules = condition_rules(cols)
    >>> g = grammar(rules)
    >>> satisfies(g, "weather = 'snow' AND \"temp max\" > 30")
    True
    >>> satisfies(g, "weather = 'hail'"), satisfies(g, "1 = 1")
    (False, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tablereason.llm.constraints.gbnf import Ref, Repeat, Rules
from tablereason.methods.constraints.parts import (
    Chars,
    Expr,
    alt,
    grammar,
    listed,
    one_of,
    optional,
    satisfies,
    seq,
    text_of,
)
from tablereason.operations import expression_checks, row_expressions

__all__ = [
    "Column",
    "condition_rules",
    "expression_rules",
    "grammar",
    "satisfies",
    "select_rules",
]

CLOSED_VALUES = 50
"""A text column with at most this many distinct values compares only with them."""
STRING_CHARS = 60
"""Longest quoted text literal."""

NUMBER_PATTERNS = ("[0-9]+", "[0-9.]+", "[0-9]{4}")
"""Patterns a number may be extracted from text with (each a valid regular expression)."""
TEXT_PATTERNS = ("[A-Za-z]+", "[A-Za-z]+ [0-9]+", "[0-9]+", "[0-9]{4}")
"""Patterns a part of a text may be extracted with."""

_DIGIT = Chars(((48, 57),))


def grammar_type(column_type: str) -> str:
    """How the grammars read a column of a given column type.

    Integers and decimals are both ``number``; a boolean column is compared as text
    (its few values are offered as literals); the other types keep their names.

    Example:
        >>> grammar_type("integer"), grammar_type("decimal"), grammar_type("date")
        ('number', 'number', 'date')
    """
    if column_type in ("integer", "decimal"):
        return "number"
    if column_type == "boolean":
        return "text"
    return column_type


@dataclass(frozen=True)
class Column:
    """One column as a grammar sees it.

    Attributes:
        name: Its name in the table.
        type: How conditions read it: ``number``, ``date``, ``timestamp``, ``text``,
            ``empty`` (a column type read through :func:`grammar_type`).
        values: For a text column, every distinct value when there are few (its
            comparisons use only these); empty otherwise.
        spelling: How SQL writes it (default: as a row expression reads it,
            :func:`~tablereason.operations.row_expressions.quoted`).
    """

    name: str
    type: str
    values: tuple[str, ...] = ()
    spelling: str = ""

    @property
    def sql(self) -> str:
        """The name as SQL writes it."""
        return self.spelling or row_expressions.quoted(self.name)


_FUNCTIONS: tuple[tuple[str, str, str, str], ...] = (
    # (sqlglot class, spelling, result type, argument type)
    ("Abs", "abs", "number", "number"),
    ("Round", "round", "number", "number"),
    ("Floor", "floor", "number", "number"),
    ("Ceil", "ceil", "number", "number"),
    ("Year", "year", "number", "date"),
    ("Month", "month", "number", "date"),
    ("Day", "day", "number", "date"),
    ("Quarter", "quarter", "number", "date"),
    ("Hour", "hour", "number", "timestamp"),
    ("Length", "length", "number", "text"),
    ("Lower", "lower", "text", "text"),
    ("Upper", "upper", "text", "text"),
    ("Trim", "trim", "text", "text"),
    ("Dayname", "dayname", "text", "date"),
    ("Monthname", "monthname", "text", "date"),
)
"""Functions of one argument the grammars may offer, with the types they map between."""

_TESTS = (("Contains", "contains"), ("StartsWith", "starts_with"), ("EndsWith", "ends_with"))
"""Text tests ``f(text, 'literal')``."""


def _allowed(name: str) -> bool:
    """Whether row expressions accept the sqlglot function class ``name``."""
    return name in expression_checks.ROW_LEVEL_FUNCTIONS


def _number() -> Expr:
    digits = Repeat(_DIGIT, 1, 12)
    return seq(optional("-"), digits, optional(seq(".", Repeat(_DIGIT, 1, 6))))


def _string() -> Expr:
    return seq("'", text_of("'\n\\", least=0, most=STRING_CHARS), "'")


def _date() -> Expr:
    """A quoted ``YYYY-MM-DD`` date that exists (years 1000 to 9999; no 29 February)."""
    year = seq(Chars(((49, 57),)), Repeat(_DIGIT, 3, 3))
    days = [f"{d:02d}" for d in range(1, 29)]
    month_days = alt(
        seq("02-", one_of(days)),
        seq(
            one_of(["01", "03", "05", "07", "08", "10", "12"]),
            "-",
            one_of([*days, "29", "30", "31"]),
        ),
        seq(one_of(["04", "06", "09", "11"]), "-", one_of([*days, "29", "30"])),
    )
    return seq("'", year, "-", month_days, "'")


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _kind(column: Column) -> str:
    return "date" if column.type in ("date", "timestamp") else column.type


def _terms(columns: Sequence[Column]) -> Rules:
    """``num``, ``text`` and ``date`` terms over the columns (rules only for types present)."""
    by_type: dict[str, list[str]] = {}
    for column in columns:
        by_type.setdefault(_kind(column), []).append(column.sql)
    rules: Rules = {}
    present = {kind for kind in by_type if kind in ("number", "text", "date")}
    if "date" in present or "text" in present:
        present.add("number")  # year(date) and length(text) are numbers
    if "date" in present:
        present.add("text")  # dayname(date) is text
    for kind in sorted(present):
        options: list[Expr] = []
        if by_type.get(kind):
            options.append(one_of(by_type[kind]))
        for cls, spelling, result, argument in _FUNCTIONS:
            reads = "date" if argument == "timestamp" else argument
            usable = result == kind and by_type.get(reads) and _allowed(cls)
            if usable and (argument != "timestamp" or _has(columns, "timestamp")):
                arg = Ref("date-col") if reads == "date" else Ref(argument)
                options.append(seq(f"{spelling}(", arg, ")"))
        if by_type.get("text") and _allowed("RegexpExtract"):
            if kind == "number" and (_allowed("TryCast") or _allowed("Cast")):
                cast = "TRY_CAST" if _allowed("TryCast") else "CAST"
                patterns = one_of([_quoted(p) for p in NUMBER_PATTERNS])
                options.append(
                    seq(f"{cast}(regexp_extract(", Ref("text"), ", ", patterns, ") AS DOUBLE)")
                )
            if kind == "text":
                patterns = one_of([_quoted(p) for p in TEXT_PATTERNS])
                options.append(seq("regexp_extract(", Ref("text"), ", ", patterns, ")"))
        if options:
            rules[kind] = alt(*options)
    if by_type.get("date"):
        rules["date-col"] = one_of(by_type["date"])
    return _prune(rules)


def _has(columns: Sequence[Column], kind: str) -> bool:
    return any(c.type == kind for c in columns)


def _prune(rules: Rules) -> Rules:
    """Drop alternatives that refer to rules that do not exist."""
    from tablereason.llm.constraints.gbnf import Alt, references

    changed = True
    while changed:
        changed = False
        for name, expr in list(rules.items()):
            options = expr.options if isinstance(expr, Alt) else (expr,)
            kept = tuple(o for o in options if references(o) <= set(rules))
            if not kept:
                del rules[name]
                changed = True
            elif len(kept) != len(options):
                rules[name] = alt(*kept)
                changed = True
    return rules


def _predicates(columns: Sequence[Column], rules: Rules) -> list[Expr]:
    """Every predicate form the columns allow; each names at least one column."""
    cmp = alt(" = ", " <> ", " < ", " <= ", " > ", " >= ")
    preds: list[Expr] = []
    if "number" in rules:
        arith = alt(" + ", " - ", " * ", " / ")
        side = seq(Ref("number"), Repeat(seq(arith, alt(Ref("number"), Ref("lit-num"))), 0, 1))
        rules["num-side"] = side
        preds.append(seq(Ref("num-side"), cmp, alt(Ref("lit-num"), Ref("num-side"))))
        preds.append(seq(Ref("num-side"), " BETWEEN ", Ref("lit-num"), " AND ", Ref("lit-num")))
    closed = [c for c in columns if c.type == "text" and c.values]
    for column in closed:
        values = one_of([_quoted(v) for v in column.values])
        preds.append(seq(column.sql, alt(" = ", " <> "), values))
        preds.append(seq(column.sql, " IN (", listed(values, ", ", most=6), ")"))
    open_text = [c.sql for c in columns if c.type == "text" and not c.values]
    wrapped = [
        seq(f"{spelling}(", Ref("text"), ")")
        for cls, spelling, result, argument in _FUNCTIONS
        if result == "text" and argument == "text" and _allowed(cls) and "text" in rules
    ]
    if open_text or wrapped:
        free = alt(*([one_of(open_text)] if open_text else []), *wrapped)
        preds.append(seq(free, alt(" = ", " <> "), Ref("lit-str")))
        preds.append(seq(free, " IN (", listed(Ref("lit-str"), ", ", most=6), ")"))
    if "text" in rules:
        preds.append(
            seq(Ref("text"), alt(" LIKE ", " ILIKE ", " NOT LIKE ", " NOT ILIKE "), Ref("lit-str"))
        )
        for cls, spelling in _TESTS:
            if _allowed(cls):
                preds.append(seq(f"{spelling}(", Ref("text"), ", ", Ref("lit-str"), ")"))
    if "date-col" in rules:
        preds.append(seq(Ref("date-col"), cmp, Ref("lit-date")))
        preds.append(seq(Ref("date-col"), " BETWEEN ", Ref("lit-date"), " AND ", Ref("lit-date")))
    if columns:
        preds.append(seq(one_of([c.sql for c in columns]), alt(" IS NULL", " IS NOT NULL")))
    return preds


def condition_rules(columns: Sequence[Column], *, root: str = "root", conjuncts: int = 3) -> Rules:
    """A row condition over ``columns``: predicates joined by ``AND`` / ``OR``, ``NOT``, groups.

    Args:
        columns: The table's columns.
        root: The name of the condition's rule (to embed it in a larger grammar).
        conjuncts: Most predicates joined by ``AND`` in one ``OR`` branch (at most 3
            branches).
    """
    rules = _terms(columns)
    rules.update({"lit-num": _number(), "lit-str": _string(), "lit-date": _date()})
    preds = _predicates(columns, rules)
    group = seq("(", Ref(root), ")")
    rules["pred"] = alt(*preds, seq("NOT ", group), group)
    rules["conj"] = listed(Ref("pred"), " AND ", most=conjuncts)
    rules[root] = listed(Ref("conj"), " OR ", most=3)
    return rules


def expression_rules(columns: Sequence[Column], *, root: str = "root") -> Rules:
    """A value computed per row from ``columns``: a number (with arithmetic), a text, a CASE.

    Every alternative reads at least one column.
    """
    rules = condition_rules(columns, root="cond")
    options: list[Expr] = []
    if "number" in rules:
        arith = alt(" + ", " - ", " * ", " / ")
        options.append(
            seq(Ref("number"), Repeat(seq(arith, alt(Ref("number"), Ref("lit-num"))), 0, 2))
        )
    if "text" in rules:
        options.append(Ref("text"))
    if _allowed("Case"):
        for value in (Ref("lit-num"), Ref("lit-str")):  # both branches of one type
            options.append(seq("CASE WHEN ", Ref("cond"), " THEN ", value, " ELSE ", value, " END"))
    rules[root] = alt(*options)
    return rules


def select_rules(columns: Sequence[Column], *, table: str = "t") -> Rules:
    """The rest of a query after ``SELECT``: `` items FROM t`` and optional clauses.

    Items are columns and ``COUNT(*)``, ``COUNT(DISTINCT c)``, ``COUNT``/``MIN``/``MAX``
    of a column, ``SUM``/``AVG`` of a number column; then ``WHERE`` a condition,
    ``GROUP BY`` columns, ``ORDER BY`` an item and a direction, ``LIMIT`` a number.
    """
    rules = condition_rules(columns, root="cond")
    names = one_of([c.sql for c in columns])
    numeric = [c.sql for c in columns if c.type == "number"]
    items: list[Expr | str] = [
        names,
        "COUNT(*)",
        seq("COUNT(DISTINCT ", names, ")"),
        seq(alt("COUNT(", "MIN(", "MAX("), names, ")"),
    ]
    if numeric:
        items.append(seq(alt("SUM(", "AVG("), one_of(numeric), ")"))
    rules["item"] = alt(*items)
    rules["root"] = seq(
        " ",
        listed(Ref("item"), ", ", most=4),
        f" FROM {table}",
        optional(seq(" WHERE ", Ref("cond"))),
        optional(seq(" GROUP BY ", listed(names, ", ", most=3))),
        optional(seq(" ORDER BY ", Ref("item"), optional(alt(" ASC", " DESC")))),
        optional(seq(" LIMIT ", Repeat(_DIGIT, 1, 4))),
        optional(";"),
    )
    return rules
