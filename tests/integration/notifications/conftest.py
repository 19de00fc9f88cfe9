"""Each test gets its own topics and group on the stack's broker, and cleans them up."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.notifications.harness import Scratch

pytestmark = pytest.mark.integration


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Scratch]:
    space = Scratch(state_dir=tmp_path / "state")
    space.create()
    yield space
    space.delete()
