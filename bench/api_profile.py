"""Where the order API's time per request goes (issue 28): a py-spy profile of one API worker
under wrk, as bench/api_bench.py drives it, its samples grouped by what the innermost frame does.

    .venv/bin/python -m bench.api_profile [--seconds 20] [--concurrency 8]

Starts its own API (one uvicorn worker, so one process holds every sample) on a scratch
database, warms it up, then samples it with py-spy (`--nonblocking`, 200 Hz) while wrk posts
orders. A sample's time in C (libpq's send, the socket write of the HTTP answer: on loopback
the kernel's TCP path for both ends) is charged to the Python frame that called it. Prints the
run's throughput and CPU per order, and a Markdown table of the active samples' shares.
"""

import argparse
import collections
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.api_bench import ensure_wrk, level, prepare, wait_ready
from onceflow.paths import ROOT

# (share's name, test on the innermost frame "function (file:line)"), the first match wins.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("event loop waiting (idle)", ("Runner.run (", "select (selectors.py")),
    ("libpq: a statement sent to Postgres (C + kernel)", ("_send_query_prepared (",)),
    ("the HTTP answer written to the socket (C + kernel)", ("RequestResponseCycle.send (",)),
    ("psycopg (Python)", ("psycopg/",)),
    ("uvicorn (Python)", ("uvicorn/",)),
    ("Starlette and FastAPI", ("starlette/", "fastapi/")),
    ("pydantic", ("pydantic",)),
    ("prometheus-client", ("prometheus_client/",)),
    ("the API's own code", ("services/", "onceflow/")),
)


def kind_of(frame: str) -> str:
    return next((name for name, marks in KINDS if any(m in frame for m in marks)), "other")


def shares(raw: Path) -> dict[str, int]:
    """Samples per kind of innermost frame, from py-spy's raw (collapsed stacks) output."""
    counts: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        counts[kind_of(stack.rsplit(";", 1)[-1])] += int(n)
    return dict(counts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--port", type=int, default=8021)
    parser.add_argument("--database", default="shop_api_profile")
    args = parser.parse_args()
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if spy is None:
        raise SystemExit("py-spy is not installed in .venv: run `make up` (a dev dependency).")
    wrk = ensure_wrk()
    env = {
        **prepare(args.database),
        "ONCEFLOW_API_PORT": str(args.port),
        "ONCEFLOW_API_ACCESS_LOG": "false",
        "ONCEFLOW_API_WORKERS": "1",
        "ONCEFLOW_API_POOL_SIZE": "8",
    }
    key = env["ONCEFLOW_BENCH_API_KEY"]
    server = subprocess.Popen([sys.executable, "-m", "services.orders"], env=env, cwd=ROOT)
    with tempfile.TemporaryDirectory(prefix="api-profile-") as scratch:
        raw = Path(scratch) / "samples.txt"
        try:
            wait_ready(args.port, server)
            level(wrk, args.port, 4, 3, server.pid, key)  # warm-up
            record = [spy, "record", "-p", str(server.pid), "--subprocesses", "--nonblocking"]
            record += ["-r", "200", "-d", str(args.seconds), "-f", "raw", "-o", str(raw)]
            sampler = subprocess.Popen(record, stdout=subprocess.DEVNULL)
            got = level(wrk, args.port, args.concurrency, args.seconds, server.pid, key)
            if sampler.wait(timeout=args.seconds + 60) != 0 or not raw.exists():
                raise SystemExit(
                    f"py-spy exited {sampler.returncode} without samples (it needs ptrace: run "
                    "as root or with CAP_SYS_PTRACE)"
                )
        finally:
            server.terminate()
            server.wait(timeout=15)
        counts = shares(raw)
    cpu_ms = got["cpu"] * 10 / got["rps"]
    print(f"{got['rps']:.0f} orders/s at c={args.concurrency}, {cpu_ms:.3f} ms API CPU per order")
    active = sum(n for k, n in counts.items() if k != KINDS[0][0])
    print(f"| innermost frame | samples | share of the {active} active samples |")
    print("|---|---|---|")
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        share = "—" if name == KINDS[0][0] else f"{100 * n / active:.1f} %"
        print(f"| {name} | {n} | {share} |")


if __name__ == "__main__":
    main()
