"""Fixtures for end-to-end tests against the running local stack (`make up`)."""

from collections.abc import Iterator

import httpx
import psycopg
import pytest

from onceflow.settings import Settings, get_settings
from tests.e2e.writer import Writer
from tests.integration.clients import bearer, new_client


@pytest.fixture(scope="session")
def settings() -> Settings:
    return get_settings()


@pytest.fixture(scope="session")
def api(settings: Settings) -> Iterator[httpx.Client]:
    """The running API, as a client created for this session (never local-dev)."""
    with httpx.Client(
        base_url=f"http://{settings.api_host}:{settings.api_port}",
        timeout=30,
        headers=bearer(new_client(settings, name="e2e")),
    ) as client:
        assert client.get("/readyz").status_code == 200, "the stack is not up: run `make up`"
        yield client


@pytest.fixture  # per test: test_restart restarts Postgres, which closes older connections
def analyst(settings: Settings) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    with psycopg.connect(settings.dsn("analyst"), autocommit=True) as conn:
        yield conn


@pytest.fixture
def writer(api: httpx.Client) -> Iterator[Writer]:
    """A REST client posting orders in the background (start it after the test's barrier)."""
    w = Writer(str(api.base_url), {"Authorization": api.headers["Authorization"]})
    yield w
    w.stopping.set()
