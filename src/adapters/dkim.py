"""DKIM public keys for the records the simulated suites and DNS host publish.

Decisions 5 asks for real DKIM keys: each is a freshly generated RSA-2048 key pair (`k=rsa`,
the key every receiver verifies; its private half is not kept, as the simulator signs nothing).
Generating one costs ~35 ms of CPU, most of a sandbox order, so a thread makes them ahead of
need into a small pool (OpenSSL releases the GIL while it works, so that runs beside the
requests); a burst that empties the pool makes its keys inline. At exit the thread is stopped
and joined before the interpreter finalizes: a daemon thread still inside OpenSSL then aborts
the whole process.
"""

from __future__ import annotations

import atexit
import base64
import os
import threading
from collections import deque

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

KEY_BITS = 2048
POOL_SIZE = 32


def fresh_public_key() -> str:
    """A new RSA-2048 public key, base64 DER, as a DKIM record's `p=` carries it."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS).public_key()
    return base64.b64encode(key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)).decode()


class KeyPool:
    """Keys made ahead by one daemon thread, each handed out once."""

    def __init__(self, size: int = POOL_SIZE) -> None:
        self.size = size
        self._keys: deque[str] = deque()  # append and popleft are atomic
        self._wanted = threading.Event()
        self._starting = threading.Lock()
        self._filler: threading.Thread | None = None
        self._stopping = False

    def take(self) -> str:
        if self._filler is None:
            self._start()
        try:
            key = self._keys.popleft()
        except IndexError:
            key = fresh_public_key()
        self._wanted.set()
        return key

    def _start(self) -> None:
        with self._starting:
            if self._filler is None:
                self._filler = threading.Thread(target=self._fill, name="dkim-keys", daemon=True)
                self._filler.start()

    def stop(self) -> None:
        """End the filler after the key it is making (at most one key's time)."""
        self._stopping = True
        self._wanted.set()
        if self._filler is not None:
            self._filler.join(timeout=10)

    def _fill(self) -> None:
        while not self._stopping:
            while len(self._keys) < self.size and not self._stopping:
                self._keys.append(fresh_public_key())
            self._wanted.wait()
            self._wanted.clear()


_pool = KeyPool()


def _new_pool_in_child() -> None:
    # A forked child has no filler thread, and keys its parent may also hand out.
    global _pool
    _pool = KeyPool()


os.register_at_fork(after_in_child=_new_pool_in_child)
atexit.register(lambda: _pool.stop())


def dkim_record_value() -> str:
    return f"v=DKIM1; k=rsa; p={_pool.take()}"
