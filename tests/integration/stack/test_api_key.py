"""`make up`'s local API key: written once with private modes, kept by a second `make up`, and
issued again only when its file or its key is gone."""

import stat
import uuid
from pathlib import Path

import pytest

from onceflow.client_keys import find_client, is_live
from onceflow.settings import get_settings
from services.ops.clients import revoke
from stack.api_key import ensure_local_key

pytestmark = pytest.mark.integration


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_key_is_written_once_privately_and_never_rotated(tmp_path: Path) -> None:
    settings, name = get_settings(), f"local-test-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "secrets" / "api-key"
    assert ensure_local_key(settings, path=path, name=name)
    key = path.read_text().strip()
    assert (mode(path), mode(path.parent)) == (0o600, 0o700)
    assert is_live(settings=settings, key=key)

    assert not ensure_local_key(settings, path=path, name=name)  # a second `make up`
    assert path.read_text().strip() == key

    path.unlink()  # the file lost: a new key for the same client
    assert ensure_local_key(settings, path=path, name=name)
    again = path.read_text().strip()
    assert again != key
    assert is_live(settings=settings, key=again)
    client_id = find_client(settings=settings, name=name)
    assert client_id is not None
    revoke(settings=settings, client_id=client_id)
