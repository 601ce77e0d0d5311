"""The command-line docs stay true: the `methods` listing, and every command they show parses."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from support.taymyr import REPO

from tablereason.cli.methods_command import methods_text
from tablereason.cli.parser import build_parser

CLI_DOC = REPO / "docs" / "cli.md"
README = REPO / "README.md"


def test_the_methods_listing_in_the_docs_is_what_the_command_prints() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- methods-output -->\n```text\n(.*?)\n```\n<!-- /methods-output -->",
                      text, flags=re.S)  # fmt: skip
    assert block, "docs/cli.md has no methods-output block"
    assert block.group(1) + "\n" == methods_text(), (
        "docs/cli.md's `tablereason methods` listing is stale: paste the command's output"
    )


def _commands(path: Path) -> list[str]:
    """Every ``tablereason ...`` command in the file's shell blocks (continuations joined)."""
    text = path.read_text(encoding="utf-8")
    found = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            for part in line.split("&&"):
                part = part.split("  #")[0].strip()
                if part.startswith("tablereason "):
                    found.append(part)
    return found


@pytest.mark.parametrize("doc", [README, CLI_DOC], ids=["README", "cli.md"])
def test_every_command_in_the_docs_parses(doc: Path) -> None:
    commands = _commands(doc)
    assert len(commands) >= 5
    parser = build_parser()
    for command in commands:
        argv = shlex.split(command)[1:]
        try:
            parser.parse_args(argv)
        except SystemExit as error:  # argparse's way of refusing
            pytest.fail(f"{doc.name}: `{command}` does not parse ({error})")
