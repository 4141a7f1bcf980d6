"""DKIM public keys for the records the simulated suites and DNS host publish.

Decisions 5 asks for real DKIM keys. A real RSA-2048 key takes ~35 ms of CPU to generate, which
would be most of a sandbox order's cost, and the simulator throws the private half away in any
case. So each key's modulus is the product of two distinct 1024-bit primes drawn from a fixed set
(`dkim_primes.py`): a genuine RSA-2048 public key (`k=rsa`, DER SubjectPublicKeyInfo, e = 65537),
built in microseconds. The pairs are dealt in a shuffled order, so a process gives 276 distinct
keys before one repeats. Nothing is ever signed with it.
"""

from __future__ import annotations

import base64
import itertools
import random
import threading
from collections.abc import Iterator

from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicNumbers
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from adapters.dkim_primes import PRIMES

PUBLIC_EXPONENT = 65537


def _dealt_pairs() -> Iterator[tuple[int, int]]:
    pairs = list(itertools.combinations(PRIMES, 2))
    while True:
        random.shuffle(pairs)
        yield from pairs


_pairs = _dealt_pairs()
_dealing = threading.Lock()  # a generator is not safe to advance from two threads at once


def dkim_public_key() -> str:
    """A base64 RSA-2048 public key, as a DKIM record's `p=` carries it."""
    with _dealing:
        p, q = next(_pairs)
    key = RSAPublicNumbers(PUBLIC_EXPONENT, p * q).public_key()
    return base64.b64encode(key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)).decode()


def dkim_record_value() -> str:
    return f"v=DKIM1; k=rsa; p={dkim_public_key()}"
