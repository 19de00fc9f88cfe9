"""stack.private_data: what the stack stores is its owner's only."""

import os
import stat
from pathlib import Path

from stack.private_data import make_private


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_group_and_other_access_is_taken_off_below_the_roots(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "kafka" / "topic-0").mkdir(parents=True)
    segment = root / "kafka" / "topic-0" / "00000.log"
    segment.write_bytes(b"an order event")
    root.chmod(0o755)
    (root / "kafka").chmod(0o755)
    segment.chmod(0o644)
    outside = tmp_path / "elsewhere"
    outside.write_text("not ours to change")
    outside.chmod(0o644)
    (root / "link").symlink_to(outside)

    assert make_private([root]) == 3  # kafka, topic-0, the segment

    assert _mode(segment) == 0o600
    assert _mode(root / "kafka") == 0o700
    assert _mode(root / "kafka" / "topic-0") == 0o700
    assert _mode(root) == 0o755  # another user (Postgres) passes through to its own folder
    assert _mode(outside) == 0o644  # a link is not followed
    assert make_private([root]) == 0  # idempotent


def test_a_missing_root_changes_nothing(tmp_path: Path) -> None:
    assert make_private([tmp_path / "absent"]) == 0
