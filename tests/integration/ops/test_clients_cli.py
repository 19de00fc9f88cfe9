"""`onceflow-ops clients`: create prints the key once, list never shows one, rotate and revoke
take effect, and mistakes are one readable sentence (exit 1), never a traceback."""

import json
import typing
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from onceflow.api_keys import key_hash, well_formed
from onceflow.settings import get_settings
from services.ops.cli import app

pytestmark = pytest.mark.integration
runner = CliRunner()


@pytest.fixture
def owner() -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
    with psycopg.connect(get_settings().dsn("owner"), autocommit=True) as conn:
        yield conn


def ops(*args: str) -> Any:
    return runner.invoke(app, ["clients", *args])


def create(*extra: str) -> dict[str, Any]:
    result = ops(
        "create", f"cli-{uuid.uuid4().hex[:8]}", "--scopes", "orders:read", "--json", *extra
    )
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.output)
    return doc


def live(owner: psycopg.Connection[tuple[Any, ...]], key: str) -> bool:
    row = owner.execute(
        "SELECT k.revoked_at IS NULL AND c.revoked_at IS NULL FROM orders.api_keys k "
        "JOIN orders.clients c ON c.id = k.client_id WHERE k.key_hash = %s",
        (key_hash(key),),
    ).fetchone()
    return bool(row and row[0])


def test_create_prints_the_key_once_and_stores_only_its_hash(owner: Any) -> None:
    doc = create("--rate", "25")
    assert set(doc) == {"client_id", "name", "scopes", "key"}
    assert doc["scopes"] == ["orders:read"]
    assert well_formed(doc["key"])
    stored = owner.execute(
        "SELECT k.key_hash, c.rate_per_s FROM orders.api_keys k JOIN orders.clients c "
        "ON c.id = k.client_id WHERE c.id = %s",
        (doc["client_id"],),
    ).fetchall()
    assert stored == [(key_hash(doc["key"]), 25.0)]
    listed = ops("list")
    assert listed.exit_code == 0
    assert doc["name"] in listed.output
    assert doc["key"] not in listed.output


def test_plain_create_shows_the_key_and_says_it_is_shown_once() -> None:
    result = ops("create", f"cli-{uuid.uuid4().hex[:8]}", "--scopes", "orders:write,orders:read")
    assert result.exit_code == 0, result.output
    assert any(well_formed(line.strip()) for line in result.output.splitlines())
    assert "shown only now" in result.output


def test_rotate_then_revoke_old_keys_then_revoke_the_client(owner: Any) -> None:
    doc = create()
    rotated = ops("rotate", doc["client_id"], "--json")
    assert rotated.exit_code == 0, rotated.output
    new = json.loads(rotated.output)["key"]
    assert (live(owner, doc["key"]), live(owner, new)) == (True, True)
    assert ops("revoke", doc["client_id"], "--old-keys").exit_code == 0
    assert (live(owner, doc["key"]), live(owner, new)) == (False, True)
    assert ops("revoke", doc["client_id"]).exit_code == 0
    assert not live(owner, new)


def test_a_client_is_named_by_its_name_and_its_rate_changes(owner: Any) -> None:
    doc = create()

    def rate() -> float | None:
        row = owner.execute(
            "SELECT rate_per_s FROM orders.clients WHERE id = %s", (doc["client_id"],)
        ).fetchone()
        assert row is not None
        return typing.cast(float | None, row[0])

    updated = ops("update", doc["name"], "--rate", "7.5", "--json")
    assert updated.exit_code == 0, updated.output
    assert json.loads(updated.output) == {"client_id": doc["client_id"], "rate_per_s": 7.5}
    assert rate() == 7.5
    assert ops("update", doc["client_id"], "--default-rate").exit_code == 0
    assert rate() is None
    rotated = ops("rotate", doc["name"], "--json")
    assert rotated.exit_code == 0, rotated.output
    assert ops("revoke", doc["name"]).exit_code == 0
    assert not live(owner, json.loads(rotated.output)["key"])


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["create", "x", "--scopes", "orders:delete"], "unknown scope orders:delete"),
        (["create", "x", "--scopes", "orders:read", "--rate", "0"], "positive"),
        (["revoke", str(uuid.uuid4())], "no live client"),
        (["rotate", str(uuid.uuid4())], "no live client"),
        (["rotate", "no-such-client"], "no live client no-such-client (give its name or its id)"),
        (["update", "no-such-client", "--rate", "5"], "no live client"),
        (["update", "x"], "give --rate REQUESTS_PER_S or --default-rate"),
        (["update", "x", "--rate", "-1"], "positive"),
    ],
)
def test_mistakes_are_one_sentence(args: list[str], says: str) -> None:
    result = ops(*args)
    assert result.exit_code == 1
    assert says in result.output
    assert "Traceback" not in result.output


def test_a_name_taken_is_refused() -> None:
    doc = create()
    result = ops("create", doc["name"], "--scopes", "orders:read")
    assert result.exit_code == 1
    assert "exists already" in result.output


def test_an_unreachable_database_is_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    down = get_settings().model_copy(update={"pg_port": 1})
    monkeypatch.setattr("services.ops.clients_cli.get_settings", lambda: down)
    result = ops("list")
    assert result.exit_code == 1
    assert "the database is unreachable" in result.output
    assert "Traceback" not in result.output
