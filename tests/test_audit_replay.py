"""`audit replay`: every read model rebuilt from the history and compared table by table;
`audit export`: one organization's history as JSON lines."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from audit_support import build_history
from conftest import PATIENCE, RunningService

from audit.export import export_organization
from audit.replay import SCRATCH_PREFIX, fresh_database, replay
from infra.settings import Settings

CLI = [sys.executable, "-m", "cli.main"]


def test_replay_of_a_history_with_every_kind_of_event_is_identical(service: RunningService) -> None:
    build_history(service)
    c = service.container
    report = replay(c.settings, c.store, c.read_models)
    assert report.identical, report.as_json()
    assert report.position == c.store.recorder.max_notification_id() == report.events
    compared = {t.table: t for t in report.tables}
    assert set(compared) == set(c.read_models.tables())
    assert compared["api_keys"].live_rows == compared["api_keys"].replayed_rows == 4
    assert compared["webhook_events"].live_rows > 0


def test_replay_while_the_service_keeps_writing_is_identical(service: RunningService) -> None:
    """An auditor replays a busy service: the live read models are read in one snapshot with
    the position they hold, so rows committed during the comparison do not show as drift."""
    build_history(service)
    c = service.container
    stop = threading.Event()

    def keep_writing() -> None:
        with service.partner() as client:
            while not stop.is_set():
                client.post("/bundles", json={
                    "name": "Busy", "monthly_sending_volume": 10000, "send_on_weekends": False,
                })

    def head() -> int:
        return c.store.recorder.max_notification_id() or 0

    writer = threading.Thread(target=keep_writing)
    writer.start()
    reports = []
    try:
        for _ in range(3):
            seen = reports[-1].position if reports else head()
            deadline = time.monotonic() + PATIENCE
            while head() <= seen + 2 and time.monotonic() < deadline:  # writes under way
                time.sleep(0.02)
            reports.append(replay(c.settings, c.store, c.read_models))
    finally:
        stop.set()
        writer.join()
    for report in reports:
        assert report.identical, report.as_json()
    assert reports[0].position < reports[1].position < reports[2].position


def test_replay_reports_a_drifted_live_row(service: RunningService) -> None:
    ids = build_history(service)
    c = service.container
    with c.read_db.transaction() as cur:
        cur.execute("UPDATE api_keys SET preset = 'full' WHERE id = ?", (ids["key_id"],))
    report = replay(c.settings, c.store, c.read_models).as_json()
    assert not report["identical"]
    (drifted,) = [t for t in report["tables"] if not t["identical"]]
    assert drifted["table"] == "api_keys" and drifted["differing_rows"] == 2
    assert json.loads(drifted["only_live"][0])["preset"] == "full"
    assert json.loads(drifted["only_replayed"][0])["preset"] == "read"


def test_export_writes_only_that_organizations_history(service: RunningService) -> None:
    ids = build_history(service)
    out = io.StringIO()
    count = export_organization(service.container.store, ids["org_id"], out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert count == len(lines) > 5
    assert {line["org_id"] for line in lines} == {ids["org_id"]}
    positions = [line["position"] for line in lines]
    assert positions == sorted(positions)
    types = {line["type"] for line in lines}
    assert {"Organization.Created", "Organization.RateLimitChanged", "ApiKey.Issued", "ApiKey.Revoked"} <= types
    issued = next(line for line in lines if line["type"] == "ApiKey.Issued")
    assert issued["data"]["secret_hash"] == "[redacted]" and issued["version"] == 1
    assert issued["timestamp"].endswith("Z")


def test_audit_commands(service: RunningService, service_env: dict[str, str], tmp_path: Path) -> None:
    ids = build_history(service)
    env = {**os.environ, **service_env, "PARTNER_API_GRPC_PORT": "1"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, "audit", *args], env=env, capture_output=True, text=True, timeout=120)

    done = cli("replay")
    assert done.returncode == 0, done.stdout
    assert "replay [" in done.stderr and "100.0%" in done.stderr
    assert len(done.stdout.splitlines()) == 1 and json.loads(done.stdout)["identical"] is True
    # The CLI runs no other thread (a PostgreSQL pool's aside): its first pass forks.
    assert json.loads(done.stdout)["processes"] == 2

    verified = cli("verify")
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout)["intact"] is True

    target = tmp_path / "history.jsonl"
    exported = cli("export", "--org", ids["org_id"], "--output", str(target))
    assert exported.returncode == 0, exported.stderr
    summary = json.loads(exported.stdout)
    assert summary["events"] == len(target.read_text().splitlines()) > 5
    streamed = cli("export", "--org", ids["org_id"])
    assert streamed.stdout == target.read_text()
    assert cli("export", "--org", "org_nope").stderr.startswith("partner-api: not_found")
    nowhere = cli("export", "--org", ids["org_id"], "--output", str(tmp_path / "no" / "x"))
    assert nowhere.returncode == 1 and nowhere.stdout == ""
    assert nowhere.stderr.startswith("partner-api: invalid_request: cannot write")


def test_replay_with_no_service_covers_what_the_cli_stored(service_env: dict[str, str]) -> None:
    """decisions 2: `audit replay` rebuilds every read model from the event history, also
    events stored by CLI commands while no service (no projections) ran."""
    env = {**os.environ, **service_env, "PARTNER_API_GRPC_PORT": "1"}

    def cli(*args: str) -> dict[str, object]:
        done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    org = cli("org", "create", "Offline")
    cli("key", "create", str(org["id"]), "--env", "test", "--preset", "full")
    cli("wallet", "credit", str(org["id"]), "500")
    report = cli("audit", "replay")
    assert report["identical"] is True and int(str(report["events"])) >= 3


def test_a_replay_splits_its_read_models_by_weight() -> None:
    from audit.forked_replay import split
    from runtime.bootstrap import all_read_models

    models = all_read_models()
    groups = split(models)
    assert len(groups) == 2 and sorted(map(id, groups[0] + groups[1])) == sorted(map(id, models))
    loads = [sum(m.replay_weight for m in group) for group in groups]
    assert abs(loads[0] - loads[1]) <= max(m.replay_weight for m in models)


def test_a_process_running_other_threads_replays_in_itself(service: RunningService) -> None:
    from audit.forked_replay import can_fork
    from audit.replay import fresh_database

    with fresh_database(service.container.settings) as target:
        assert not can_fork(target)  # the service's threads run here
    report = replay(service.container.settings, service.container.store, service.container.read_models)
    assert report.processes == 1 and report.identical


def test_a_replay_removes_the_scratch_of_a_killed_replay(settings: Settings) -> None:
    """A replay killed mid-way leaves its scratch store (tens of MB); the next one removes it,
    but never the scratch of a replay still running."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    tmp = Path(tempfile.gettempdir())
    abandoned = tmp / f"{SCRATCH_PREFIX}{int(gone.stdout)}-test"
    running = tmp / f"{SCRATCH_PREFIX}{os.getpid()}-test"
    for path in (abandoned, running):
        path.mkdir(exist_ok=True)
        (path / "replay.sqlite").write_bytes(b"x")
    an_hour_ago = time.time() - 3600  # the killed replay's last write
    os.utime(abandoned / "replay.sqlite", (an_hour_ago, an_hour_ago))
    os.utime(running / "replay.sqlite", (an_hour_ago, an_hour_ago))  # its process lives
    try:
        with fresh_database(settings) as scratch:
            assert scratch.path.parent.name.startswith(f"{SCRATCH_PREFIX}{os.getpid()}-")
        assert not abandoned.exists()
        assert running.exists()
    finally:
        shutil.rmtree(running, ignore_errors=True)
        shutil.rmtree(abandoned, ignore_errors=True)
