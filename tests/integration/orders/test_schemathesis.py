"""Schemathesis against a LIVE API process started for the test (this checkout's code, on a
free port, on the tests' database): no 5xx, responses match the OpenAPI document, requests are
authenticated with a client created for the run, and `ignored_auth` checks that every operation
that declares the bearer scheme rejects a request without a key (or with a wrong one)."""

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from onceflow.settings import Settings
from stack.postgres import superuser_conninfo
from stack.waiting import free_port
from tests.integration.clients import new_client

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
        "ignored_auth",
    ]
)


def ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def slot(settings: Settings) -> Iterator[str]:
    """The database's outbox slot, or (a scratch database has none) a temporary one, so
    /readyz can answer 200."""
    conninfo = superuser_conninfo(settings, settings.pg_database)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        if conn.execute(
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = %s AND database = %s",
            (settings.replication_slot, settings.pg_database),
        ).fetchone():
            yield settings.replication_slot
            return
        name = f"test_schemathesis_{uuid.uuid4().hex[:8]}"
        conn.execute(
            "SELECT pg_create_logical_replication_slot(%s, 'test_decoding', temporary => true)",
            (name,),
        )
        yield name


@pytest.fixture(scope="module")
def live_api(settings: Settings, slot: str) -> Iterator[str]:
    port = free_port()
    url = f"http://{settings.api_host}:{port}"
    env = {
        **os.environ,
        "ONCEFLOW_API_PORT": str(port),
        "ONCEFLOW_API_WORKERS": "1",
        "ONCEFLOW_API_ACCESS_LOG": "false",
        "ONCEFLOW_REPLICATION_SLOT": slot,
    }
    proc = subprocess.Popen([sys.executable, "-m", "services.orders"], env=env)
    try:
        deadline = time.monotonic() + 30
        while not ready(url):
            assert proc.poll() is None, "the API exited during startup"
            assert time.monotonic() < deadline, f"{url}/readyz not ready after 30s"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_every_orders_operation_declares_the_bearer_scheme(live_api: str) -> None:
    doc = httpx.get(f"{live_api}/openapi.json").json()
    operations = {
        (method, path): operation
        for path, item in doc["paths"].items()
        for method, operation in item.items()
    }
    for (method, path), operation in operations.items():
        secured = path.startswith("/orders")
        assert bool(operation.get("security")) is secured, (method, path)
        if secured:
            assert {"401", "403", "429"} <= set(operation["responses"]), (method, path)


def test_live_api_conforms_to_its_openapi(live_api: str, settings: Settings) -> None:
    key = new_client(settings, name="schemathesis").key
    cli = Path(sys.executable).with_name("schemathesis")
    result = subprocess.run(
        [
            str(cli),
            "run",
            f"{live_api}/openapi.json",
            "--header",
            f"Authorization: Bearer {key}",
            "--checks",
            CHECKS,
            "--max-examples",
            "12",
            "--phases",
            "coverage,fuzzing,stateful",
            "--max-time",
            "75",
            "--request-timeout",
            "10",
            "--seed",
            "20261122",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "passed" in result.stdout
