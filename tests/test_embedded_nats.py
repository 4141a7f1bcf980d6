"""The embedded nats-server: every JetStream write fsynced where the binary supports it
(`sync_interval`, 2.10+), and still started by an older one."""

from __future__ import annotations

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


OLDER_SERVER = """#!/bin/sh
# nats-server 2.9 as far as the service can tell: it reports 2.9.10 and, like it, refuses a
# config naming sync_interval; anything else runs the real server.
if [ "$1" = "--version" ]; then echo "nats-server: v2.9.10"; exit 0; fi
if [ "$1" = "-c" ]; then echo 'unknown field "sync_interval"' >&2; exit 1; fi
exec {real} "$@"
"""


def test_an_older_server_still_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A nats-server before 2.10 (Debian's, say, first on PATH) is started with the flags it
    knows, not the config it would refuse."""
    older = tmp_path / "nats-server-2.9"
    older.write_text(OLDER_SERVER.format(real=find_nats_server()))
    older.chmod(0o755)
    assert not _syncs_every_write(str(older))
    monkeypatch.setattr("infra.nats_server.find_nats_server", lambda: str(older))
    nats = EmbeddedNats(tmp_path)
    nats.start()  # raises if the server exits at start
    try:
        assert not (tmp_path / "nats" / "nats-server.conf").exists()
    finally:
        nats.stop()
