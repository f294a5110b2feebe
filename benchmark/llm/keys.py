"""API keys stored encrypted at rest, under a key derived from SECRET_KEY.

AES-256-GCM with a fresh 96-bit nonce per save; the key is HKDF-SHA256 of SECRET_KEY (so a copy
of the database alone decrypts nothing), and the endpoint's code is bound in as associated data,
so a ciphertext copied onto another endpoint's row does not decrypt either. A wrong SECRET_KEY
fails authentication and says so; it never yields garbage.
"""

from __future__ import annotations

import base64
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from benchmark.llm.base import ConfigurationError, Secret

VERSION = "v1"
_INFO = b"referee model endpoint api keys"


class KeyDecryptError(ConfigurationError):
    """A stored key that this server cannot decrypt (another SECRET_KEY, or an altered row)."""


def _cipher(secret_key: str | None = None) -> AESGCM:
    material = (secret_key if secret_key is not None else settings.SECRET_KEY).encode("utf-8")
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"referee-endpoint-keys", info=_INFO).derive(material)
    return AESGCM(key)


def _aad(context: str) -> bytes:
    return f"referee-endpoint:{context}".encode()


def encrypt(plaintext: str, *, context: str, secret_key: str | None = None) -> str:
    """The stored form of `plaintext`: 'v1$' + base64(nonce + ciphertext + tag)."""
    nonce = os.urandom(12)
    sealed = _cipher(secret_key).encrypt(nonce, plaintext.encode("utf-8"), _aad(context))
    return f"{VERSION}${base64.urlsafe_b64encode(nonce + sealed).decode('ascii')}"


def decrypt(stored: str, *, context: str, label: str = "this endpoint", secret_key: str | None = None) -> Secret:
    version, _, payload = stored.partition("$")
    if version != VERSION or not payload:
        raise KeyDecryptError(f"the stored key of {label} is not in a format this server reads; enter the key again")
    try:
        raw = base64.urlsafe_b64decode(payload.encode("ascii"))
        plaintext = _cipher(secret_key).decrypt(raw[:12], raw[12:], _aad(context))
    except (InvalidTag, ValueError):
        raise KeyDecryptError(
            f"the stored key of {label} cannot be decrypted with this server's SECRET_KEY: it was saved under "
            "another SECRET_KEY (or the row was altered). Enter the key again on the endpoint's page."
        ) from None
    return Secret(plaintext.decode("utf-8"))
