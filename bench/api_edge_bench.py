"""The API edge's cost (issue 24): the order API without the edge limits (A, the commit before
them) and with them (B), interleaved in one run, each round's ratio to pgbench beside it.

    .venv/bin/python -m bench.api_edge_bench --before REV --after REV [--rounds 12] [--seconds 4]

Each revision is checked out in a temporary git worktree; its API (`python -m services.orders`,
two workers, its own port) runs against one scratch database migrated to the revisions' common
schema (the key expiry column added, which A ignores), driven by wrk as bench/api_bench.py does.
Both APIs stay up; each round drives A and B back to back (alternating the order) and then
pgbench with the same transaction, so a pair shares the machine's state on a busy host. Prints
each round and the medians (of the values, and of the rounds' B/A pairs) as a Markdown table.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg

from bench.api_bench import ensure_wrk, level, pgbench, wait_ready
from onceflow.client_keys import create_client
from onceflow.contract import Scope
from onceflow.paths import ROOT
from onceflow.settings import get_settings
from stack import postgres

COMMON_SCHEMA = "0014_monotonic_updated_at"


def prepare(database: str) -> tuple[str, str]:
    """The scratch database at COMMON_SCHEMA plus api_keys.expires_at; a client's key and id."""
    settings = get_settings().model_copy(update={"pg_database": database})
    postgres.ensure_roles_and_database(settings)
    env = {**os.environ, "ONCEFLOW_PG_DATABASE": database}
    alembic = [sys.executable, "-m", "alembic", "-c", "migrations/alembic.ini"]
    subprocess.run([*alembic, "upgrade", COMMON_SCHEMA], env=env, check=True, cwd=ROOT)
    with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
        conn.execute("ALTER TABLE orders.api_keys ADD COLUMN IF NOT EXISTS expires_at timestamptz")
    issued = create_client(
        settings=settings,
        name=f"edge-bench-{uuid.uuid4().hex[:8]}",
        scopes=tuple(Scope),
        rate_per_s=1_000_000,
    )
    return issued.key, str(issued.client_id)


def serve(tree: Path, database: str, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "ONCEFLOW_PG_DATABASE": database,
        "ONCEFLOW_API_PORT": str(port),
        "ONCEFLOW_API_ACCESS_LOG": "false",
        "ONCEFLOW_API_WORKERS": "2",
        "ONCEFLOW_API_POOL_SIZE": "8",
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    return subprocess.Popen([sys.executable, "-m", "services.orders"], env=env, cwd=tree)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True, help="the revision without the edge limits")
    parser.add_argument("--after", required=True, help="the revision with them")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--database", default="shop_api_edge_bench")
    args = parser.parse_args()
    wrk = ensure_wrk()
    key, client_id = prepare(args.database)
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="edge-bench-") as scratch:
        trees = {"A": Path(scratch) / "a", "B": Path(scratch) / "b"}
        ports = {"A": args.port, "B": args.port + 1}
        servers: dict[str, subprocess.Popen[bytes]] = {}
        try:
            for name, rev in (("A", args.before), ("B", args.after)):
                add = ["git", "worktree", "add", "--detach", str(trees[name]), rev]
                subprocess.run(add, cwd=ROOT, check=True)
                modules = trees[name] / "services/orders/node_modules"
                if not modules.exists():
                    modules.symlink_to(ROOT / "services/orders/node_modules")
                servers[name] = serve(trees[name], args.database, ports[name])
                wait_ready(ports[name], servers[name])
                level(wrk, ports[name], 4, 2, servers[name].pid, key)  # warm-up
            for number in range(args.rounds):
                # Both servers stay up; each round runs A and B back to back (alternating which
                # goes first) and pgbench right after, so a pair shares the machine's state.
                pair: dict[str, dict[str, float]] = {}
                for name in ("A", "B") if number % 2 == 0 else ("B", "A"):
                    got = level(
                        wrk, ports[name], args.concurrency, args.seconds, servers[name].pid, key
                    )
                    pair[name] = {"rps": got["rps"], "cpu_ms": got["cpu"] * 10 / got["rps"]}
                tps = pgbench(args.concurrency, max(1, int(args.seconds)), args.database, client_id)
                row = {
                    "round": number + 1,
                    "pg": tps,
                    **{f"{n}_{k}": v for n, got in pair.items() for k, v in got.items()},
                }
                row["A_ratio"], row["B_ratio"] = row["A_rps"] / tps, row["B_rps"] / tps
                rows.append(row)
                print(
                    f"round {number + 1}: pgbench {tps:.0f} tps; "
                    + "; ".join(
                        f"{n} {row[f'{n}_rps']:.0f} orders/s (ratio {row[f'{n}_ratio']:.3f}, "
                        f"{row[f'{n}_cpu_ms']:.3f} ms CPU/order)"
                        for n in ("A", "B")
                    ),
                    flush=True,
                )
        finally:
            for server in servers.values():
                server.terminate()
                server.wait(timeout=30)
            for tree in trees.values():
                remove = ["git", "worktree", "remove", "--force", str(tree)]
                subprocess.run(remove, cwd=ROOT, check=False)

    def median(field: str) -> float:
        return statistics.median(r[field] for r in rows)

    def paired(field: str) -> float:
        return statistics.median(r[f"B_{field}"] / r[f"A_{field}"] for r in rows)

    print(
        f"rounds={args.rounds} seconds={args.seconds:g} c={args.concurrency} cores={os.cpu_count()}"
    )
    print("| | A: without the edge limits | B: with them | B/A, median of the rounds' pairs |")
    print("|---|---|---|---|")
    print(
        f"| orders/s, median | {median('A_rps'):.0f} | {median('B_rps'):.0f} "
        f"| {paired('rps'):.3f} |"
    )
    print(
        f"| ratio to pgbench, median | {median('A_ratio'):.3f} | {median('B_ratio'):.3f} "
        f"| {paired('ratio'):.3f} |"
    )
    print(
        f"| API CPU ms per order, median | {median('A_cpu_ms'):.3f} | {median('B_cpu_ms'):.3f} "
        f"| {paired('cpu_ms'):.3f} |"
    )


if __name__ == "__main__":
    main()
