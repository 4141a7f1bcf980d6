"""DKIM keys (decisions 5, `adapters/dkim.py`): real RSA-2048 public keys drawn from a set made
once per deployment and stored with its data, none made on a request's path; and a process that
made one exits cleanly (its filler thread was once killed inside OpenSSL at exit, aborting the
process with 134)."""

from __future__ import annotations

import base64
import os
import re
import subprocess
import sys
import time

import pytest
from conftest import RunningService
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import load_der_public_key
from test_orders_sandbox import counts, new_workspace, placed

from adapters import dkim
from infra.settings import Settings
from runtime.container import Container

TAKE_ONE_AND_EXIT = "from adapters.dkim import dkim_record_value; dkim_record_value('a.com')"


def _rsa_2048(key: str) -> RSAPublicKey:
    public = load_der_public_key(base64.b64decode(key))
    assert isinstance(public, RSAPublicKey) and public.key_size == 2048
    assert public.public_numbers().e == 65537
    return public


def _wait_complete(keys: dkim.KeySet) -> None:
    keys.start()
    deadline = time.monotonic() + 60
    while not keys.complete:
        assert time.monotonic() < deadline, "the key set was never completed"
        time.sleep(0.05)


def _no_key_made(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> str:
        raise AssertionError("a DKIM key was generated")

    monkeypatch.setattr(dkim, "fresh_public_key", refuse)


def test_a_process_that_made_a_key_exits_cleanly() -> None:
    """Before the fix about one such process in six aborted: 24 at once all exit 0."""
    env = {**os.environ, "PYTHONPATH": "src"}
    processes = [subprocess.Popen([sys.executable, "-c", TAKE_ONE_AND_EXIT], env=env)
                 for _ in range(24)]
    assert [p.wait(timeout=300) for p in processes] == [0] * 24


def test_the_set_is_made_once_per_deployment_and_kept_with_its_data(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = Container.build(settings)
    try:
        _wait_complete(first.dkim_keys)
        made = first.dkim_keys.storage.load()
    finally:
        first.close()
    assert len(made) == dkim.SET_SIZE and len(set(made)) == dkim.SET_SIZE
    for key in made:
        _rsa_2048(key)

    _no_key_made(monkeypatch)  # a restart finds the set and makes nothing
    again = Container.build(settings)
    try:
        assert again.dkim_keys.complete
        assert again.dkim_keys.storage.load() == made
        again.dkim_keys.start()
        assert dkim.dkim_record_value("x.com") == dkim.dkim_record_value("x.com")
        values = {dkim.dkim_record_value(f"n{i}.com") for i in range(64)}
    finally:
        again.close()
    # Keys repeat across domains, all from the set, more than one of it in use.
    assert {v.removeprefix("v=DKIM1; k=rsa; p=") for v in values} <= set(made)
    assert len(values) > 1


def test_a_request_before_the_first_key_waits_for_the_set_to_have_one() -> None:
    keys = dkim.KeySet(dkim.InMemoryKeys(), size=2)
    try:
        key = keys.pick("a.com")  # starts the filler and waits for its first key
        _rsa_2048(key)
        _wait_complete(keys)
        assert keys.pick("a.com") in keys.storage.load()
    finally:
        keys.stop()


def test_orders_publish_keys_of_the_set_and_make_none(
    service: RunningService, monkeypatch: pytest.MonkeyPatch
) -> None:
    _wait_complete(service.container.dkim_keys)
    stored = set(service.container.dkim_keys.storage.load())
    _no_key_made(monkeypatch)
    with service.partner() as client:
        domains = placed(client, counts(new_workspace(client), a=3, b=1))["domains"]
    assert len(domains) == 4
    for domain in domains:
        (record,) = [r for r in domain["dns_records"] if r["value"].startswith("v=DKIM1")]
        assert record["name"].endswith("._domainkey." + domain["domain"])
        assert record["value"].removeprefix("v=DKIM1; k=rsa; p=") in stored



def test_each_domain_has_a_selector_of_its_own(service: RunningService) -> None:
    with service.partner() as client:
        domains = placed(client, counts(new_workspace(client), a=3, b=1))["domains"]
    selectors = set()
    for domain in domains:
        (record,) = [r for r in domain["dns_records"] if r["value"].startswith("v=DKIM1")]
        selector, _, rest = record["name"].partition("._domainkey.")
        assert rest == domain["domain"] and re.fullmatch(r"suite[ab][0-9a-f]{8}", selector)
        selectors.add(selector)
    assert len(selectors) == len(domains)
