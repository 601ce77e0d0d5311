"""group_by: count the rows of each distinct value of a column."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
from sqlglot import exp

from tablereason.operations.catalog import OperationArgs, operation
from tablereason.table.lineage import ROW, Lineage, Origin, Refs, Step
from tablereason.table.storage import RID, ident

if TYPE_CHECKING:  # pragma: no cover
    from tablereason.table.value import Table

COUNT_LABEL = "Count"


class GroupByArgs(OperationArgs):
    """The column to group by."""

    column: str


def _group_cells(child: Table, refs: Refs) -> Origin:
    """A group's value and count map to the grouped column's cells in the group's rows.

    A whole group row maps to the rows of its group.
    """
    parent, args = child.parent, child.step.args if child.step is not None else None
    origin = Origin()
    if parent is None or not isinstance(args, GroupByArgs):
        return origin
    name = parent.column(args.column).name
    wanted = np.unique(np.concatenate([rows for _, rows, _ in refs.items()] or [np.zeros(0)]))
    positions = wanted.tolist()
    values = {int(r): row[0] for r, row in zip(positions, child.rows_at(positions), strict=True)}
    members = _members(parent, name, sorted(set(values.values())))
    for column, rows, tags in refs.items():
        found = [members.get(values[int(r)], np.zeros(0, dtype=np.int64)) for r in rows.tolist()]
        sizes = np.asarray([len(f) for f in found], dtype=np.int64)
        if found:
            key = ROW if column is None else name
            origin.refs.add(key, np.concatenate(found), np.repeat(tags, sizes))
    return origin


def _members(table: Table, name: str, values: list[str]) -> dict[str, np.ndarray]:
    """For each value, the positions of the rows of ``table`` whose ``name`` cell holds it."""
    kernel = table.kernel
    cells = kernel.cells()
    if cells is not None:
        i = kernel.position(name)
        keys = np.asarray([row[i] for row in cells], dtype=object)
        positions = np.arange(len(cells), dtype=np.int64)
    elif values:
        with kernel.scan() as scan:
            cell = scan.cell(name)
            among = exp.In(this=cell, expressions=[exp.Literal.string(v) for v in values])
            query = scan.select(exp.alias_(scan.pos, "p"), exp.alias_(cell.copy(), "v"))
            found = kernel.store.fetch_numpy(query.where(among, copy=False))
        keys, positions = found["v"].astype(object), found["p"].astype(np.int64)
    else:
        return {}
    order = np.argsort(keys, kind="stable")
    keys, positions = keys[order], positions[order]
    distinct, starts = np.unique(keys, return_index=True)
    ends = [*starts[1:].tolist(), len(keys)]
    wanted = set(values)
    return {
        str(value): np.sort(positions[start:end])
        for value, start, end in zip(distinct.tolist(), starts.tolist(), ends, strict=True)
        if value in wanted
    }


@operation(
    "group_by",
    GroupByArgs,
    "a table of each distinct value of a column and how many rows have it, most frequent first",
    lineage=Lineage(
        _group_cells,
        "a group's value and count map to the grouped column's cells in its rows; "
        "a group row to the rows of its group",
    ),
)
def group_by(table: Table, args: GroupByArgs) -> Table:
    """Count rows per distinct value of ``args.column``.

    One row per distinct value (empty values included) with its ``Count``,
    ordered by count descending, ties by value ascending.

    Example:
        >>> from tablereason.table import Table
        >>> t = Table.from_records(["party"], [["red"], ["blue"], ["red"]])
        >>> t.group_by("party").rows()
        [['red', '2'], ['blue', '1']]
    """
    name = table.column(args.column).name
    step = Step(operation="group_by", args=args)
    kernel = table.kernel
    cells = kernel.cells()
    if cells is not None:
        # Python path for small tables. DuckDB compares text byte by byte in UTF-8,
        # which orders like Python's code-point comparison.
        i = kernel.position(name)
        counted = sorted(Counter(row[i] for row in cells).items(), key=lambda vc: (-vc[1], vc[0]))
        columns = [[value for value, _ in counted], [str(count) for _, count in counted]]
        return kernel.from_columns(step, [name, COUNT_LABEL], columns, len(counted))
    with kernel.scan() as scan:
        value = scan.cell(name)
        counts = scan.select(
            exp.alias_(value, "v"), exp.alias_(exp.func("count", exp.Star()), "n")
        ).group_by(value, copy=False)
        rank = exp.Window(
            this=exp.RowNumber(),
            order=exp.Order(
                expressions=[
                    exp.Ordered(this=exp.column("n"), desc=True),
                    exp.Ordered(this=exp.column("v")),
                ]
            ),
        )
        select = exp.select(
            exp.alias_(exp.Sub(this=rank, expression=exp.Literal.number(1)), RID),
            exp.alias_(exp.column("v"), "c0"),
            exp.alias_(exp.Cast(this=exp.column("n"), to=exp.DataType.build("VARCHAR")), "c1"),
        ).from_(exp.Subquery(this=counts, alias=exp.TableAlias(this=ident("g"))), copy=False)
        return kernel.from_query(step, [name, COUNT_LABEL], select)
