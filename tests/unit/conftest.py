"""Unit tests describe the default (single) topology unless a test builds its settings with
another one, whatever ONCEFLOW_TOPOLOGY the shell running them exports."""

import pytest


@pytest.fixture(autouse=True)
def _single_topology(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONCEFLOW_TOPOLOGY", "single")
