"""What the schema tests share: a scratch database at head for each test module, and a client of
the API in it."""

from collections.abc import Iterator

import pytest

from onceflow.client_keys import Issued
from onceflow.settings import Settings
from tests.integration.clients import new_client
from tests.integration.schema.scratch import scratch_database


@pytest.fixture(scope="module")
def fresh(request: pytest.FixtureRequest) -> Iterator[Settings]:
    """A new database at head, named for the test module; dropped after its tests."""
    with scratch_database(request.module.__name__.rpartition(".")[2]) as settings:
        yield settings


@pytest.fixture(scope="module")
def caller(fresh: Settings) -> Issued:
    return new_client(fresh)
