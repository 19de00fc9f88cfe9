"""What the executors' staging-only role costs Postgres (issue 24, migration 0019): the same
multi-row INSERTs the JDBC writer sends (reWriteBatchedInserts: 1,000 rows a statement) into
aggregation.staged_records directly, through the view aggregation.staging_inbox (what the
executors do), and, for comparison, into a copy of the table under row-level security (the
alternative: the table itself with a policy hiding its rows). Interleaved rounds on a scratch
database, one connection (the owner's, FORCE ROW LEVEL SECURITY on the copy); the cost is the
CPU the Postgres backend used (utime + stime from /proc, so run it as the stack's user).

    .venv/bin/python -m bench.staging_role_bench --rounds 12
"""

import statistics
import uuid

import psycopg
import typer

from bench.soak_sample import cpu_seconds
from tests.integration.databases import create_database, drop_database

COLUMNS = (
    "query_id, batch_id, kafka_partition, kafka_offset, kafka_timestamp, event_id, event_type,"
    " occurred_at, day, order_id, customer_id, currency, status, status_rank, total_cents, items"
)
ROW = (
    "('{query}', {batch}, 0, {offset}, now(), gen_random_uuid(), 'OrderPlaced', now(),"
    " current_date, 'o', 'c', 'EUR', 'PLACED', 1, 1250,"
    ' \'[{{"sku":"S","quantity":1,"unit_price_cents":1250}}]\')'
)
TARGETS = {
    "table": "aggregation.staged_records",
    "view": "aggregation.staging_inbox",
    "rls": "aggregation.staged_rls",
}
RLS_COPY = (
    "CREATE UNLOGGED TABLE aggregation.staged_rls (LIKE aggregation.staged_records INCLUDING ALL);"
    " ALTER TABLE aggregation.staged_rls ENABLE ROW LEVEL SECURITY;"
    " ALTER TABLE aggregation.staged_rls FORCE ROW LEVEL SECURITY;"
    " CREATE POLICY stage ON aggregation.staged_rls FOR INSERT WITH CHECK (true);"
    " CREATE POLICY job ON aggregation.staged_rls FOR ALL USING (true)"
)


def statements(target: str, rows: int, count: int) -> list[str]:
    """`count` INSERTs of `rows` rows each, one new query id."""
    query = uuid.uuid4()
    return [
        f"INSERT INTO {target} ({COLUMNS}) VALUES "
        + ",".join(ROW.format(query=query, batch=batch, offset=n) for n in range(rows))
        for batch in range(count)
    ]


def main(
    rounds: int = 12, rows: int = 1000, statements_per_round: int = 40, warmup: int = 2
) -> None:
    database = f"bench_staging_role_{uuid.uuid4().hex[:8]}"
    settings = create_database(database)
    costs: dict[str, list[float]] = {side: [] for side in TARGETS}
    try:
        with psycopg.connect(settings.dsn("owner"), autocommit=True) as conn:
            conn.execute(RLS_COPY)
            row = conn.execute("SELECT pg_backend_pid()").fetchone()
            assert row is not None
            pid = row[0]
            sides = list(TARGETS)
            for n in range(rounds):
                for side in sides[n % 3 :] + sides[: n % 3]:
                    texts = statements(TARGETS[side], rows, statements_per_round)
                    before = cpu_seconds([pid])
                    for text in texts:
                        conn.execute(text)
                    costs[side].append(cpu_seconds([pid]) - before)
                    conn.execute("TRUNCATE aggregation.staged_records, aggregation.staged_rls")
    finally:
        drop_database(database)
    base = statistics.median(costs["table"][warmup:])
    for side, seconds in costs.items():
        median = statistics.median(seconds[warmup:])
        print(
            f"{side:5}: median {median:.3f} CPU-s per {rows * statements_per_round:,} rows"
            f" ({median / (rows * statements_per_round) * 1e6:.1f} us a row), {median / base:.3f}"
            f" of the table's; rounds {[round(s, 2) for s in seconds]}"
        )


if __name__ == "__main__":
    typer.run(main)
