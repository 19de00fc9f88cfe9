"""Each test gets its own topics and group on the stack's broker, and cleans them up."""

from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.integration.notifications.harness import Scratch

pytestmark = pytest.mark.integration


FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Note a failed call, so the fixture's teardown can print the instances' logs."""
    report = yield
    if report.when == "call" and report.failed:
        item.stash[FAILED] = True
    return report


@pytest.fixture
def scratch(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Scratch]:
    space = Scratch(state_dir=tmp_path / "state")
    space.create()
    yield space
    if request.node.stash.get(FAILED, False):
        space.tell()
    space.delete()
