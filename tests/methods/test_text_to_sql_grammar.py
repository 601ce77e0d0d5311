"""Text-to-SQL's grammar over typed columns, and no grammar for several tables."""

from __future__ import annotations

from tablereason.llm import Capabilities, ScriptedLLM, satisfies
from tablereason.methods.baselines.text_to_sql import TextToSQL
from tablereason.table import Table
from tablereason.table.named import TableSet


class Enforcing(ScriptedLLM):
    """A scripted model that claims to enforce grammars."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(constraints=frozenset({"grammar"}), after=True)


def people() -> Table:
    rows = [["ann", "31", "1.5", "true"], ["bob", "", "2.25", "false"], ["cy", "7", "", "true"]]
    return Table.from_records(["name", "age", "score", "member"], rows)


def test_integer_and_decimal_columns_are_compared_as_numbers() -> None:
    table = people()
    types = {"name": "text", "age": "integer", "score": "decimal", "member": "boolean"}
    assert table.types == types
    llm = Enforcing(replies=[' "name" FROM t WHERE TRY_CAST("age" AS DOUBLE) > 10'])
    pred = TextToSQL(llm).run(table, "who is over ten?")
    assert pred.answer == ["ann"]
    grammar = llm.requests[0].constraint
    assert grammar is not None
    for column in ("age", "score"):  # each a number: compared through TRY_CAST
        assert satisfies(grammar, f' "name" FROM t WHERE TRY_CAST("{column}" AS DOUBLE) > 1')
        assert not satisfies(grammar, f' "name" FROM t WHERE "{column}" = \'x\'')
    assert satisfies(grammar, ' "name" FROM t WHERE "member" = \'true\'')


def test_several_tables_are_asked_without_a_grammar() -> None:
    tables = TableSet({"people": people(), "clubs": Table.from_records(["club"], [["chess"]])})
    llm = Enforcing(replies=[' "club" FROM clubs'])
    pred = TextToSQL(llm).run(tables, "which club?")
    assert llm.requests[0].constraint is None
    assert pred.answer == ["chess"]
