"""sql: one guarded, read-only SELECT over the table (named ``t``)."""

from __future__ import annotations

import threading

import duckdb
from pydantic import Field
from sqlglot import exp

from tablereason.errors import SQLError
from tablereason.operations.catalog import OperationArgs, operation
from tablereason.sqlguard import check_select
from tablereason.storage import ident, render, to_text
from tablereason.table import Step, Table

TABLE_NAME = "t"
MAX_RESULT_ROWS = 1_000_000


class SqlArgs(OperationArgs):
    """The query, and a time limit after which it is interrupted."""

    query: str
    timeout_s: float = Field(default=10.0, gt=0)


@operation("sql", SqlArgs, "run one read-only SELECT over the table, referred to as t")
def sql_query(table: Table, args: SqlArgs) -> Table:
    """Run ``args.query`` over the table (as ``t``) and return the result as a table.

    The query is checked with :func:`~tablereason.sqlguard.check_select` and runs
    on the locked-down database with a time limit.

    Raises:
        SQLError: If the query is rejected, fails, runs too long or returns too
            many rows.

    Example:
        >>> t = Table.from_records(["a", "b c"], [["1", "x"], ["2", "y"]])
        >>> t.sql('SELECT "b c" FROM t WHERE CAST(a AS INT) > 1').rows()
        [['y']]
    """
    root = check_select(args.query, [TABLE_NAME])
    if TABLE_NAME in {cte.alias_or_name.lower() for cte in root.find_all(exp.CTE)}:
        raise SQLError(f"{TABLE_NAME!r} is the table's name; give your CTE another name")
    with table._scan() as scan:
        view = scan.select(
            *(exp.alias_(scan.cell(name), ident(name)) for name in table.columns)
        ).order_by(scan.pos, copy=False)
        cte = exp.CTE(this=view, alias=exp.TableAlias(this=ident(TABLE_NAME)))
        existing = root.args.get("with_")
        if existing is not None:
            existing.set("expressions", [cte, *existing.expressions])
        else:
            root.set("with_", exp.With(expressions=[cte]))
        timer = threading.Timer(args.timeout_s, table._store.interrupt)
        with table._store.connection() as conn:
            timer.start()
            try:
                cursor = conn.execute(render(root))
                labels = [d[0] for d in cursor.description or []]
                result = cursor.fetchmany(MAX_RESULT_ROWS + 1)
            except duckdb.InterruptException:
                raise SQLError(
                    f"the query ran longer than {args.timeout_s} s and was stopped"
                ) from None
            except duckdb.Error as error:
                raise SQLError(f"the query failed: {str(error).splitlines()[0]}") from None
            finally:
                timer.cancel()
    if len(result) > MAX_RESULT_ROWS:
        raise SQLError(
            f"the query returned more than {MAX_RESULT_ROWS} rows; aggregate or add LIMIT"
        )
    if not labels:
        raise SQLError("the query returned no columns")
    columns = [[to_text(row[i]) for row in result] for i in range(len(labels))]
    return table._new_base(Step(operation="sql", args=args), labels, columns, len(result))
