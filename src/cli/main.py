"""`partner-api`: the operator CLI (decisions.md section 2). One JSON object per command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from domain.errors import DomainError
from gateway.grpc.client import run_remote
from infra.settings import Settings
from runtime.container import Container

Command = Callable[[argparse.Namespace, Container], dict[str, Any]]
COMMANDS: dict[tuple[str, ...], Command] = {}


def command(*path: str) -> Callable[[Command], Command]:
    def register(func: Command) -> Command:
        COMMANDS[path] = func
        return func

    return register


@command("org", "create")
def org_create(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    return c.accounts.create_organization(args.name, args.rate_rps, args.rate_burst)


@command("org", "rate-limit")
def org_rate_limit(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    return c.accounts.set_rate_limit(args.org_id, args.rate_rps, args.rate_burst)


@command("key", "create")
def key_create(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    issued = c.accounts.create_key(args.org_id, args.env, args.preset)
    return {
        "id": issued.id,
        "secret": issued.secret,
        "org_id": issued.org_id,
        "environment": issued.environment,
        "preset": issued.preset,
    }


@command("key", "rotate")
def key_rotate(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    issued = c.accounts.rotate_key(args.key_id)
    return {"id": issued.id, "secret": issued.secret, "replaces": args.key_id}


@command("key", "revoke")
def key_revoke(args: argparse.Namespace, c: Container) -> dict[str, Any]:
    return c.accounts.revoke_key(args.key_id)


class OneLineErrorParser(argparse.ArgumentParser):
    """Usage mistakes end like every other failure (decisions.md section 2): exit 2 with one
    line on stderr, not argparse's usage block. Sub-command parsers inherit this class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message.splitlines()[0]} (see --help)\n")


def positive_int(text: str) -> int:
    number = int(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog="partner-api", description=__doc__)
    groups = parser.add_subparsers(dest="group", required=True)

    serve = groups.add_parser("serve", help="run the service")
    serve.add_argument("--role", action="append", dest="roles", default=None)
    serve.add_argument("--workers", type=positive_int, default=1)

    org = groups.add_parser("org").add_subparsers(dest="action", required=True)
    create = org.add_parser("create")
    create.add_argument("name")
    create.add_argument("--rate-rps", type=float, default=None)
    create.add_argument("--rate-burst", type=int, default=None)
    rate = org.add_parser("rate-limit")
    rate.add_argument("org_id")
    # A flag left out means the default allowance's value (none: back to the defaults).
    rate.add_argument("--rate-rps", type=float, default=None)
    rate.add_argument("--rate-burst", type=int, default=None)

    key = groups.add_parser("key").add_subparsers(dest="action", required=True)
    key_new = key.add_parser("create")
    key_new.add_argument("org_id")
    key_new.add_argument("--env", choices=["test", "live"], required=True)
    key_new.add_argument("--preset", choices=["full", "limited", "read"], required=True)
    key.add_parser("revoke").add_argument("key_id")
    key.add_parser("rotate").add_argument("key_id")

    for extend in EXTENSIONS:
        extend(groups)
    return parser


# Capabilities add their own sub-commands (wallet, webhook, audit) through these hooks.
EXTENSIONS: list[Callable[[Any], None]] = []


def _load_extensions() -> None:
    import cli.extensions  # noqa: F401  (registers EXTENSIONS and COMMANDS)


def main(argv: list[str] | None = None) -> int:
    _load_extensions()
    args = build_parser().parse_args(argv)
    if args.group == "serve":
        from runtime.serve import serve

        try:
            serve(args.roles, args.workers)
        except Exception as exc:  # a store or NATS it cannot reach: one line, as every command
            print(f"partner-api serve: {_one_line(exc)}", file=sys.stderr)
            return 1
        return 0
    handler = COMMANDS.get((args.group, args.action))
    if handler is None:
        print(f"partner-api: unknown command {args.group} {args.action}", file=sys.stderr)
        return 2
    try:
        result = _run(handler, args)
    except DomainError as exc:
        print(f"partner-api: {exc.code}: {exc.message}", file=sys.stderr)
        return 1
    except Exception as exc:  # any other failure (store unreachable...) is one line too
        print(f"partner-api: internal_error: {_one_line(exc)}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


def _one_line(exc: Exception) -> str:
    detail = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {detail}"


def _run(handler: Command, args: argparse.Namespace) -> dict[str, Any]:
    settings = Settings.from_env()
    remote = run_remote(settings, args)
    if remote is not None:
        return remote
    container = Container.build(settings)
    try:
        return handler(args, container)
    finally:
        container.close()


if __name__ == "__main__":
    # Run as `python -m cli.main` this file is __main__, but capabilities register their
    # commands with the module cli.main: use that one.
    from cli.main import main as registered_main

    sys.exit(registered_main())
