"""`partner-api`: the operator CLI (decisions.md section 2). One JSON object per command on
stdout; on stderr, one line naming the store or server it acted on, or the one-line error."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from cli.help import FORMAT, add_command, add_group, examples
from domain.errors import DomainError
from gateway.grpc.client import AnotherDeployment, check_same_deployment, run_remote, target_of
from infra.deployment import store_label
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


ABOUT = """Every command prints one JSON object on stdout and one line on stderr naming the
store or server it acted on; a failure is one line on stderr and a non-zero exit. While a
server answers on PARTNER_API_GRPC_PORT with our operator token, org, key, wallet and webhook
set go through its gRPC AdminService; every other way the command acts on the configured store,
and refuses to while a server of another deployment answers on that port."""


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="partner-api",
        description="The Partner Provisioning API's operator CLI.\n\n" + ABOUT,
        epilog=examples(
            "partner-api org create Acme",
            "partner-api key create org_... --env test --preset full",
            "partner-api org --help",
        ),
        formatter_class=FORMAT,
    )
    groups = parser.add_subparsers(dest="group", required=True, metavar="COMMAND")
    _add_serve(groups)
    _add_org(groups)
    _add_key(groups)
    for extend in EXTENSIONS:
        extend(groups)
    return parser


def _add_serve(groups: Any) -> None:
    serve = add_command(
        groups,
        "serve",
        "run the service (REST gateway, gRPC and background roles)",
        "partner-api serve",
        "partner-api serve --role gateway --workers 4",
        "partner-api serve --role grpc --role projections",
    )
    serve.add_argument(
        "--role",
        action="append",
        dest="roles",
        default=None,
        metavar="ROLE",
        help="run only this role (repeatable): gateway (REST), grpc, projections, publisher, "
        "dispatcher, worker, domains, pool, swaps, audit, or all (the default)",
    )
    serve.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        help="gateway processes (default: 1); above 1, each background role also runs in a "
        "process of its own",
    )


def _rate_options(parser: argparse.ArgumentParser) -> None:
    # A flag left out means the default allowance's value (none: back to the defaults).
    parser.add_argument(
        "--rate-rps", type=float, default=None, help="requests per second (default: the service's)"
    )
    parser.add_argument(
        "--rate-burst",
        type=int,
        default=None,
        help="burst size in requests (default: the service's)",
    )


def _add_org(groups: Any) -> None:
    org = add_group(
        groups, "org", "partner organizations and their rate limits", "partner-api org create Acme"
    )
    create = add_command(
        org,
        "create",
        "create an organization",
        "partner-api org create Acme",
        "partner-api org create Acme --rate-rps 20 --rate-burst 100",
    )
    create.add_argument("name", help="the organization's name")
    _rate_options(create)
    rate = add_command(
        org,
        "rate-limit",
        "set a custom allowance; without flags, back to the defaults",
        "partner-api org rate-limit org_... --rate-rps 5 --rate-burst 50",
    )
    rate.add_argument("org_id", help="org_... id")
    _rate_options(rate)


def _add_key(groups: Any) -> None:
    key = add_group(
        groups,
        "key",
        "API keys: create, rotate and revoke",
        "partner-api key create org_... --env test --preset full",
    )
    key_new = add_command(
        key,
        "create",
        "issue a key; its secret is printed once",
        "partner-api key create org_... --env live --preset read",
    )
    key_new.add_argument("org_id", help="org_... id")
    key_new.add_argument(
        "--env", choices=["test", "live"], required=True, help="sandbox (test) or live"
    )
    key_new.add_argument(
        "--preset",
        choices=["full", "limited", "read"],
        required=True,
        help="writes it may make: full (all), limited (availability, quotes and name "
        "generation only) or read (none); every preset reads everything",
    )
    revoke = add_command(key, "revoke", "revoke a key at once", "partner-api key revoke key_...")
    revoke.add_argument("key_id", help="key_... id")
    rotate = add_command(
        key,
        "rotate",
        "issue a replacement (same env and preset); the old key works until revoked",
        "partner-api key rotate key_...",
    )
    rotate.add_argument("key_id", help="key_... id of the key to replace")


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
    except AnotherDeployment as exc:
        print(f"partner-api: {exc}", file=sys.stderr)
        return 1
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


def _acted_on(where: str) -> None:
    print(f"partner-api: {where}", file=sys.stderr, flush=True)


def _run(handler: Command, args: argparse.Namespace) -> dict[str, Any]:
    # Nothing written before the checks: a refused command leaves the data dir as it was.
    settings = Settings.from_env(create_secrets=False)
    remote = run_remote(settings, args)
    if remote is not None:
        _acted_on(f"acted on server {target_of(settings)} (gRPC admin)")
        return remote
    check_same_deployment(settings)
    settings = Settings.from_env()  # this store it is: its secrets are made on first use
    container = Container.build(settings)
    acted = f"acted on store {store_label(settings)}"
    try:
        result = handler(args, container)
    except SystemExit:  # the audit commands that print their own output end here
        _acted_on(acted)
        raise
    finally:
        container.close()
    _acted_on(acted)
    return result


if __name__ == "__main__":
    # Run as `python -m cli.main` this file is __main__, but capabilities register their
    # commands with the module cli.main: use that one.
    from cli.main import main as registered_main

    sys.exit(registered_main())
