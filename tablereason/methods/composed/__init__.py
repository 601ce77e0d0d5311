"""Methods composed of other methods: self-consistency, Mix-SC and a table critic.

Each takes its inner method(s) by registered name and builds them through the catalog,
so composing imports no inner method; each returns one ``Prediction`` whose trace keeps
every sample's or round's run as a sub-run (``trace.runs``) beside its own steps (the
vote, the judge's verdicts). docs/strategies.md is the user's page.
"""
