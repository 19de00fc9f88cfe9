"""The API edge on a real API process (`python -m services.orders`, its own loopback port) and
the real Postgres: what an unauthenticated peer can cost is bounded.

- a 32 MiB header (or too many header fields) → 431 problem+json, the connection closed;
- a request that does not arrive whole within the read timeout is cut: 408 while its head is
  incomplete (also a connection that sends nothing), the connection closed mid-body;
- an idle connection is closed after the keep-alive;
- over the concurrency limit (connections + requests per worker) → 503 problem+json;
- the key is checked before the body is read: no key and a broken or huge body → 401;
- 1,000 unknown keys cost at most 50 database transactions (pg_stat_database of a database
  only that API uses), the rest answered 429 with Retry-After;
- an expired key → 401; a rotation with --overlap keeps both keys working until it ends;
- migration 0016 (the expiry column) goes down and up again.
"""

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import psycopg
import pytest
from typer.testing import CliRunner

from onceflow.api_keys import new_key
from onceflow.client_keys import Issued
from onceflow.settings import Settings, get_settings
from services.ops.cli import app as ops_app
from stack import postgres
from stack.waiting import free_port, wait_for
from tests.integration.clients import bearer, new_client
from tests.integration.databases import alembic, create_database, drop_database
from tests.integration.orders.conftest import ORDER, key

pytestmark = pytest.mark.integration
READ_TIMEOUT_S = 1.0
BIG = 32 * 1024 * 1024


@dataclass(frozen=True)
class Api:
    url: str
    port: int
    process: subprocess.Popen[bytes]


def start_api(database: str | None = None, **settings: str) -> Api:
    """`python -m services.orders` (two workers unless `api_workers` says) on a free loopback
    port; `settings` are ApiSettings fields."""
    port = free_port()
    env = {
        **os.environ,
        "ONCEFLOW_API_PORT": str(port),
        "ONCEFLOW_API_WORKERS": "2",
        "ONCEFLOW_API_POOL_SIZE": "2",
        "ONCEFLOW_API_ACCESS_LOG": "false",
        "ONCEFLOW_API_REQUEST_READ_TIMEOUT_S": str(READ_TIMEOUT_S),
        **({"ONCEFLOW_PG_DATABASE": database} if database else {}),
        **{f"ONCEFLOW_{name.upper()}": value for name, value in settings.items()},
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "services.orders"], env=env, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: httpx.get(f"{url}/healthz").status_code == 200, what="the API", timeout=30)
    except BaseException:
        process.kill()
        raise
    return Api(url, port, process)


def stop(api: Api) -> None:
    api.process.terminate()
    api.process.wait(30)


@pytest.fixture(scope="module")
def api() -> Iterator[Api]:
    started = start_api(api_workers="1")  # one process starts faster; the limits are per worker
    try:
        yield started
    finally:
        stop(started)


def exchange(api: Api, request: bytes, *, timeout: float = 10) -> tuple[bytes, float]:
    """Send `request` on a new connection (the server may cut it while it is sent), then read
    until the server closes it: (what it answered, seconds from the first byte to the close)."""
    with socket.create_connection(("127.0.0.1", api.port), timeout=timeout) as sock:
        started = time.monotonic()
        with contextlib.suppress(OSError):  # refused mid-send: the answer is already sent
            sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer, time.monotonic() - started


def one_answer(sock: socket.socket) -> bytes:
    """Read one whole response (its head, then Content-Length bytes), however the server's
    writes are split into segments; what came before a close or a reset if it ends early."""
    answer = b""
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(65536):
            answer += chunk
            head, sep, body = answer.partition(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
            if sep and length and len(body) >= int(length.group(1)):
                break
    return answer


def status_and_problem(answer: bytes) -> tuple[int, dict[str, Any], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/problem+json" in head.lower(), answer[:300]
    return int(head.split()[1]), json.loads(body), head.lower()


def test_a_32_mib_header_is_refused_431_and_not_read_whole(api: Api) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * BIG + b"\r\n\r\n"
    answer, _ = exchange(api, request)
    status, problem, head = status_and_problem(answer)
    assert (status, problem["type"]) == (431, "urn:onceflow:problem:header-fields-too-large")
    assert b"connection: close" in head
    assert problem["request_id"]


def test_too_many_header_fields_are_refused_431(api: Api) -> None:
    fields = b"".join(b"X-%d: 1\r\n" % n for n in range(200))
    answer, _ = exchange(api, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n")
    assert status_and_problem(answer)[0] == 431


@pytest.mark.parametrize(
    "request_start",
    [b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ", b""],
    ids=["head-incomplete", "nothing-sent"],
)
def test_a_slow_incomplete_request_is_answered_408_within_the_timeout(
    api: Api, request_start: bytes
) -> None:
    answer, elapsed = exchange(api, request_start)
    status, problem, _ = status_and_problem(answer)
    assert (status, problem["type"]) == (408, "urn:onceflow:problem:request-timeout")
    assert READ_TIMEOUT_S * 0.9 <= elapsed < READ_TIMEOUT_S + 2


def test_a_body_that_stops_coming_is_cut_within_the_timeout(api: Api, caller: Issued) -> None:
    request = (
        b"POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + caller.key.encode() + b"\r\n"
        b"Idempotency-Key: " + key().encode() + b"\r\nContent-Length: 100\r\n\r\n{"
    )
    answer, elapsed = exchange(api, request)
    assert answer == b""  # the app was reading the body: the connection is closed, no answer
    assert READ_TIMEOUT_S * 0.9 <= elapsed < READ_TIMEOUT_S + 2


def test_an_idle_connection_is_closed_after_the_keep_alive() -> None:
    # The read timeout far longer, so that only the keep-alive can close the connection.
    quick = start_api(api_workers="1", api_keep_alive_s="1", api_request_read_timeout_s="30")
    try:
        with socket.create_connection(("127.0.0.1", quick.port), timeout=10) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert one_answer(sock).startswith(b"HTTP/1.1 200 ")
            idle_from = time.monotonic()
            assert sock.recv(1) == b""  # closed by the server (a socket timeout fails the test)
            idle = time.monotonic() - idle_from
        assert 0.9 <= idle < 1 + 2
    finally:
        stop(quick)


def test_over_the_concurrency_limit_the_answer_is_503_problem() -> None:
    # One worker that allows 3 connections + requests; two idle connections hold 2 of them.
    limited = start_api(api_workers="1", api_max_concurrency="3", api_request_read_timeout_s="30")
    idle = [socket.create_connection(("127.0.0.1", limited.port)) for _ in range(2)]
    healthz = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    try:
        answers: list[bytes] = []

        def refused() -> bool:
            answers.append(exchange(limited, healthz)[0])
            return answers[-1].startswith(b"HTTP/1.1 503")

        wait_for(refused, what="503 with two idle connections", timeout=10, interval=0.1)
        status, problem, head = status_and_problem(answers[-1])
        assert (status, problem["type"]) == (503, "urn:onceflow:problem:overloaded")
        assert b"retry-after: 1" in head
        for sock in idle:
            sock.close()
        wait_for(
            lambda: exchange(limited, healthz)[0].startswith(b"HTTP/1.1 200"),
            what="200 once the idle connections are gone",
            timeout=10,
            interval=0.1,
        )
    finally:
        for sock in idle:
            sock.close()
        stop(limited)


@pytest.mark.parametrize(
    "body", [b'{"customer_id": ', b"[" * 70_000], ids=["broken-json", "over-64-kib"]
)
def test_without_a_key_the_body_is_not_parsed_401(api: Api, body: bytes) -> None:
    response = httpx.post(
        f"{api.url}/orders",
        content=body,
        headers={"Content-Type": "application/json", "Idempotency-Key": key()},
    )
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_without_a_key_a_32_mib_body_is_answered_401_before_it_is_sent(api: Api) -> None:
    head = (
        b"POST /orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Idempotency-Key: k-1\r\nContent-Length: %d\r\n\r\n{" % BIG
    )
    with socket.create_connection(("127.0.0.1", api.port), timeout=5) as sock:
        sock.sendall(head)
        answer = one_answer(sock)  # it comes while the body has not
    assert status_and_problem(answer)[0] == 401


def test_with_a_key_the_same_broken_body_is_parsed_400(api: Api, caller: Issued) -> None:
    response = httpx.post(
        f"{api.url}/orders",
        content=b'{"customer_id": ',
        headers={"Content-Type": "application/json", "Idempotency-Key": key(), **bearer(caller)},
    )
    assert response.status_code == 400, response.text


def test_an_expired_key_is_401_and_a_key_before_its_expiry_works(
    api: Api, settings: Settings
) -> None:
    expired, lasting = new_client(settings, name="expired"), new_client(settings, name="lasting")
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        conn.execute(
            "UPDATE orders.api_keys SET expires_at = now() - interval '1 second' "
            "WHERE client_id = %s",
            (expired.client_id,),
        )
        conn.execute(
            "UPDATE orders.api_keys SET expires_at = now() + interval '1 hour' "
            "WHERE client_id = %s",
            (lasting.client_id,),
        )
    refused = httpx.get(f"{api.url}/orders", headers=bearer(expired))
    assert refused.status_code == 401, refused.text
    assert refused.json()["detail"] == "the API key is unknown, revoked or expired"
    assert httpx.get(f"{api.url}/orders", headers=bearer(lasting)).status_code == 200


def test_rotation_with_overlap_keeps_both_keys_until_it_ends(api: Api, settings: Settings) -> None:
    old = new_client(settings, name="rotated")
    rotated = CliRunner().invoke(
        ops_app, ["clients", "rotate", str(old.client_id), "--overlap", "3s", "--json"]
    )
    assert rotated.exit_code == 0, rotated.output
    doc = json.loads(rotated.output)
    assert doc["older_keys_expire_by"]
    new = {"Authorization": f"Bearer {doc['key']}"}
    with httpx.Client(base_url=api.url) as http:

        def place(headers: dict[str, str]) -> int:
            body = {**ORDER, "customer_id": f"c-{uuid.uuid4().hex[:12]}"}
            answer = http.post("/orders", json=body, headers={"Idempotency-Key": key(), **headers})
            return answer.status_code

        assert (place(bearer(old)), place(new)) == (201, 201)  # within the overlap: both work
        # After the overlap (plus the 1 s a worker may trust a verified key) the old one is 401.
        wait_for(lambda: place(bearer(old)) == 401, what="the old key to expire", timeout=8)
        assert place(new) == 201


@pytest.fixture(scope="module")
def scratch() -> Iterator[str]:
    """A database only the API under test uses, so its transactions can be counted."""
    database = f"test_edge_{uuid.uuid4().hex[:8]}"
    try:
        create_database(database)
        yield database
    finally:
        drop_database(database)


def transactions(database: str) -> int:
    """Committed plus rolled-back transactions of `database` so far (pg_stat_database), read
    once no backend is connected to it (a backend's counts are in once it has exited)."""
    conninfo = postgres.superuser_conninfo(get_settings())

    def idle() -> bool:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (database,)
            ).fetchone()
        return row is not None and row[0] == 0

    wait_for(idle, what=f"no backend on {database}", timeout=15, interval=0.1)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = %s",
            (database,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_thousand_unknown_keys_cost_at_most_50_database_transactions(scratch: str) -> None:
    before = transactions(scratch)
    api = start_api(scratch)
    try:

        def guess(batch: int) -> list[httpx.Response]:
            with httpx.Client(base_url=api.url) as http:  # one connection: spread over workers
                return [
                    http.get("/orders", headers={"Authorization": f"Bearer {new_key()}"})
                    for _ in range(batch)
                ]

        with ThreadPoolExecutor(8) as pool:
            answers = [r for batch in pool.map(guess, [125] * 8) for r in batch]
        metrics = httpx.get(f"{api.url}/metrics").text
    finally:
        stop(api)
    spent = transactions(scratch) - before
    statuses = {r.status_code for r in answers}
    limited = [r for r in answers if r.status_code == 429]
    looked_up = sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith('onceflow_api_key_checks_total{outcome="unknown"}')
    )
    print(f"1000 unknown keys: {spent} transactions, {looked_up:g} lookups, {len(limited)} 429")
    assert len(answers) == 1000
    assert statuses <= {401, 429}, statuses
    assert limited
    assert all(int(r.headers["retry-after"]) >= 1 for r in limited)
    assert limited[0].headers["content-type"] == "application/problem+json"
    assert 1 <= looked_up <= spent <= 50


def test_a_new_key_works_at_once(api: Api, settings: Settings) -> None:
    """The unknown-key cache cannot hold a key issued later: it works on its first request."""
    issued = new_client(settings, name="fresh")
    assert httpx.get(f"{api.url}/orders", headers=bearer(issued)).status_code == 200


def expiry_column(database: str) -> bool:
    settings = get_settings().model_copy(update={"pg_database": database})
    with psycopg.connect(settings.dsn("owner")) as conn:
        row = conn.execute(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'orders' "
            "AND table_name = 'api_keys' AND column_name = 'expires_at'"
        ).fetchone()
    return row is not None and row[0] == 1


def test_migration_0016_goes_down_and_up_again(scratch: str) -> None:
    assert expiry_column(scratch)
    down = alembic(scratch, "downgrade", "0015_money_per_currency")
    assert down.returncode == 0, down.stderr
    assert not expiry_column(scratch)
    up = alembic(scratch, "upgrade", "head")
    assert up.returncode == 0, up.stderr
    assert expiry_column(scratch)
