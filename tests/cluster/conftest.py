"""Fixtures for tests of the running cluster topology (`ONCEFLOW_TOPOLOGY=cluster make up`;
`make test-cluster` runs them). With another topology they are skipped, saying why."""

import pytest

from onceflow.settings import Settings, get_settings
from onceflow.topology import Layout, Topology

# The e2e fixtures: the API client, the analyst connection, the settings, a background writer.
from tests.e2e.conftest import analyst, api, settings, writer
from tests.faults.fixtures import network_faults

__all__ = ["analyst", "api", "layout", "network_faults", "settings", "writer"]


@pytest.fixture(autouse=True)
def _cluster_only() -> None:
    if get_settings().topology is not Topology.CLUSTER:
        pytest.skip("needs the cluster topology: `make test-cluster`")


@pytest.fixture(scope="session")
def layout(settings: Settings) -> Layout:
    return settings.layout
