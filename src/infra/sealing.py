"""Encryption at rest for secrets that must be used again (provider credentials, webhook secrets).

AES-256-GCM with a key derived from the service secret; the plain value never reaches an event.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


class Sealer:
    def __init__(self, secret_key: str) -> None:
        self._aead = AESGCM(hashlib.sha256(("seal:" + secret_key).encode()).digest())

    def seal(self, value: Any) -> str:
        nonce = os.urandom(12)
        sealed = self._aead.encrypt(nonce, json.dumps(value).encode(), None)
        return "sealed:v1:" + base64.urlsafe_b64encode(nonce + sealed).decode()

    def unseal(self, token: str) -> Any:
        raw = base64.urlsafe_b64decode(token.removeprefix("sealed:v1:"))
        return json.loads(self._aead.decrypt(raw[:12], raw[12:], None))
