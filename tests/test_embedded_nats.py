"""The embedded nats-server: every JetStream write fsynced where the binary supports it
(`sync_interval`, 2.10+), and still started by an older one from PATH."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from infra.nats_server import EmbeddedNats, _syncs_every_write, find_nats_server


def test_the_installed_server_fsyncs_every_write(tmp_path: Path) -> None:
    assert _syncs_every_write(find_nats_server())
    nats = EmbeddedNats(tmp_path)
    nats.start()
    try:
        config = (tmp_path / "nats" / "nats-server.conf").read_text()
        assert "sync_interval: always" in config
    finally:
        nats.stop()


def test_an_older_server_from_path_still_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    older = shutil.which("nats-server", path="/usr/sbin:/usr/bin")
    if older is None or _syncs_every_write(older):
        pytest.skip("no nats-server older than 2.10 on this machine")
    monkeypatch.setattr("infra.nats_server.find_nats_server", lambda: older)
    nats = EmbeddedNats(tmp_path)
    nats.start()
    nats.stop()
