"""Kafka Connect's REST API on the running stack (contract section 2b): every request needs the
ops credential, and a connector config resolves no secret but the connector's own (issue 24)."""

from pathlib import Path

import httpx
import pytest

from onceflow.settings import Settings, get_settings
from onceflow.settings.ops import get_ops_settings
from stack import connector, supervisor

pytestmark = pytest.mark.integration

POSTGRES = "io.debezium.connector.postgresql.PostgresConnector"


@pytest.fixture(scope="module")
def settings() -> Settings:
    return get_settings()


@pytest.fixture(scope="module")
def ops() -> httpx.BasicAuth:
    return get_ops_settings().auth()


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/connectors"),
        ("GET", "/connectors/{name}/status"),
        ("GET", "/connectors/{name}/config"),
        ("PUT", "/connectors/{name}/pause"),
        ("POST", "/connectors/{name}/restart"),
        ("DELETE", "/connectors/{name}"),
        ("PUT", f"/connector-plugins/{POSTGRES}/config/validate"),
    ],
)
@pytest.mark.parametrize("who", ["nobody", "wrong password"])
def test_a_request_without_the_ops_credential_is_refused(
    settings: Settings, ops: httpx.BasicAuth, method: str, path: str, who: str
) -> None:
    url = settings.connect_url + path.format(name=settings.connector_name)
    auth = None if who == "nobody" else httpx.BasicAuth(get_ops_settings().ops_user, "wrong")
    answer = httpx.request(method, url, auth=auth, json={}, timeout=30)
    assert answer.status_code == 401, answer.text
    # Refused, not done: the connector still runs as before.
    status = httpx.get(
        f"{settings.connect_url}/connectors/{settings.connector_name}/status", auth=ops, timeout=30
    )
    assert status.status_code == 200
    assert status.json()["connector"]["state"] == "RUNNING"


def test_the_ops_credential_is_accepted(settings: Settings, ops: httpx.BasicAuth) -> None:
    listed = httpx.get(f"{settings.connect_url}/connectors", auth=ops, timeout=30)
    assert listed.status_code == 200
    assert settings.connector_name in listed.json()


def _validate(settings: Settings, ops: httpx.BasicAuth, config: dict[str, str]) -> list[str]:
    """Every error of a validate request of the connector's config with `config` on top."""
    body = connector.connector_config() | {"name": "validate-probe"} | config
    answer = httpx.put(
        f"{settings.connect_url}/connector-plugins/{POSTGRES}/config/validate",
        json=body,
        auth=ops,
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    return [error for c in answer.json()["configs"] for error in c["value"]["errors"]]


def test_the_connectors_own_secret_resolves(settings: Settings, ops: httpx.BasicAuth) -> None:
    # The control: a validate logs in to Postgres with what its references resolve to.
    assert _validate(settings, ops, {}) == []


def test_a_reference_to_another_roles_password_resolves_nothing(
    settings: Settings, ops: httpx.BasicAuth
) -> None:
    # Resolved, the owner's password would log in (the error would name another check, or none).
    owner = settings.credentials("owner")[0]
    errors = _validate(
        settings,
        ops,
        {"database.user": owner, "database.password": "${env:ONCEFLOW_OWNER_DB_PASSWORD}"},
    )
    assert any(f'password authentication failed for user "{owner}"' in e for e in errors), errors


def test_a_variable_the_worker_holds_but_the_connector_does_not_name_stays_literal(
    settings: Settings, ops: httpx.BasicAuth
) -> None:
    # The owner's password is not in the worker's environment at all, so the test above would
    # pass without the allowlist; this setting is (supervisord exports it to every program).
    worker = settings.layout.connect[0].program
    pid = supervisor.proxy().supervisor.getProcessInfo(worker)["pid"]
    held = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    assert f"ONCEFLOW_KAFKA_BOOTSTRAP={settings.kafka_bootstrap}".encode() in held
    reference = "${env:ONCEFLOW_KAFKA_BOOTSTRAP}"
    errors = _validate(settings, ops, {"database.dbname": reference})
    assert any(f'database "{reference}" does not exist' in e for e in errors), errors
    assert not any(settings.kafka_bootstrap in e for e in errors), errors


def test_a_reference_to_a_file_resolves_nothing(
    settings: Settings, ops: httpx.BasicAuth, tmp_path: Path
) -> None:
    # The connector's own password, in a file: still nothing, no file provider is configured.
    user, password = settings.credentials("cdc")
    secret = tmp_path / "secret.properties"
    secret.write_text(f"password={password}\n")
    errors = _validate(
        settings, ops, {"database.user": user, "database.password": f"${{file:{secret}:password}}"}
    )
    assert any(f'password authentication failed for user "{user}"' in e for e in errors), errors
