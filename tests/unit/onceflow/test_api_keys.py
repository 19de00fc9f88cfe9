"""API keys: the prefix and 256 random bits, the shape check, and the stored hash."""

import hashlib

import pytest

from onceflow.api_keys import PREFIX, key_hash, new_key, well_formed


def test_a_new_key_is_prefixed_random_and_well_formed() -> None:
    keys = {new_key() for _ in range(1000)}
    assert len(keys) == 1000
    for key in keys:
        assert key.startswith(PREFIX)
        assert well_formed(key)
        assert len(key) - len(PREFIX) == 43  # 32 bytes in unpadded URL-safe base64: 256 bits


@pytest.mark.parametrize(
    "text",
    [
        "",
        PREFIX,
        "of_test_" + "a" * 43,
        PREFIX + "a" * 42,
        PREFIX + "a" * 44,
        PREFIX + "a" * 42 + "=",
        PREFIX + "a" * 42 + "\n",
        " " + PREFIX + "a" * 43,
    ],
)
def test_anything_else_is_malformed(text: str) -> None:
    assert not well_formed(text)


def test_the_hash_is_the_sha256_of_the_whole_key() -> None:
    key = new_key()
    assert key_hash(key) == hashlib.sha256(key.encode()).digest()
    assert key_hash(key) != key_hash(new_key())
