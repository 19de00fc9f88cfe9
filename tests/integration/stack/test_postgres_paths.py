"""The cluster's folders are reachable by the postgres user even from a private checkout."""

import os
import stat
import tempfile
from pathlib import Path

from stack.postgres import can_traverse, grant_traverse


def test_a_private_checkout_is_made_passable_for_the_postgres_user() -> None:
    assert os.geteuid() == 0, "the stack runs its cluster as postgres only when started as root"
    with tempfile.TemporaryDirectory() as private:  # mode 0700, like `mktemp -d`
        data = Path(private) / ".stack" / "data"
        data.mkdir(parents=True)
        assert not can_traverse("postgres", data)
        granted = grant_traverse("postgres", data)
        assert Path(private) in granted
        assert can_traverse("postgres", data)
        # Pass through only: others still cannot list the checkout.
        assert not Path(private).stat().st_mode & stat.S_IROTH
