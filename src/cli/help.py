"""`--help` for every command: a summary, the options each with its own line, and examples
an operator can copy (argparse epilog, kept as written)."""

from __future__ import annotations

import argparse
from typing import Any

FORMAT = argparse.RawDescriptionHelpFormatter


def examples(*lines: str) -> str:
    return (
        "example"
        + ("s" if len(lines) > 1 else "")
        + ":\n"
        + "\n".join(f"  {line}" for line in lines)
    )


def add_command(actions: Any, name: str, summary: str, *example: str) -> argparse.ArgumentParser:
    """A command (or a group of them) with its summary in the parent's list and its own help."""
    parser: argparse.ArgumentParser = actions.add_parser(
        name, help=summary, description=summary, epilog=examples(*example), formatter_class=FORMAT
    )
    return parser


def add_group(groups: Any, name: str, summary: str, *example: str) -> Any:
    """A group (`org`, `key`, ...) whose commands are added to what this returns."""
    group = add_command(groups, name, summary, *example)
    return group.add_subparsers(dest="action", required=True, metavar="COMMAND")
