"""The local stack's API key: the client `local-dev` (both scopes), its key in
.stack/secrets/api-key (mode 0600, folder 0700) for humans' curl commands. Issued once: a later
`make up` keeps a live key and issues a new one only when the file or its key is gone."""

import os
from pathlib import Path

from onceflow import client_keys, paths
from onceflow.contract import Scope
from onceflow.settings import Settings

LOCAL_CLIENT = "local-dev"


def ensure_local_key(
    settings: Settings, *, path: Path = paths.API_KEY, name: str = LOCAL_CLIENT
) -> bool:
    """Write a key of client `name` to `path` unless it holds a live one; True when written."""
    if path.exists() and client_keys.is_live(settings=settings, key=path.read_text().strip()):
        return False
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    client_id = client_keys.find_client(settings=settings, name=name)
    if client_id is None:
        key = client_keys.create_client(settings=settings, name=name, scopes=tuple(Scope)).key
    else:
        key = client_keys.issue_key(settings=settings, client_id=client_id).key
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    return True
