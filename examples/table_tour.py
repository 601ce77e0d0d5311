"""A tour of the Table engine on a real WikiTableQuestions table, no model needed.

Run:  python examples/table_tour.py
"""

from pathlib import Path

from tablereason import Table

HERE = Path(__file__).resolve().parent

table = Table.from_csv(HERE / "taymyr_births.csv", caption="Taymyr Autonomous Okrug")
print(f"Loaded {table.num_rows} rows; columns: {table.columns}\n")

# "What year was the first to reach 1,000 or more live births?"
chain = (
    table.select_columns(["Column 1", "Live births"])
    .sort_by("Live births", descending=True)  # "1 104" reads as 1104
    .select_rows([0, 1, 2])
)
for step_table in chain.lineage():
    label = step_table.step.operation if step_table.step else "source"
    print(f"-- {label}: {step_table.step.args.model_dump() if step_table.step else ''}")
    print(step_table.to_pipe(max_rows=5), end="\n\n")

print("-- SQL over the original table:")
query = """
SELECT "Column 1" AS year FROM t
WHERE CAST(replace("Live births", ' ', '') AS INT) >= 1000
ORDER BY year LIMIT 1
"""
print(table.sql(query).to_pipe())
print("\n-- Verbalized:")
print(chain.verbalize())
