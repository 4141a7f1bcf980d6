"""DKIM public keys for the records the simulated suites and DNS host publish (decisions 5).

DKIM keys belong to the mailbox suite: it makes the pair and keeps the private half, the
service publishes the public half. The simulators hand out real RSA-2048 public keys (`k=rsa`)
drawn from a set of `SET_SIZE` made once per deployment and stored with its data (table
`dkim_keys` of the operational database). A key may repeat across domains; which one a domain
gets follows from its name. The selector is the domain's own (`dkim_record_name`): the
signer's prefix and a digest of the name, so no two domains share a record name pattern and a
rotated key would get a selector of its own. Generating a key costs ~35 ms of CPU, so none is made on a
request's path: the deployment's first start makes the set in a background thread (OpenSSL
releases the GIL while it works), and a request that comes before the first key is stored
waits for it. At exit that thread is stopped and joined before the interpreter finalizes: a
daemon thread still inside OpenSSL then aborts the whole process.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import threading
import zlib
from typing import Protocol

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from infra.database import Database

KEY_BITS = 2048
SET_SIZE = 4
FIRST_KEY_WAIT_SECONDS = 60.0


def fresh_public_key() -> str:
    """A new RSA-2048 public key, base64 DER, as a DKIM record's `p=` carries it."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS).public_key()
    return base64.b64encode(key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)).decode()


class KeyStorage(Protocol):
    def load(self) -> list[str]: ...
    def add(self, slot: int, key: str) -> None: ...


class StoredKeys:
    """The set in the deployment's operational database. Processes that fill it at once race
    per slot: the first key stored in a slot stays, and every process reads the set back."""

    def __init__(self, db: Database) -> None:
        self.db = db
        with db.transaction() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS dkim_keys "
                "(slot INTEGER PRIMARY KEY, public_key TEXT NOT NULL)"
            )

    def load(self) -> list[str]:
        with self.db.read() as cur:
            rows = cur.execute("SELECT public_key FROM dkim_keys ORDER BY slot").fetchall()
        return [str(row["public_key"]) for row in rows]

    def add(self, slot: int, key: str) -> None:
        self.db.statement(
            "INSERT INTO dkim_keys (slot, public_key) VALUES (?, ?) "
            "ON CONFLICT (slot) DO NOTHING",
            (slot, key),
        )


class InMemoryKeys:
    """For a process with no deployment behind it (a script calling the simulators)."""

    def __init__(self) -> None:
        self._keys: dict[int, str] = {}

    def load(self) -> list[str]:
        return [self._keys[slot] for slot in sorted(self._keys)]

    def add(self, slot: int, key: str) -> None:
        self._keys.setdefault(slot, key)


class KeySet:
    """The deployment's keys, loaded once; a background thread makes the missing ones."""

    def __init__(self, storage: KeyStorage, size: int = SET_SIZE) -> None:
        self.storage = storage
        self.size = size
        self._keys: list[str] = storage.load()[:size]
        self._ready = threading.Event()
        if self._keys:
            self._ready.set()
        self._starting = threading.Lock()
        self._filler: threading.Thread | None = None
        self._stopping = False

    @property
    def complete(self) -> bool:
        return len(self._keys) >= self.size

    def start(self) -> None:
        """Make the missing keys in the background (nothing to do once the set is complete).
        A forked child's copy of a running filler is not alive: the child starts its own."""
        with self._starting:
            if self.complete or self._stopping:
                return
            if self._filler is None or not self._filler.is_alive():
                self._filler = threading.Thread(target=self._fill, name="dkim-keys", daemon=True)
                self._filler.start()

    def pick(self, name: str) -> str:
        """The public key of `name`'s DKIM record: one of the set, chosen by the name."""
        if not self._ready.is_set():
            self.start()
            if not self._ready.wait(FIRST_KEY_WAIT_SECONDS):
                raise RuntimeError("no DKIM key was made in time")
        keys = self._keys
        return keys[zlib.crc32(name.encode()) % len(keys)]

    def stop(self) -> None:
        """End the filler after the key it is making (at most one key's time, however long a
        loaded machine makes that: a filler left inside OpenSSL at exit aborts the process)."""
        self._stopping = True
        filler = self._filler
        if filler is not None and filler.is_alive():
            filler.join()

    def _fill(self) -> None:
        while not self._stopping and not self.complete:
            self.storage.add(len(self._keys), fresh_public_key())
            self._keys = self.storage.load()[: self.size]  # another process may have filled it
            self._ready.set()


_keys = KeySet(InMemoryKeys())


def use(keys: KeySet) -> None:
    """Draw from this deployment's set from now on (the container installs it)."""
    global _keys
    previous, _keys = _keys, keys
    if previous is not keys:
        previous.stop()


def start_making_keys() -> None:
    """At the service's start: make whatever the set still lacks, in the background."""
    _keys.start()


def _stop_at_exit() -> None:
    _keys.stop()


atexit.register(_stop_at_exit)


def dkim_selector(signer: str, name: str) -> str:
    """The selector of `name`'s DKIM key: the signer's prefix (`suitea`, say) and eight hex
    digits of the name's digest, the same for the same name on every call."""
    return f"{signer}{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def dkim_record_name(signer: str, name: str) -> str:
    return f"{dkim_selector(signer, name)}._domainkey.{name}"


def dkim_record_value(name: str) -> str:
    """The TXT value of `name`'s DKIM record."""
    return f"v=DKIM1; k=rsa; p={_keys.pick(name)}"
