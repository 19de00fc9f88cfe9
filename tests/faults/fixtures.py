"""The pytest fixture of tests that inject network faults: whatever a test leaves (it failed
inside a fault's block, or was interrupted) is removed before the next one runs."""

from collections.abc import Iterator

import pytest

from tests.faults.network import cleaned_up


@pytest.fixture
def network_faults() -> Iterator[None]:
    with cleaned_up():
        yield
