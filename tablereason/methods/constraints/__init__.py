"""The constraints the methods send with their decisions, built from the table and the run.

:mod:`.parts` holds the small builders every grammar here is written with;
:mod:`.sql` the grammars of SQL conditions, expressions and SELECTs over one table's
columns (the functions allowed in a row expression are read from
:mod:`tablereason.operations.row_expressions`); :mod:`.tools` those of the tool-using
methods' plans and actions, Chameleon's module lists and a program's code block.
Chain-of-Table's own decisions are in
:mod:`tablereason.methods.chain_of_table.grammars`.
"""
