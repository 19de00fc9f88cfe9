"""The cost of the claim's advisory lock (migration 0022): the same order API and pgbench's
placement (bench/place_order.sql) on a scratch database whose orders.claim_key is 0021's
(A: lock_timeout around the INSERT) and on one migrated to head (B: the advisory lock first),
interleaved in one run; and, less sensitive to a busy host than throughput, the CPU one backend
spends per placement (the API's exact call, one transaction each, `/proc/<pid>/stat`).

    .venv/bin/python -m bench.claim_lock_bench [--rounds 8] [--seconds 4] [--concurrency 16]

Both APIs (this tree, two workers each) stay up; each round drives A and B back to back with
wrk (alternating which goes first), then pgbench, then the one-backend loop, on each database
the same way, so a pair shares the machine's state on a busy host. Prints each round and the
medians (of the values, and of the rounds' B/A pairs) as a Markdown table; the databases are
dropped at the end.
"""

import argparse
import os
import statistics
import uuid
from pathlib import Path

import psycopg

from bench.api_bench import ensure_wrk, level, pgbench, wait_ready
from bench.api_edge_bench import serve
from onceflow.client_keys import create_client
from onceflow.contract import Scope
from onceflow.paths import ROOT
from onceflow.settings import get_settings
from services.orders.adapters.calls import PLACE, place_args
from services.orders.domain.order import LineItem
from services.orders.service_layer.services import place_command
from stack import postgres
from tests.integration.databases import alembic, drop_database

REVISIONS = {"A": "0021_maintenance_role", "B": "head"}


def prepare(database: str, revision: str) -> tuple[str, str]:
    """`database` created afresh and migrated to `revision`; a client's key and id."""
    drop_database(database)  # a run cut short (Postgres restarted) leaves it behind
    settings = get_settings().model_copy(update={"pg_database": database})
    postgres.ensure_roles_and_database(settings)
    # A database migrated from scratch has the functions' current bodies at every revision
    # (migrations/functions.py); a downgrade restores the revision's own.
    steps = [("upgrade", "head")] + ([("downgrade", revision)] if revision != "head" else [])
    for step in steps:
        done = alembic(database, *step)
        if done.returncode != 0:
            raise SystemExit(f"{database}: alembic {' '.join(step)} failed:\n{done.stderr}")
    with psycopg.connect(settings.dsn("owner")) as conn:
        row = conn.execute("SELECT prosrc FROM pg_proc WHERE proname = 'claim_key'").fetchone()
    locks = row is not None and "pg_try_advisory_xact_lock" in row[0]
    if locks != (revision == "head"):
        raise SystemExit(f"{database}: claim_key is not {revision}'s")
    issued = create_client(
        settings=settings,
        name=f"claim-bench-{uuid.uuid4().hex[:8]}",
        scopes=tuple(Scope),
        rate_per_s=1_000_000,
    )
    return issued.key, str(issued.client_id)


def backend_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def backend_cpu_ms(database: str, client_id: str, placements: int) -> float:
    """CPU milliseconds one backend spends per placement, each in its own transaction."""
    settings = get_settings().model_copy(update={"pg_database": database})
    commands = [
        place_command(
            client_id=uuid.UUID(client_id),
            key=f"bench-{uuid.uuid4()}",
            customer_id="c-bench",
            currency="EUR",
            items=(LineItem("SKU-1", 2, 1250), LineItem("SKU-2", 1, 99)),
            traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        )
        for _ in range(placements)
    ]
    with psycopg.connect(settings.dsn("app"), autocommit=True) as conn:
        conn.execute(PLACE, place_args(commands[0], lock_timeout="50ms"), prepare=True)
        before = backend_cpu_s(conn.info.backend_pid)
        for command in commands[1:]:
            conn.execute(PLACE, place_args(command, lock_timeout="50ms"), prepare=True)
        spent = backend_cpu_s(conn.info.backend_pid) - before
    return spent * 1000 / (placements - 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--placements", type=int, default=3000)
    parser.add_argument("--port", type=int, default=8021)
    args = parser.parse_args()
    wrk = ensure_wrk()
    databases = {name: f"shop_claim_bench_{name.lower()}" for name in REVISIONS}
    rows: list[dict[str, float]] = []
    servers = {}
    try:
        clients = {name: prepare(databases[name], rev) for name, rev in REVISIONS.items()}
        for number, name in enumerate(REVISIONS):
            servers[name] = serve(ROOT, databases[name], args.port + number)
            wait_ready(args.port + number, servers[name])
            level(wrk, args.port + number, 4, 2, servers[name].pid, clients[name][0])  # warm-up
        for number in range(args.rounds):
            order = ("A", "B") if number % 2 == 0 else ("B", "A")
            row: dict[str, float] = {"round": number + 1}
            for name in order:
                port = args.port + list(REVISIONS).index(name)
                got = level(
                    wrk, port, args.concurrency, args.seconds, servers[name].pid, clients[name][0]
                )
                row[f"{name}_rps"] = got["rps"]
                row[f"{name}_cpu_ms"] = got["cpu"] * 10 / got["rps"]
                row[f"{name}_failed"] = got["errors"]  # non-2xx answers (a false 409) and errors
            for name in order:
                seconds = max(1, int(args.seconds))
                row[f"{name}_tps"] = pgbench(
                    args.concurrency, seconds, databases[name], clients[name][1]
                )
            for name in order:
                row[f"{name}_backend_ms"] = backend_cpu_ms(
                    databases[name], clients[name][1], args.placements
                )
            rows.append(row)
            print(
                f"round {number + 1}: "
                + "; ".join(
                    f"{n} {row[f'{n}_rps']:.0f} orders/s, {row[f'{n}_cpu_ms']:.3f} API CPU-ms "
                    f"an order, pgbench {row[f'{n}_tps']:.0f} tps, "
                    f"{row[f'{n}_backend_ms']:.3f} backend CPU-ms a placement"
                    for n in REVISIONS
                ),
                flush=True,
            )
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(timeout=30)
        for database in databases.values():
            drop_database(database)

    print(
        f"rounds={args.rounds} seconds={args.seconds:g} c={args.concurrency} cores={os.cpu_count()}"
    )
    print(
        "| | A: 0021's claim_key | B: with the advisory lock | B/A, median of the rounds' pairs |"
    )
    print("|---|---|---|---|")
    for field, label, digits in (
        ("rps", "API orders/s, median", 0),
        ("cpu_ms", "API CPU ms per order, median", 3),
        ("tps", "pgbench placements/s, median", 0),
        ("backend_ms", "one backend's CPU ms per placement, median", 3),
    ):
        a, b = ([r[f"{name}_{field}"] for r in rows] for name in REVISIONS)
        pairs = statistics.median(y / x for x, y in zip(a, b, strict=True))
        print(
            f"| {label} | {statistics.median(a):.{digits}f} | {statistics.median(b):.{digits}f} "
            f"| {pairs:.3f} |"
        )
    failed = {name: sum(r[f"{name}_failed"] for r in rows) for name in REVISIONS}
    print(f"| API answers not 2xx, all rounds | {failed['A']:.0f} | {failed['B']:.0f} | |")


if __name__ == "__main__":
    main()
