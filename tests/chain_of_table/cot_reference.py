"""An independent list-of-rows model of the reference Chain-of-Table decisions (TabFact).

Written from the description of the published code in docs/chain_of_table.md
(google-research/chain-of-table), sharing no code with tablereason: it keeps
the reference's record/replay structure (chain of act strings, table rebuilt from the
rows) so tests can check that the ``paper`` profile takes the same decisions on the
same model replies. Replies come from ``reply(site, n) -> list[str]``.

``run(..., departures=True)`` applies the two departures docs/chain_of_table.md
documents for the ``paper`` profile, each where the reference would take the other
path, and names the ones it met in the result's ``"departed"`` list:

* ``"empty name"``: the reference adds a column named ``''`` (``f_add_column()``);
  here the add-column step is skipped;
* ``"row 0"``: the reference copies the header in as a data row; here ``row 0`` is
  ignored.

With ``departures=False`` the model follows the reference on both.
"""

from __future__ import annotations

import re
from collections.abc import Callable

END = "<END>"
GRAPH = {
    "<init>": ["add_column", "select_row", "select_column", "group_column", "sort_column"],
    "add_column": ["select_row", "select_column", "group_column", "sort_column", END],
    "select_row": ["select_column", "group_column", "sort_column", END],
    "select_column": ["group_column", "sort_column", END],
    "group_column": ["sort_column", END],
    "sort_column": [END],
}
NAME = re.compile(r"f_(.*?)\(.*\)")
Reply = Callable[[str, int], list[str]]


class Lost(Exception):
    """The reference raises (ZeroDivisionError in grouping): the example is lost."""


ROW_LIST = r"f_row\(\[(.*?)\]\)"
COL_LIST = r"f_col\(\[(.*?)\]\)"


def list_key(text: str, pattern: str, last_token: bool) -> list[str] | None:
    """The sorted items of the first ``f_row([...])``/``f_col([...])``, or ``None``."""
    found = re.findall(pattern, text, re.S)
    if not found:
        return None
    # The capture is stripped before the split (a trailing ", " stays on the last item).
    items = [x.strip() for x in found[0].strip().split(", ")]
    if last_token:
        items = [x.split(" ")[-1] for x in items]
    return sorted(items)


def sort_key(res: str, header: list[str]) -> tuple[str, str, str] | None:
    """(column, order, datatype) of a sort reply, or ``None`` when the reference drops it."""
    # DOTALL, and every capture stripped.
    dtype = re.findall(r"The datatype is (\w*).", res, re.S)
    order = re.findall(r'the order is "(.*)"\.', res, re.S)
    col = re.findall(r"f_sort\((.*)\)", res, re.S)
    if not (dtype and order and col):
        return None
    dtype_, order_, col_ = dtype[0].strip(), order[0].strip(), col[0].strip()
    if order_ not in ("small to large", "large to small") or col_ not in header:
        return None
    return col_, order_, dtype_


def _votes(texts: list[str], pattern: str, last_token: bool) -> list[list[str]]:
    scores: dict[str, float] = {}
    n = len(texts)
    for i, text in enumerate(texts):
        items = list_key(text, pattern, last_token)
        if items is None:
            continue
        key = str(sorted(items))
        scores[key] = scores.get(key, 0.0) + (n - i) / n
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    return [eval(k) for k, _ in ranked]  # the reference evals its str(list) keys


def _number(cell: str) -> float | None:
    out, dot = "", False
    for ch in cell:
        if ch in "0123456789":
            out += ch
        elif ch == "." and not dot:
            out, dot = out + ".", True
    if out in ("", "."):
        return None
    return float(("-" if cell.strip().startswith("-") else "") + out)


def run(
    table: list[list[str]],
    statement: str,
    cleaned: str,
    reply: Reply,
    *,
    departures: bool = True,
) -> dict[str, object]:
    """Run the reference decisions; return the act chain, final table, group and answer."""
    departed: list[str] = []
    chain: list[str] = []
    group = None
    for _ in range(12):
        kept = [c for c in chain if not c.startswith("skip")]
        skipped = {NAME.findall(c[len("skip ") :])[0] for c in chain if c.startswith("skip")}
        last = "<init>" if not kept else NAME.findall(kept[-1])[0]
        allowed = [op for op in GRAPH[last] if op not in skipped]
        if len(allowed) == 1:
            op = allowed[0]
        else:
            names = []
            for part in reply("plan", 1)[0].split("->"):
                part = part.strip()
                if part == END:
                    names.append(END)
                elif NAME.findall(part):
                    names.append(NAME.findall(part)[0])
            op = next((n for n in names if n in allowed), END)
        if op == END:
            break
        header, rows = table[0], table[1:]
        if op == "add_column":
            entry, new = _add_column(table, cleaned, reply)
            if entry == "f_add_column()" and departures:
                departed.append("empty name")
                entry = "skip f_add_column()"
            else:
                table = new
        elif op == "select_row":
            union: set[str] = set()
            for key in _votes(reply("select_row", 8), ROW_LIST, True)[:2]:
                union |= set(key)
            # The reference walks the rows from j = 0, the header itself.
            if "0" in union and departures:
                departed.append("row 0")
            keep = [j for j in range(0 if not departures else 1, len(table)) if str(j) in union]
            if "*" in union or not keep:
                entry = "f_select_row(*)"
            else:
                table = [header] + [table[j] for j in keep]
                entry = (
                    "f_select_row(" + ", ".join(f"row {k}" for k in range(1, len(keep) + 1)) + ")"
                )
        elif op == "select_column":
            union = set()
            for key in _votes(reply("select_column", 8), COL_LIST, False)[:2]:
                union |= set(key)
            idx = [i for i, h in enumerate(header) if h.lower() in union]
            if not idx:
                entry = "f_select_column(*)"
            else:
                table = [[r[i] for i in idx] for r in table]
                entry = "f_select_column(" + ", ".join(header[i] for i in idx) + ")"
        elif op == "group_column":
            found = re.findall(r"f_group\(([^\)]*)\)", reply("group_column", 1)[0], re.S)
            col = found[0].strip() if found else None
            entry = "skip f_group_column()"
            if col in header:
                values = [r[header.index(col)] for r in rows]
                nonempty = [v for v in values if v.strip() != ""]
                if not nonempty:
                    raise Lost("division by zero")
                if len(set(nonempty)) / len(nonempty) <= 0.8:
                    info = [(v, values.count(v)) for v in sorted(set(values))]
                    info.sort(key=lambda x: x[1], reverse=True)
                    group = (col, info)
                    entry = f"f_group_column({col})"
        else:
            entry, table = _sort(table, reply("sort_column", 1)[0])
        chain.append(entry)
    answer = reply("final_query", 1)[0].strip().lower()
    answer = {"true": "yes", "false": "no"}.get(answer, answer)
    return {
        "chain": chain,
        "table": table,
        "group": group,
        "answer": answer,
        "departed": departed,
    }


def add_column_key(res: str) -> tuple[str, list[str]] | None:
    """Name and first 3 values of an add-column reply, or ``None`` when it is dropped."""
    found = re.findall(r"f_add_column\(.*\)", res, re.S)
    if not found or "We extract the value from" not in res or "The value:" not in res:
        return None
    call = found[0].strip()
    name = call[call.index("(") + 1 : call.index(")")].strip()
    values = [v.strip() for v in res.split("The value:")[-1].strip().split("|")]
    return (name, values) if len(values) == 3 else None


def _add_column(table: list[list[str]], cleaned: str, reply: Reply) -> tuple[str, list[list[str]]]:
    header, rows = table[0], table[1:]
    res = reply("add_column", 1)[0]
    skip = ("skip f_add_column()", table)
    key = add_column_key(res)
    if key is None or key[0] in header:
        return skip
    name, values = key
    for _ in rows[3:]:
        value = reply("add_column", 1)[0].strip()
        values.append(value.split("|")[0].strip() if "|" in value else value)
    columns = [[r[i] for r in rows] for i in range(len(header))]
    if (
        name.startswith("number of")
        or len(set(values)) == 1
        or any(v.strip() == "" for v in values)
        or name in header
        or any(values == c for c in columns)
        or not any(all(values[i] in old[i] for i in range(len(old))) for old in columns)
    ):
        return skip
    new = [[*header, name]] + [[*r, values[i]] for i, r in enumerate(rows)]
    return f"f_add_column({name})", new


def _sort(table: list[list[str]], res: str) -> tuple[str, list[list[str]]]:
    header, rows = table[0], table[1:]
    skip = ("skip f_sort_column()", table)
    key = sort_key(res, header)
    if key is None:
        return skip
    col_, order_, dtype_ = key
    cells = [r[header.index(col_)] for r in rows]
    if dtype_ == "Numerical":
        keyed = [(_number(c), i) for i, c in enumerate(cells)]
    else:
        keyed = [(c.strip() or None, i) for i, c in enumerate(cells)]
    good = [(k, i) for k, i in keyed if k is not None]
    bad = [i for k, i in keyed if k is None]
    keys = [k for k, _ in good]
    if keys == sorted(keys) or keys == sorted(keys, reverse=True):
        return skip
    if dtype_ != "Numerical":
        return skip
    order_idx = [i for _, i in sorted(good, key=lambda x: x[0], reverse=order_ == "large to small")]
    return f"f_sort_column({col_})", [header] + [rows[i] for i in order_idx + bad]
