"""Unit tests describe the default (single) topology unless a test builds its settings with
another one, whatever ONCEFLOW_TOPOLOGY the shell running them exports."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from onceflow.settings.connections import ROLES
from onceflow.settings.ops import get_ops_settings


@pytest.fixture(autouse=True)
def _single_topology(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONCEFLOW_TOPOLOGY", "single")


@pytest.fixture(scope="session")
def _db_password_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("db-passwords")
    for role in ROLES:
        (folder / role).write_text(f"unit-test-{role}\n")
    return folder


@pytest.fixture(autouse=True)
def _db_passwords(monkeypatch: pytest.MonkeyPatch, _db_password_dir: Path) -> None:
    """Database passwords of their own, whatever this machine's .stack/secrets/ holds (a fresh
    checkout has none: `make up` generates them)."""
    monkeypatch.setenv("ONCEFLOW_DB_PASSWORD_DIR", str(_db_password_dir))


@pytest.fixture(scope="session")
def _ops_password_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    file = tmp_path_factory.mktemp("ops") / "ops-password"
    file.write_text("unit-test-ops\n")
    return file


@pytest.fixture(autouse=True)
def _ops_password(monkeypatch: pytest.MonkeyPatch, _ops_password_file: Path) -> Iterator[None]:
    """An ops password of their own (stack/connector.py and the Connect probes send it): a fresh
    checkout has no .stack/secrets/ops-password until `make up`."""
    monkeypatch.setenv("ONCEFLOW_OPS_PASSWORD_FILE", str(_ops_password_file))
    get_ops_settings.cache_clear()
    yield
    get_ops_settings.cache_clear()  # later tests (integration, same process) read the real one
