"""API keys (the Stripe model): a recognisable prefix and 256 random bits, stored only as the
SHA-256 of the whole key. A high-entropy key needs no slow hash: nobody can guess one to test."""

import hashlib
import re
import secrets

PREFIX = "of_live_"
SECRET_BYTES = 32  # 256 bits
# token_urlsafe(32): 43 characters of the URL-safe base64 alphabet, no padding.
_KEY = re.compile(rf"\A{PREFIX}[A-Za-z0-9_-]{{43}}\Z")


def new_key() -> str:
    """A fresh key, shown to its client once."""
    return PREFIX + secrets.token_urlsafe(SECRET_BYTES)


def well_formed(key: str) -> bool:
    """True when `key` has the shape of a key this module issues (a cheap check before lookup)."""
    return _KEY.match(key) is not None


def key_hash(key: str) -> bytes:
    """What the database stores and looks a key up by."""
    return hashlib.sha256(key.encode()).digest()
