"""The stack's stored data and its programs' logs are their owners' only (docs/security.md):
Kafka's segments hold every order event, and a file any user of the host can read bypasses the
brokers' ACLs. supervisord starts every program with umask 077 (stack/supervisor.py); this takes
group and other access off what was written before (by `make up`'s own steps, an older stack, or
the other topology's). Secrets and configs holding them are written private from the start
(write_private)."""

import os
import stat
from collections.abc import Iterable
from pathlib import Path


def make_private(roots: Iterable[Path]) -> int:
    """Take group and other access off everything under `roots` that this user owns; return how
    many entries changed. The roots keep their mode (Postgres, another user, passes through
    the data folder to its own, which is its and 0700 already); symbolic links are not followed."""
    me, changed = os.getuid(), 0
    for root in roots:
        for folder, dirs, files in os.walk(root):
            for name in (*dirs, *files):
                path = os.path.join(folder, name)
                try:
                    info = os.lstat(path)
                    if info.st_uid != me or stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o077:
                        continue
                    os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o077)
                except FileNotFoundError:  # a running program removed it meanwhile (a .tmp file)
                    continue
                changed += 1
    return changed


def write_private(path: Path, text: str) -> bool:
    """Write `text` to `path` with mode 0600 (its folder 0700) unless it holds it already;
    True when written."""
    if path.exists() and path.read_text() == text and path.stat().st_mode & 0o777 == 0o600:
        return False
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    return True
