"""The embedded secret key, made by whichever of several processes starting together gets
there first: every one reads the same whole secret, and no draft is left behind."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path

from infra.settings import _secret_file


def test_processes_starting_together_share_one_secret(tmp_path: Path) -> None:
    for attempt in range(10):
        data_dir = tmp_path / str(attempt)
        with concurrent.futures.ProcessPoolExecutor(8) as pool:
            secrets = set(pool.map(_secret_file, [data_dir] * 16, ["secret.key"] * 16))
        assert len(secrets) == 1 and len(secrets.pop()) == 64
        assert [p.name for p in data_dir.iterdir()] == ["secret.key"]
