"""Authenticity of a predictor artifact: an HMAC-SHA256 over every artifact file.

Threat model
------------
The SHA-256 checksums inside ``predictor.json`` guard *integrity* (truncation, bit rot, a
careless edit); anyone who can write the artifact directory can recompute them. A signature
guards *authenticity*: with a secret key configured (``key=`` or the environment variable
``STRAGGLER_MODEL_KEY``), :func:`mtl.load_predictor` accepts only an artifact whose
``predictor.sig`` is an HMAC-SHA256, under that key, of the exact bytes of ``predictor.json``
and ``predictor.npz`` (names and lengths included). An attacker who can write the artifact
store but does not hold the key can therefore neither edit the weights and re-seal the
checksums, nor drop the signature, nor swap in files (or a consistent pair) from another run
signed with a different key or from an unsigned run: each is refused with
:class:`SignatureError`. What signing does not protect against: a holder of the key (it can
sign anything; HMAC is symmetric, so every verifier can also sign), replay of an older or other
artifact that was genuinely signed with the same key (use one key per deployment and pin the
artifact you expect, e.g. by its ``signature_id``), and a reader that runs without a key
(it verifies checksums only, as before). The key itself must be kept out of the artifact
store and out of logs; its short fingerprint (``key_id``) identifies it without revealing it.

HMAC-SHA256 from the standard library is used rather than Ed25519 because the project has one
party that both trains and serves, so a shared secret suffices, and it needs no extra
dependency (Ed25519 needs a cryptography library) and no key-pair management.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from pathlib import Path

KEY_ENV = "STRAGGLER_MODEL_KEY"
SIG_FILE = "predictor.sig"
ALGORITHM = "HMAC-SHA256"
MIN_KEY_BYTES = 16
MAX_SIG_BYTES = 4096
_DOMAIN = b"straggler-mtl-predictor-signature\x00v1\x00"


class SignatureError(ValueError):
    """An artifact is unsigned, mis-signed, re-sealed or swapped while a key is configured."""


def resolve_key(key: bytes | str | None) -> bytes | None:
    """The signing key: ``key`` itself, else ``$STRAGGLER_MODEL_KEY``, else ``None``.

    A ``str`` is encoded as UTF-8. A key shorter than 16 bytes is refused (``ValueError``
    naming its length; an empty environment variable counts as unset).

    Examples
    --------
    >>> resolve_key("0123456789abcdef-secret")
    b'0123456789abcdef-secret'
    """
    source = "key"
    if key is None:
        key = os.environ.get(KEY_ENV) or None
        source = KEY_ENV
        if key is None:
            return None
    raw = key.encode() if isinstance(key, str) else bytes(key)
    if len(raw) < MIN_KEY_BYTES:
        raise ValueError(
            f"{source}: a signing key must be at least {MIN_KEY_BYTES} bytes, got {len(raw)}"
        )
    return raw


def key_id(key: bytes) -> str:
    """A 16-hex-digit fingerprint of ``key`` (an HMAC of a fixed label; reveals nothing)."""
    return hmac.new(key, b"straggler-mtl key id", hashlib.sha256).hexdigest()[:16]


def artifact_mac(key: bytes, files: Mapping[str, bytes]) -> str:
    """HMAC-SHA256 (hex) of ``files`` (name -> exact bytes), in name order, each framed by its
    name and length so that no two different file sets share a message.

    Examples
    --------
    >>> k = b"k" * 16
    >>> artifact_mac(k, {"a": b"1", "b": b"2"}) == artifact_mac(k, {"b": b"2", "a": b"1"})
    True
    >>> artifact_mac(k, {"a": b"12"}) == artifact_mac(k, {"a": b"1", "": b"2"})
    False
    """
    mac = hmac.new(key, _DOMAIN, hashlib.sha256)
    for name in sorted(files):
        data = files[name]
        encoded = name.encode()
        mac.update(len(encoded).to_bytes(8, "big") + encoded)
        mac.update(len(data).to_bytes(8, "big"))
        mac.update(data)
    return mac.hexdigest()


def signature_document(key: bytes, files: Mapping[str, bytes]) -> bytes:
    """The bytes of ``predictor.sig`` for ``files`` signed with ``key``."""
    doc = {
        "algorithm": ALGORITHM,
        "files": sorted(files),
        "key_id": key_id(key),
        "mac": artifact_mac(key, files),
    }
    return json.dumps(doc, indent=1, sort_keys=True).encode()


def verify_signature(sig_path: Path, key: bytes, files: Mapping[str, bytes]) -> str:
    """Check ``sig_path`` against ``files`` under ``key``; return the MAC (the artifact's
    ``signature_id``) or raise :class:`SignatureError` naming the file and the reason."""
    if not sig_path.is_file():
        raise SignatureError(
            f"{sig_path}: artifact is unsigned, and a signing key is configured "
            f"(key= or ${KEY_ENV}); refusing to load it"
        )
    size = sig_path.stat().st_size
    if size > MAX_SIG_BYTES:
        raise SignatureError(f"{sig_path}: {size} bytes, over the {MAX_SIG_BYTES}-byte cap")
    try:
        doc = json.loads(sig_path.read_bytes())
        algorithm, names, kid, mac = doc["algorithm"], doc["files"], doc["key_id"], doc["mac"]
    except (ValueError, TypeError, KeyError) as exc:
        raise SignatureError(f"{sig_path}: unreadable signature ({exc!r})") from exc
    if algorithm != ALGORITHM:
        raise SignatureError(f"{sig_path}: algorithm {algorithm!r}, expected {ALGORITHM!r}")
    if names != sorted(files):
        raise SignatureError(f"{sig_path}: signs files {names!r}, expected {sorted(files)!r}")
    if kid != key_id(key):
        raise SignatureError(
            f"{sig_path}: signed with key {kid!r}, but the configured key is {key_id(key)!r}"
        )
    expected = artifact_mac(key, files)
    if not isinstance(mac, str) or not hmac.compare_digest(mac, expected):
        raise SignatureError(
            f"{sig_path}: signature does not match the artifact files {sorted(files)} "
            f"(edited, re-sealed or swapped)"
        )
    return expected
