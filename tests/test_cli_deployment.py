"""Which store or server the CLI acted on (one stderr line beside the one JSON object on
stdout), and its refusal to act on a store while a server of another deployment answers on the
configured gRPC port (decisions.md section 2)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
from conftest import RunningService, ServiceFactory, free_port
from grpc_support import grpc_service

from infra.deployment import ensure_deployment_id, store_label, stored_deployment_id
from infra.settings import Settings
from runtime.container import Container

CLI = [sys.executable, "-m", "cli.main"]


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=120)


def succeeded(done: subprocess.CompletedProcess[str]) -> tuple[dict[str, object], str]:
    """The one JSON object on stdout and the one line on stderr."""
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    (said,) = done.stderr.splitlines()
    return json.loads(line), said


def refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    return line


def grpc_port(service: RunningService) -> str:
    return str(service.container.settings.grpc_port)


def test_deployment_id_is_made_once_per_store(settings: Settings, tmp_path: Path) -> None:
    container = Container.build(settings)
    try:
        made = container.deployment_id
        assert made.startswith("dep_") and ensure_deployment_id(container.ops_db) == made
        assert stored_deployment_id(settings) == made
    finally:
        container.close()
    assert Container.build(settings).deployment_id == made  # (closed at exit)
    elsewhere = dataclasses.replace(settings, data_dir=tmp_path / "none", database_url=None)
    assert stored_deployment_id(elsewhere) is None and not (tmp_path / "none").exists()


def test_commands_name_the_store_they_acted_on(service_env: dict[str, str]) -> None:
    env = {**os.environ, **service_env}  # a gRPC port where nothing listens
    where = f"partner-api: acted on store {store_label(Settings.from_env(service_env))}"
    org, said = succeeded(run(env, "org", "create", "Acme"))
    assert str(org["id"]).startswith("org_") and said == where
    listed, said = succeeded(run(env, "fulfillment", "list"))
    assert listed["items"] == [] and said == where


def test_refuses_to_act_beside_another_deployments_server(
    service_factory: ServiceFactory, tmp_path: Path
) -> None:
    """A second terminal without the server's settings: its own store under ./var and its
    own operator token, which the server refuses, so nothing goes through the server."""
    service = grpc_service(service_factory)
    org = service.new_org()
    env = {**os.environ, "PARTNER_API_DATA_DIR": str(tmp_path / "terminal"), "PARTNER_API_GRPC_PORT": grpc_port(service)}
    for name in ("PARTNER_API_DATABASE_URL", "PARTNER_API_DATABASE_SCHEMA", "PARTNER_API_OPERATOR_TOKEN"):
        env.pop(name, None)
    line = refused(run(env, "key", "create", org, "--env", "test", "--preset", "full"))
    assert line.startswith(f"partner-api: refusing to act on store sqlite:{tmp_path / 'terminal'}: ")
    assert service.container.deployment_id in line and "this store: not created" in line
    assert not (tmp_path / "terminal").exists()  # no store, no secrets: nothing written
    # The same once the CLI's store exists (made while nothing listened), for any command.
    succeeded(run({**env, "PARTNER_API_GRPC_PORT": str(free_port())}, "org", "create", "Local"))
    line = refused(run(env, "fulfillment", "list"))
    assert f"this store: {stored_deployment_id(Settings.from_env(env))})" in line


def test_acts_on_the_store_beside_its_own_deployments_server(
    service_factory: ServiceFactory, service_env: dict[str, str]
) -> None:
    """The server's own store with a token it refuses: the store is the server's, so the CLI
    writes there itself, and says so."""
    service = grpc_service(service_factory)
    env = {**os.environ, **service_env, "PARTNER_API_GRPC_PORT": grpc_port(service)}
    org, said = succeeded(run({**env, "PARTNER_API_OPERATOR_TOKEN": "op_wrong"}, "org", "create", "Mine"))
    assert said == f"partner-api: acted on store {store_label(service.container.settings)}"
    assert service.container.accounts.organization(str(org["id"])).name == "Mine"
    _, said = succeeded(run(env, "org", "create", "Through"))  # the right token: the server
    assert said == f"partner-api: acted on server 127.0.0.1:{grpc_port(service)} (gRPC admin)"


def test_refuses_beside_a_grpc_server_that_cannot_say_which(tmp_path: Path) -> None:
    server = grpc.server(ThreadPoolExecutor(2))  # speaks gRPC, serves none of our services
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        env = {**os.environ, "PARTNER_API_DATA_DIR": str(tmp_path / "terminal"), "PARTNER_API_GRPC_PORT": str(port)}
        env.pop("PARTNER_API_DATABASE_URL", None)
        line = refused(run(env, "audit", "verify"))
    finally:
        server.stop(0)
    assert "does not say which deployment it serves (UNIMPLEMENTED)" in line
