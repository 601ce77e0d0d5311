"""Physical tables live in a compressed in-memory catalog (large loads keep less memory)."""

from __future__ import annotations

from tablereason.table import Table
from tablereason.table.database import CATALOG


def test_tables_are_stored_in_the_compressed_catalog_and_compressed() -> None:
    rows = [[f"customer {i % 500}", ("shipped", "pending")[i % 2]] for i in range(60_000)]
    table = Table.from_records(["customer", "status"], rows)
    kernel = table.kernel
    kernel.store.require([kernel.base])
    with kernel.store.connection() as conn:
        where = conn.execute(
            "SELECT database_name FROM duckdb_tables() WHERE table_name = ?", [kernel.base]
        ).fetchall()
        conn.execute("CHECKPOINT")
        methods = {
            row[0]
            for row in conn.execute(
                "SELECT compression FROM pragma_storage_info(?) WHERE segment_type = 'VARCHAR'",
                [f"{CATALOG}.main.{kernel.base}"],
            ).fetchall()
        }
    assert where == [(CATALOG,)]
    assert methods and methods != {"Uncompressed"}, methods
    assert table.num_rows == 60_000 and table.rows(1) == [["customer 0", "shipped"]]
