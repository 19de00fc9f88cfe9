"""Order API benchmark: POST /orders (2 items, unique keys) at rising concurrency, then pgbench
running the same SQL transaction, on the same machine, in the same run.

    .venv/bin/python bench/api_bench.py [--port 8001] [--workers 2] [--seconds 10]

Starts its own API (`python -m services.orders`) on --port, drives it with wrk (keep-alive
HTTP/1.1 connections, bench/post_orders.lua: a unique Idempotency-Key per request), reads the
server's CPU from /proc, and prints a Markdown table.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

from onceflow.client_keys import create_client
from onceflow.contract import Scope
from onceflow.paths import ROOT
from onceflow.settings import get_settings

PGBENCH = "/usr/lib/postgresql/15/bin/pgbench"


def ensure_wrk() -> str:
    """wrk, a lean C load generator like pgbench (Debian's package, installed if absent)."""
    found = shutil.which("wrk")
    if found is None:
        print("installing wrk (apt-get install wrk)", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True)
        found = shutil.which("wrk")
    if found is None:
        raise SystemExit("wrk is not installed and could not be installed: apt-get install wrk")
    return found


def cpu_seconds(root_pid: int) -> float:
    """utime+stime of the server process and its children (the uvicorn workers)."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(stat.parent.name), int(fields[1])
        if root_pid in (pid, ppid):
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def level(
    wrk: str, port: int, concurrency: int, seconds: float, server: int, api_key: str
) -> dict[str, float]:
    """One wrk run at `concurrency` keep-alive connections; throughput, latency, server CPU."""
    cpu0 = cpu_seconds(server)
    out = subprocess.run(
        [
            wrk,
            f"-t{min(concurrency, 2)}",
            f"-c{concurrency}",
            f"-d{seconds:g}s",
            "-s",
            str(ROOT / "bench/post_orders.lua"),
            f"http://127.0.0.1:{port}",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ONCEFLOW_BENCH_API_KEY": api_key},
    ).stdout
    found = re.search(r"RESULT (.*)", out)
    if found is None:
        raise SystemExit(f"wrk printed no RESULT line: {out[-300:]}")
    r = {k: float(v) for k, v in (kv.split("=") for kv in found[1].split())}
    return {
        "c": concurrency,
        "rps": r["requests"] / r["seconds"],
        "p50": r["p50"],
        "p99": r["p99"],
        "cpu": (cpu_seconds(server) - cpu0) / r["seconds"] * 100,
        "errors": r["non2xx"] + r["errors"],
    }


def prepare(database: str) -> dict[str, str]:
    """Create and migrate a scratch database, so the run never floods the real pipeline; the
    API key and client id of a client created for the run are in ONCEFLOW_BENCH_API_KEY and
    ONCEFLOW_BENCH_CLIENT_ID."""
    env = {**os.environ, "ONCEFLOW_PG_DATABASE": database}
    make = "from onceflow.settings import get_settings as g; from stack import postgres; "
    make += "postgres.ensure_roles_and_database(g())"
    subprocess.run([sys.executable, "-c", make], env=env, check=True, cwd=ROOT)
    alembic = [str(Path(sys.executable).with_name("alembic")), "-c", "migrations/alembic.ini"]
    subprocess.run([*alembic, "upgrade", "head"], env=env, check=True, cwd=ROOT)
    issued = create_client(
        settings=get_settings().model_copy(update={"pg_database": database}),
        name=f"api-bench-{uuid.uuid4().hex[:8]}",
        scopes=tuple(Scope),
        rate_per_s=1_000_000,
    )
    return {
        **env,
        "ONCEFLOW_BENCH_API_KEY": issued.key,
        "ONCEFLOW_BENCH_CLIENT_ID": str(issued.client_id),
    }


def pgbench(clients: int, seconds: int, database: str, client_id: str) -> float:
    s = get_settings()
    env = {**os.environ, "PGPASSWORD": s.credentials("app")[1]}
    out = subprocess.run(
        [
            PGBENCH,
            "-n",
            "-M",
            "prepared",
            "-D",
            f"client_id={client_id}",
            "-f",
            str(ROOT / "bench/place_order.sql"),
            "-c",
            str(clients),
            "-j",
            str(min(clients, 2)),
            "-T",
            str(seconds),
            "-h",
            s.pg_host,
            "-p",
            str(s.pg_port),
            "-U",
            s.app_db_user,
            database,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"tps = ([\d.]+)", out.stdout)
    if found is None:
        print(f"pgbench -c {clients} failed: {out.stderr[-300:]}", file=sys.stderr)
        return float("nan")
    return float(found[1])


def wait_ready(port: int, proc: subprocess.Popen[bytes]) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, "API exited"
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError("API not ready")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--pool", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--levels", default="1,2,4,8,16,32,64")
    parser.add_argument("--database", default="shop_api_bench")
    args = parser.parse_args()
    wrk = ensure_wrk()
    env = {
        **prepare(args.database),
        "ONCEFLOW_API_PORT": str(args.port),
        "ONCEFLOW_API_ACCESS_LOG": "false",
        "ONCEFLOW_API_WORKERS": str(args.workers),
        "ONCEFLOW_API_POOL_SIZE": str(args.pool),
    }
    server = subprocess.Popen([sys.executable, "-m", "services.orders"], env=env, cwd=ROOT)
    try:
        wait_ready(args.port, server)
        api_key = env["ONCEFLOW_BENCH_API_KEY"]
        level(wrk, args.port, 4, 2, server.pid, api_key)  # warm-up
        levels = [int(c) for c in args.levels.split(",")]
        rows = [level(wrk, args.port, c, args.seconds, server.pid, api_key) for c in levels]
    finally:
        server.terminate()
        server.wait(timeout=15)
    client_id = env["ONCEFLOW_BENCH_CLIENT_ID"]
    pg = {c: pgbench(c, int(args.seconds), args.database, client_id) for c in levels}
    print(f"workers={args.workers} pool={args.pool} seconds={args.seconds} cores={os.cpu_count()}")
    print("| concurrency | API orders/s | p50 ms | p99 ms | API CPU % | errors | pgbench tps |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['c']} | {r['rps']:.0f} | {r['p50']:.1f} | {r['p99']:.1f} | {r['cpu']:.0f} "
            f"| {r['errors']:.0f} | {pg[int(r['c'])]:.0f} |"
        )
    best = max(rows, key=lambda r: r["rps"])
    top = max(v for v in pg.values() if v == v)
    print(
        f"\nbest API {best['rps']:.0f}/s at c={best['c']:.0f}; best pgbench {top:.0f} tps; "
        f"ratio {best['rps'] / top:.2f}"
    )


if __name__ == "__main__":
    main()
