from __future__ import annotations

import re

import pytest

from tablereason.errors import ConfigurationError
from tablereason.prompts.render import (
    PromptRenderError,
    render,
    template,
    template_hash,
    template_names,
)


def test_render_substitutes_every_placeholder() -> None:
    text = render("chain_of_table/shared/final_tabfact", table="T\n", group="G\n", question="Q")
    assert text.endswith("T\nG\nStatement: Q\nThe answer is:")
    assert "{{" not in text


def test_missing_variable_raises_and_names_it() -> None:
    with pytest.raises(PromptRenderError, match=r"missing variable\(s\) \['question'\]"):
        render("chain_of_table/shared/final_tabfact", table="", group="")


def test_unused_variable_raises_and_names_it() -> None:
    with pytest.raises(PromptRenderError, match=r"unused variable\(s\) \['extra'\]"):
        render("chain_of_table/shared/final_tabfact", table="", group="", question="", extra="x")


def test_unknown_template_suggests_the_closest() -> None:
    with pytest.raises(KeyError, match="did you mean 'chain_of_table/shared/final_tabfact'"):
        template("chain_of_table/shared/final_tabfat")
    assert issubclass(PromptRenderError, ConfigurationError)


def test_values_are_not_rendered_again() -> None:
    text = render("chain_of_table/shared/final_tabfact", table="{{group}}", group="", question="q")
    assert "{{group}}" in text


def test_hash_is_stable_and_distinguishes_templates() -> None:
    names = template_names("chain_of_table")
    hashes = {n: template_hash(n) for n in names}
    assert all(re.fullmatch(r"[0-9a-f]{12}", h) for h in hashes.values())
    assert len(set(hashes.values())) == len(names)
    assert template_hash(names[0]) == hashes[names[0]]


def test_one_trailing_newline_is_dropped() -> None:
    # select_column's query must end with exactly one newline, as the reference's does.
    assert template("chain_of_table/paper/select_column").endswith(":\n")
    assert not template("chain_of_table/paper/plan").endswith("\n")


def test_every_chain_of_table_template_is_listed() -> None:
    names = template_names("chain_of_table")
    assert "chain_of_table/paper/plan" in names and "chain_of_table/efficient/plan" in names
    assert all(n.startswith("chain_of_table/") for n in names)
