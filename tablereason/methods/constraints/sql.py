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
    numbers,
    one_of,
    optional,
    satisfies,
    seq,
)
from tablereason.methods.constraints.sql_literals import (
    MOST_SHOWN,
    Literals,
    dates_of,
    free_date,
    free_number,
    free_text,
    numbers_of,
    patterns,
    sql_text,
    texts,
    years_of,
)
from tablereason.operations import expression_checks, row_expressions

__all__ = [
    "Column",
    "Literals",
    "condition_rules",
    "expression_rules",
    "grammar",
    "satisfies",
    "select_rules",
]

CLOSED_VALUES = 50
"""A text column with at most this many distinct values compares only with them."""
MOST_NESTED = 2
"""Most functions nested in one term (``round(abs(x))``): without a bound a model can
nest ``ceil(ceil(...`` until the token limit cuts the reply."""

NUMBER_PATTERNS = ("[0-9]+", "[0-9.]+", "[0-9]{4}", "[0-9]+$")
"""Patterns a number may be extracted from text with (each a valid regular expression)."""
TEXT_PATTERNS = ("[A-Za-z]+", "[A-Za-z]+ [0-9]+", "[0-9]+", "[0-9]{4}")
"""Patterns a part of a text may be extracted with."""

_DIGIT = Chars(((48, 57),))
_CMP = (" = ", " <> ", " < ", " <= ", " > ", " >= ")
_LIKE = (" LIKE ", " ILIKE ", " NOT LIKE ", " NOT ILIKE ")
_DAYNAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHNAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_RANGES = {"month": (1, 12), "quarter": (1, 4), "day": (1, 31), "hour": (0, 23)}
"""Numbers a date part can be: its literals."""


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
        shown: Values of the column the prompt's view shows (conditions given
            :class:`Literals` compare a many-valued column with these and the question's).
        spelling: How SQL writes it (default: as a row expression reads it,
            :func:`~tablereason.operations.row_expressions.quoted`).
        nullable: Whether it may hold empty cells (conditions given :class:`Literals`
            test ``IS NULL`` only on such columns: on others it keeps no row or all).
    """

    name: str
    type: str
    values: tuple[str, ...] = ()
    spelling: str = ""
    shown: tuple[str, ...] = ()
    nullable: bool = True

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


def _kind(column: Column) -> str:
    return "date" if column.type in ("date", "timestamp") else column.type


def _level(kind: str, level: int) -> str:
    """The rule of ``kind`` terms with at most ``level`` nested functions."""
    return kind if level == MOST_NESTED else f"{kind}-{level}"


def _terms(columns: Sequence[Column]) -> Rules:
    """``number``, ``text`` and ``date`` terms over the columns (rules only for types present).

    A term is a column, or a function of a term one level down: at most
    :data:`MOST_NESTED` functions deep.
    """
    by_type: dict[str, list[str]] = {}
    for column in columns:
        by_type.setdefault(_kind(column), []).append(column.sql)
    rules: Rules = {}
    present = {kind for kind in by_type if kind in ("number", "text", "date")}
    if "date" in present or "text" in present:
        present.add("number")  # year(date) and length(text) are numbers
    if "date" in present:
        present.add("text")  # dayname(date) is text
    cast = "TRY_CAST" if _allowed("TryCast") else "CAST" if _allowed("Cast") else None
    for level in range(MOST_NESTED + 1):
        for kind in sorted(present):
            options: list[Expr] = []
            if by_type.get(kind):
                options.append(one_of(by_type[kind]))
            below = level - 1
            for cls, spelling, result, argument in _FUNCTIONS if level else ():
                reads = "date" if argument == "timestamp" else argument
                usable = result == kind and by_type.get(reads) and _allowed(cls)
                if usable and (argument != "timestamp" or _has(columns, "timestamp")):
                    arg = Ref("date-col") if reads == "date" else Ref(_level(argument, below))
                    options.append(seq(f"{spelling}(", arg, ")"))
            if level and by_type.get("text") and _allowed("RegexpExtract"):
                text = Ref(_level("text", below))
                if kind == "number" and cast is not None:
                    found = one_of([sql_text(p) for p in NUMBER_PATTERNS])
                    options.append(
                        seq(f"{cast}(regexp_extract(", text, ", ", found, ") AS DOUBLE)")
                    )
                if kind == "text":
                    found = one_of([sql_text(p) for p in TEXT_PATTERNS])
                    options.append(seq("regexp_extract(", text, ", ", found, ")"))
            if options:
                rules[_level(kind, level)] = alt(*options)
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
        values = one_of([sql_text(v) for v in column.values])
        preds.append(seq(column.sql, alt(" = ", " <> "), values))
        preds.append(seq(column.sql, " IN (", listed(values, ", ", most=6), ")"))
    open_text = [c.sql for c in columns if c.type == "text" and not c.values]
    wrapped = [  # one function around a term of one function less: still MOST_NESTED deep
        seq(f"{spelling}(", Ref(_level("text", MOST_NESTED - 1)), ")")
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
    return preds


def _bound_predicates(columns: Sequence[Column], literals: Literals) -> list[Expr]:
    """Predicates whose literals are drawn from the table, its view and the question.

    A few-valued text column compares only with its values (in ``=``, ``IN``, ``LIKE``,
    ``contains`` and ``lower(...) =``); a many-valued one with the values the view shows
    and the question's words; a number column with the view's numbers of it and the
    question's; a date column with the view's dates of it and the question's, its parts
    with what they can be (a year between the earliest and latest shown, months 1 to 12,
    day and month names). Each predicate names a column.
    """
    named = literals.only_named
    negating = not named or literals.negated
    cmp = alt(*(c for c in _CMP if negating or c != " <> "))
    eq = alt(" = ", " <> ") if negating else alt(" = ")
    likes = _LIKE if negating else tuple(o for o in _LIKE if "NOT" not in o)
    preds: list[Expr] = []
    names = {spelling for cls, spelling, _, _ in _FUNCTIONS if _allowed(cls)}

    def compare(term: Expr, literal: Expr | None, *, ordered: bool = True) -> None:
        if literal is not None:
            preds.append(seq(term, cmp if ordered else eq, literal))
            if ordered:
                preds.append(seq(term, " BETWEEN ", literal, " AND ", literal))

    for column in columns:
        name = column.sql
        if column.type == "text":
            values = column.values or (*column.shown[:MOST_SHOWN], *literals.words)
            exact, low = texts(values), texts(values, lower=True)
            if exact is None or low is None:
                continue
            preds.append(seq(name, eq, exact))
            preds.append(seq(name, " IN (", listed(exact, ", ", most=6), ")"))
            like = patterns(values)
            if like is not None:
                preds.append(seq(name, alt(*likes), like))
            for cls, spelling in _TESTS:
                if _allowed(cls):
                    preds.append(seq(f"{spelling}(", name, ", ", exact, ")"))
            if "lower" in names:
                preds.append(seq(f"lower({name})", eq, low))
                if _allowed("Contains"):
                    preds.append(seq(f"contains(lower({name}), ", low, ")"))
            if "length" in names:
                compare(seq(f"length({name})"), numbers_of(literals.numbers))
        elif column.type == "number":
            rounded = [f for f in ("abs", "round", "floor", "ceil") if f in names]
            term = alt(name, *(seq(f"{f}(", name, ")") for f in rounded))
            compare(term, numbers_of((*literals.numbers, *column.shown[:MOST_SHOWN])))
        elif column.type in ("date", "timestamp"):
            shown = (*column.shown[:MOST_SHOWN], *literals.dates)
            compare(seq(name), dates_of(shown))
            years = [*literals.numbers, *years_of(column.shown[:MOST_SHOWN])]
            if "year" in names:
                compare(seq(f"year({name})"), numbers_of(y for y in years if len(y) == 4))
            for part, (low_n, high_n) in _RANGES.items():
                if part in names and (part != "hour" or column.type == "timestamp"):
                    if named:  # only the question's numbers that the part can be
                        asked = [n for n in literals.numbers if n.isdigit()]
                        part_numbers = numbers_of(n for n in asked if low_n <= int(n) <= high_n)
                    else:
                        part_numbers = numbers(low_n, high_n)
                    compare(seq(f"{part}({name})"), part_numbers)
            for part, spelled in (("dayname", _DAYNAMES), ("monthname", _MONTHNAMES)):
                if part in names:
                    said = [n for n in spelled if not named or n.lower() in literals.said]
                    compare(seq(f"{part}({name})"), texts(said), ordered=False)
    number_names = [c.sql for c in columns if c.type == "number"]
    if len(number_names) > 1 and not named:  # one number column against another
        preds.append(seq(one_of(number_names), cmp, one_of(number_names)))
    return preds


def condition_rules(
    columns: Sequence[Column],
    *,
    root: str = "root",
    conjuncts: int = 3,
    literals: Literals | None = None,
) -> Rules:
    """A row condition over ``columns``: predicates joined by ``AND`` / ``OR``, ``NOT``, groups.

    Groups (``(...)`` and ``NOT (...)``) hold no groups themselves, and terms nest at
    most :data:`MOST_NESTED` functions, so every reply of the grammar is bounded.

    Args:
        columns: The table's columns.
        root: The name of the condition's rule (to embed it in a larger grammar).
        conjuncts: Most predicates joined by ``AND`` in one ``OR`` branch (at most 3
            branches).
        literals: Compare only with literals drawn from the table, its view and the
            question (:func:`_bound_predicates`); None: any literal of the column's type
            (a few-valued text column still only with its values in ``=`` and ``IN``).
    """
    rules = _terms(columns)
    rules.update({"lit-num": free_number(), "lit-str": free_text(), "lit-date": free_date()})
    preds = (
        _predicates(columns, rules) if literals is None else _bound_predicates(columns, literals)
    )
    nullable = [c.sql for c in columns if c.nullable or literals is None]
    if not preds and not nullable:  # nothing else to compare: a grammar needs a predicate
        nullable = [c.sql for c in columns]
    if nullable:
        preds.append(seq(one_of(nullable), alt(" IS NULL", " IS NOT NULL")))
    flat = f"{root}-flat"
    rules["pred-flat"] = alt(*preds)
    rules["conj-flat"] = listed(Ref("pred-flat"), " AND ", most=conjuncts)
    rules[flat] = listed(Ref("conj-flat"), " OR ", most=3)
    group = seq("(", Ref(flat), ")")
    negating = literals is None or not literals.only_named or literals.negated
    rules["pred"] = alt(Ref("pred-flat"), *([seq("NOT ", group)] if negating else []), group)
    rules["conj"] = listed(Ref("pred"), " AND ", most=conjuncts)
    rules[root] = listed(Ref("conj"), " OR ", most=3)
    return rules


def expression_rules(
    columns: Sequence[Column], *, root: str = "root", literals: Literals | None = None
) -> Rules:
    """A value computed per row from ``columns``: a number (with arithmetic), a text, a CASE.

    Every alternative reads at least one column; ``cond`` is the condition of
    :func:`condition_rules` (with ``literals``).
    """
    rules = condition_rules(columns, root="cond", literals=literals)
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
