"""Signed shared indexes: `index --output team.db --sign-key KEY` and the pins of `global_index`.

The signature sits beside the index, in ``team.db.sig`` (JSON): an ed25519 signature over the
SHA-256 of the whole file, so every table (FTS shadow tables included) is covered and the index
itself stays a pure function of its sources. Signing and checking a signature need the optional
``cryptography`` package (engram's ``sign`` extra); pinning a digest needs nothing.

On the read path a pinned ``global_index`` is hashed on every call (one pass over the file); the
signature itself is checked once per file digest and remembered in state.db, so ``cryptography``
is imported only when the shared file changed. Stdlib only at import.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3

from .index import IndexFileError
from .paths import read_bytes, sha256_file, write_atomic
from .userkey import keyed

SIGNATURE_SUFFIX = ".sig"
SIGNATURE_FORMAT = "engram-index-signature-1"
SIGNED_CONTEXT = b"engram index signature v1\0"  # so the key signs nothing else by accident
MAX_KEY_BYTES = 64 * 1024
MAX_SIGNATURE_BYTES = 64 * 1024
# Not `pip install 'engram[sign]'`: that would fetch the unrelated `engram` of PyPI (as `cli.MCP_SDK`)
INSTALL_HINT = (
    "install engram again with its signing extra, from your clone: e.g. pipx install --force './engram[sign]'"
)


class Pin:
    """What config trusts for `global_index`: an ed25519 public key (base64 of its 32 bytes),
    a SHA-256 of the file, or both; neither means unsigned files are used as they are."""

    def __init__(self, key: str | None = None, sha256: str | None = None) -> None:
        self.key = key
        self.sha256 = sha256

    def __bool__(self) -> bool:
        return bool(self.key or self.sha256)


def signature_path(index_path: str) -> str:
    return index_path + SIGNATURE_SUFFIX


def _signed_message(digest: str) -> bytes:
    return SIGNED_CONTEXT + digest.encode("ascii")


def signing_key(key_path: str):
    """The ed25519 private key of a key file (PEM or OpenSSH), read before anything is written: a
    key that cannot sign must not leave a signed file replaced by an unsigned one."""
    crypto = _cryptography()
    data = read_bytes(key_path, MAX_KEY_BYTES)
    try:
        if data.lstrip().startswith(b"-----BEGIN OPENSSH"):
            key = crypto.serialization.load_ssh_private_key(data, None)
        else:
            key = crypto.serialization.load_pem_private_key(data, None)
    except (ValueError, TypeError, crypto.UnsupportedAlgorithm):
        raise IndexFileError(f"{key_path}: not an unencrypted ed25519 private key (PEM or OpenSSH)") from None
    if not isinstance(key, crypto.Ed25519PrivateKey):
        raise IndexFileError(f"{key_path}: the key is not an ed25519 key")
    return key


def sign_index(index_path: str, key) -> str:
    """Write ``<index>.sig`` with a `signing_key`; returns the public key."""
    import base64  # signing and checking only: `load` on a remembered file never needs it

    crypto = _cryptography()
    digest = sha256_file(index_path)
    public = key.public_key().public_bytes(crypto.serialization.Encoding.Raw, crypto.serialization.PublicFormat.Raw)
    record = {
        "format": SIGNATURE_FORMAT,
        "sha256": digest,
        "public_key": base64.b64encode(public).decode("ascii"),
        "signature": base64.b64encode(key.sign(_signed_message(digest))).decode("ascii"),
    }
    write_atomic(signature_path(index_path), json.dumps(record, indent=2) + "\n")
    return record["public_key"]


def read_signature(index_path: str) -> dict[str, str] | None:
    """The signature record beside an index; None when there is none; IndexFileError when bad."""
    path = signature_path(index_path)
    try:
        record = json.loads(read_bytes(path, MAX_SIGNATURE_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        raise IndexFileError(f"{path}: not an engram signature file") from None
    fields = ("format", "sha256", "public_key", "signature")
    if not isinstance(record, dict) or not all(isinstance(record.get(f), str) for f in fields):
        raise IndexFileError(f"{path}: not an engram signature file")
    if record["format"] != SIGNATURE_FORMAT:
        raise IndexFileError(f"{path}: unknown signature format")
    return record


def check_signature(index_path: str, digest: str, pinned_key: str | None) -> str:
    """Check the signature beside the index (file digest ``digest``); returns the signing key.

    Raises IndexFileError naming what is wrong: no signature, another key than the pinned one,
    a file changed since it was signed, a signature that does not verify."""
    record = read_signature(index_path)
    if record is None:
        raise IndexFileError(f"{index_path}: not signed (no {os.path.basename(signature_path(index_path))})")
    if pinned_key is not None and record["public_key"] != pinned_key:
        raise IndexFileError(f"{index_path}: signed by another key than the pinned one")
    if record["sha256"] != digest:
        raise IndexFileError(f"{index_path}: changed since it was signed")
    import base64
    import binascii

    crypto = _cryptography()
    try:
        public = crypto.Ed25519PublicKey.from_public_bytes(base64.b64decode(record["public_key"], validate=True))
        public.verify(base64.b64decode(record["signature"], validate=True), _signed_message(digest))
    except (ValueError, binascii.Error, crypto.InvalidSignature):
        raise IndexFileError(f"{index_path}: the signature does not verify") from None
    return record["public_key"]


def check_pinned(index_path: str, pin: Pin, state: sqlite3.Connection | None) -> None:
    """Refuse (IndexFileError) a shared index that does not match what config pins."""
    try:
        digest = sha256_file(index_path)
    except OSError as exc:
        raise IndexFileError(f"{index_path}: cannot read index ({exc.strerror or exc})") from None
    if pin.sha256 is not None and digest != pin.sha256:
        raise IndexFileError(f"{index_path}: its SHA-256 is not the pinned global_index_sha256")
    if pin.key is None:
        return
    # a verdict holds for this file with this signature: one removed or replaced since is checked
    # again, as a fresh clone (CI) would check it
    signed = keyed(f"{digest} {_signature_digest(index_path)}")  # this user's own check only
    if _remembered(state, signed, pin.key):
        return
    check_signature(index_path, digest, pin.key)
    _remember(state, signed, pin.key)


def _signature_digest(index_path: str) -> str:
    """The digest of the index's signature file, "none" when it cannot be read (a FIFO or a
    folder there is refused at once, never waited on)."""
    try:
        return hashlib.sha256(read_bytes(signature_path(index_path), MAX_SIGNATURE_BYTES)).hexdigest()
    except OSError:
        return "none"


def _remembered(state: sqlite3.Connection | None, digest: str, key: str) -> bool:
    if state is None:
        return False
    try:
        return state.execute("SELECT 1 FROM trusted WHERE digest = ? AND key = ?", (digest, key)).fetchone() is not None
    except sqlite3.Error:
        return False


def _remember(state: sqlite3.Connection | None, digest: str, key: str) -> None:
    if state is not None:
        with contextlib.suppress(sqlite3.Error):  # a read-only or busy state.db costs a check next time, nothing else
            state.execute("INSERT OR IGNORE INTO trusted (digest, key) VALUES (?, ?)", (digest, key))


class _Crypto:
    """The parts of `cryptography` engram uses, imported on first need."""

    def __init__(self) -> None:
        from cryptography import exceptions
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519

        self.serialization = serialization
        self.Ed25519PrivateKey = ed25519.Ed25519PrivateKey
        self.Ed25519PublicKey = ed25519.Ed25519PublicKey
        self.InvalidSignature = exceptions.InvalidSignature
        self.UnsupportedAlgorithm = exceptions.UnsupportedAlgorithm


def _cryptography() -> _Crypto:
    try:
        return _Crypto()
    except ImportError:
        raise IndexFileError(
            f"checking or making an index signature needs the cryptography package; {INSTALL_HINT}"
        ) from None
