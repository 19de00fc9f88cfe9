"""Unit tests describe the default (single) topology unless a test builds its settings with
another one, whatever ONCEFLOW_TOPOLOGY the shell running them exports."""

from pathlib import Path

import pytest

from onceflow.settings.connections import ROLES


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
