"""`python -m services.orders.purge_keys`: delete Idempotency-Key records past their retention.

Run it periodically (e.g. hourly from cron or a systemd timer). Keys are kept at least
`ONCEFLOW_API_IDEMPOTENCY_RETENTION_HOURS` (default and minimum 24); a key older than that may
be reused and then creates a new order. Deletes in small batches to keep locks short.
"""

import logging
from datetime import timedelta

import psycopg

from onceflow.settings import get_api_settings, get_settings
from services.orders.entrypoints import logs

BATCH = (
    "DELETE FROM orders.idempotency_keys WHERE ctid = ANY (ARRAY("
    "SELECT ctid FROM orders.idempotency_keys WHERE created_at < now() - %s LIMIT 5000))"
)
log = logging.getLogger("onceflow.purge_keys")


def purge(*, retention: timedelta) -> int:
    """Delete every key older than `retention`; return how many were deleted."""
    total = 0
    with psycopg.connect(get_settings().dsn("app"), autocommit=True) as conn:
        while (deleted := conn.execute(BATCH, (retention,)).rowcount) > 0:
            total += deleted
    return total


def main() -> None:
    """Purge with the configured retention and log the count."""
    api = get_api_settings()
    logs.configure(api.api_log_level)
    deleted = purge(retention=timedelta(hours=api.api_idempotency_retention_hours))
    log.info("purged expired idempotency keys", extra={"deleted": deleted})


if __name__ == "__main__":
    main()
