"""Database passwords: the environment's when set, else the local stack's file; no default (a
readable error names both ways); the local stack generates each file once, 0600."""

import stat
from pathlib import Path

import pytest
from pydantic import SecretStr

from onceflow.settings import Settings
from onceflow.settings.connections import ROLES, DbPasswordMissingError
from stack import db_secrets


def test_without_a_password_the_error_says_where_to_put_it(tmp_path: Path) -> None:
    settings = Settings(db_password_dir=tmp_path)
    with pytest.raises(DbPasswordMissingError) as missing:
        settings.dsn("app")
    message = str(missing.value)
    assert "ONCEFLOW_APP_DB_PASSWORD" in message
    assert str(tmp_path / "app") in message
    assert "shop_app:shop_app" not in message


def test_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    (tmp_path / "spark").write_text("from-file\n")
    assert Settings(db_password_dir=tmp_path).credentials("spark") == ("shop_spark", "from-file")
    given = Settings(db_password_dir=tmp_path, spark_db_password=SecretStr("from-env"))
    assert given.credentials("spark") == ("shop_spark", "from-env")


def test_make_up_writes_each_password_once_owner_only(tmp_path: Path) -> None:
    folder = tmp_path / "postgres"
    settings = Settings(db_password_dir=folder)
    assert db_secrets.ensure(settings) == list(ROLES)
    first = {role: settings.credentials(role)[1] for role in ROLES}
    assert db_secrets.ensure(settings) == []
    assert {role: settings.credentials(role)[1] for role in ROLES} == first
    assert first["analyst"] == db_secrets.ANALYST_DEFAULT
    generated = [first[role] for role in ROLES if role != "analyst"]
    assert len(set(generated)) == len(generated)
    assert all(len(password) >= 32 for password in generated)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE((folder / role).stat().st_mode) for role in ROLES} == {0o600}


def test_a_password_set_by_the_environment_gets_no_file(tmp_path: Path) -> None:
    settings = Settings(db_password_dir=tmp_path, app_db_password=SecretStr("given"))
    assert "app" not in db_secrets.ensure(settings)
    assert not (tmp_path / "app").exists()
    with pytest.raises(ValueError, match="ONCEFLOW_APP_DB_PASSWORD"):
        db_secrets.rotate(settings, "app")


def test_rotation_replaces_one_password(tmp_path: Path) -> None:
    settings = Settings(db_password_dir=tmp_path)
    db_secrets.ensure(settings)
    before = {role: settings.credentials(role)[1] for role in ROLES}
    db_secrets.rotate(settings, "cdc")
    after = {role: settings.credentials(role)[1] for role in ROLES}
    assert after["cdc"] != before["cdc"]
    assert {r: p for r, p in after.items() if r != "cdc"} == {
        r: p for r, p in before.items() if r != "cdc"
    }
    with pytest.raises(ValueError, match="unknown database role"):
        db_secrets.rotate(settings, "superuser")
