"""`partner-api --help`: every command and group has a summary and an example, every option
and argument says what it is for."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator

from cli.main import _load_extensions, build_parser

CLI = [sys.executable, "-m", "cli.main"]


def _commands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            listed = {choice.dest for choice in action._choices_actions}
            assert listed == set(action.choices), f"{parser.prog}: a command without a summary"
            for child in action.choices.values():
                yield from _commands(child)


def test_every_command_and_option_has_help_and_an_example() -> None:
    _load_extensions()
    parsers = list(_commands(build_parser()))
    names = {p.prog for p in parsers}
    for group in ("org", "key", "webhook", "fulfillment", "wallet", "audit", "serve"):
        assert f"partner-api {group}" in names
    assert "partner-api key create" in names and "partner-api fulfillment report" in names
    for parser in parsers:
        assert parser.description, f"{parser.prog}: no description"
        assert parser.epilog and "partner-api " in parser.epilog, f"{parser.prog}: no example"
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                assert action.help, f"{parser.prog} {action.dest}: no help"


def test_help_prints_the_commands_and_examples() -> None:
    top = subprocess.run([*CLI, "--help"], capture_output=True, text=True, timeout=60)
    assert top.returncode == 0
    for group in ("org", "key", "webhook", "fulfillment", "wallet", "audit", "serve"):
        assert f"\n    {group}" in top.stdout
    create = subprocess.run([*CLI, "key", "create", "--help"], capture_output=True, text=True, timeout=60)
    assert create.returncode == 0
    assert "--preset {full,limited,read}" in create.stdout and "example:" in create.stdout
    assert "partner-api key create org_... --env" in create.stdout


def test_the_preset_help_lists_what_a_limited_key_may_call() -> None:
    """Spec 5: a `limited` key may check availability, ask for quotes and generate names."""
    _load_extensions()
    create = next(p for p in _commands(build_parser()) if p.prog == "partner-api key create")
    preset = next(a for a in create._actions if a.dest == "preset")
    assert preset.help is not None
    assert all(word in preset.help for word in ("availability", "quotes", "generation"))
