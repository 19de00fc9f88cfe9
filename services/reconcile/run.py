"""One reconciliation run: read what is new on the topic (topic.py), then compare the closed
days (compare.py, sources.py) and keep the result as their last report (schema reconcile).

A UTC day is closed once its end is `reconcile_settle` past. A run checks the newest
`reconcile_days` closed days (or --since/--until), never a day before the reconciler's reading
of the topic is complete (its first read found older records already deleted), nor one whose
events are no longer kept. The analytics tables are compared only when the job has applied every
record read; nothing is compared when the topic could not be read to its end in the budget.
"""

import logging
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import psycopg

from onceflow.settings import Settings
from onceflow.settings.reconcile import ReconcileSettings
from services.ops import lag
from services.reconcile import compare, sources, topic
from stack.waiting import NotReadyError, wait_for

log = logging.getLogger("onceflow.reconcile")
SQL = Path(__file__).parent / "sql"
APP_NAME = "onceflow-reconcile"
LOCK_KEY = 0x0F1C4EC0  # pg_try_advisory_lock key: one reconciliation at a time
Conn = psycopg.Connection[Any]


class ReconcileError(ValueError):
    """The days asked for cannot be checked: said in one sentence."""


@dataclass(frozen=True)
class Named(compare.Difference):
    """A difference and the orders it names (at most reconcile_named_orders of `involved`)."""

    order_ids: list[str]
    involved: int


@dataclass(frozen=True)
class Report:
    """What one run did and found."""

    first_day: date | None
    last_day: date | None
    days_checked: int
    records_read: int
    events_read: int
    compared: tuple[str, ...]
    note: str | None
    finished_at: datetime | None = None
    differences: list[Named] = field(default_factory=list)
    active_days: tuple[date, ...] = ()  # the days any source has a value on


def closed_through(now: datetime, settle: timedelta) -> date:
    """The newest UTC day whose end is at least `settle` ago."""
    return (now.astimezone(UTC) - settle).date() - timedelta(days=1)


def _first_complete(conn: Conn, topic_name: str) -> date | None:
    row = conn.execute(
        "SELECT max(complete_from) FROM reconcile.topic_positions WHERE topic = %s", (topic_name,)
    ).fetchone()
    since: datetime | None = row[0] if row else None
    if since is None or since == topic.NEVER:
        return None
    day = since.astimezone(UTC).date()
    return day if since == datetime.combine(day, time(), UTC) else day + timedelta(days=1)


def days_to_check(
    *,
    last_closed: date,
    today: date,
    config: ReconcileSettings,
    complete_from: date | None,
    since: date | None,
    until: date | None,
) -> tuple[date, date]:
    """The first and last day a run checks, or ReconcileError when they cannot be."""
    last = last_closed if until is None else until
    if last > last_closed:
        raise ReconcileError(
            f"{last} is not closed yet: the newest closed day is {last_closed} (a day closes "
            f"{config.reconcile_settle} after its end, UTC)"
        )
    kept = today - timedelta(days=config.reconcile_keep_days)
    if since is None:
        first = max(last - timedelta(days=config.reconcile_days - 1), kept)
        first = first if complete_from is None else max(first, complete_from)
    else:
        first = since
    if first < kept:
        raise ReconcileError(
            f"{first} is older than the {config.reconcile_keep_days} days whose events the "
            f"reconciler keeps: the oldest day it can check is {kept}"
        )
    if first > last:
        raise ReconcileError(f"no closed day from {first} to {last}: --since is after --until")
    return first, last


def _connect(settings: Settings, role: str) -> Conn:
    conn = psycopg.connect(settings.dsn(role), autocommit=True, application_name=APP_NAME)
    conn.execute("SET TIME ZONE 'UTC'")
    return conn


def _job_has_applied(own: Conn, settings: Settings) -> bool:
    applied = lag.applied_in(own, settings.topic)
    read = own.execute(
        "SELECT kafka_partition, last_record_offset FROM reconcile.topic_positions "
        "WHERE topic = %s AND last_record_offset IS NOT NULL",
        (settings.topic,),
    ).fetchall()
    return all(applied.get(partition, -1) >= offset for partition, offset in read)


def _name(own: Conn, app: Conn, found: compare.Difference, limit: int) -> Named:
    ours = sources.topic_orders(own, found.key)
    theirs = (
        sources.order_side(app, found.key)
        if compare.says("orders", found.event_type, found.measure)
        else None
    )
    named = compare.involved(ours, theirs)
    return Named(**vars(found), order_ids=named[:limit], involved=len(named))


def _store(
    own: Conn,
    *,
    started_at: datetime,
    first: date,
    last: date,
    days: set[date],
    report: Report,
) -> datetime:
    """The run and its days' results, replacing their last ones, in one transaction."""
    with own.transaction():
        row = own.execute(
            (SQL / "save_run.sql").read_text(),
            {
                "started_at": started_at,
                "first": first,
                "last": last,
                "days": report.days_checked,
                "records": report.records_read,
                "differences": len(report.differences),
                "note": report.note,
            },
        ).fetchone()
        assert row is not None
        run_id, finished_at = row
        own.execute((SQL / "clear_days.sql").read_text(), {"first": first, "last": last})
        for day in sorted(days | {d.day for d in report.differences}):
            count = sum(d.day == day for d in report.differences)
            own.execute(
                (SQL / "save_day.sql").read_text(),
                {"day": day, "run_id": run_id, "differences": count},
            )
        for named in report.differences:
            own.execute(
                (SQL / "save_difference.sql").read_text(),
                {**vars(named), "orders_involved": named.involved},
            )
    return finished_at  # type: ignore[no-any-return]


def run_once(
    *,
    settings: Settings,
    config: ReconcileSettings,
    since: date | None = None,
    until: date | None = None,
) -> Report | None:
    """Read the topic, compare the days asked for (default: the newest closed ones) and keep
    the result; None when another run holds the lock (nothing is done)."""
    started_at = datetime.now(UTC)
    with ExitStack() as stack:
        own = stack.enter_context(_connect(settings, "reconcile"))
        app = stack.enter_context(_connect(settings, "app"))
        if own.execute("SELECT pg_try_advisory_lock(%s)", (LOCK_KEY,)).fetchone() != (True,):
            log.info("another reconciliation holds the lock: skipped")
            return None
        first, last = days_to_check(
            last_closed=closed_through(started_at, config.reconcile_settle),
            today=started_at.date(),
            config=config,
            complete_from=_first_complete(own, settings.topic),
            since=since,
            until=until,
        )
        read = topic.read_new(
            own,
            bootstrap=settings.kafka_bootstrap,
            topic=settings.topic,
            budget_s=config.reconcile_read_budget_s,
        )
        report = _compare(own, app, settings, config, first, last, read)
        own.execute((SQL / "prune.sql").read_text(), {"keep_days": config.reconcile_keep_days})
        if not report.compared:
            return report
        finished_at = _store(
            own,
            started_at=started_at,
            first=first,
            last=last,
            days=set(report.active_days),
            report=report,
        )
        log.info(
            "reconciled %s..%s: %d differences, %d records read",
            first,
            last,
            len(report.differences),
            read.records,
            extra={"differences": len(report.differences), "records_read": read.records},
        )
        return Report(**{**vars(report), "finished_at": finished_at})
    return None  # unreachable: ExitStack does not swallow


def _compare(
    own: Conn,
    app: Conn,
    settings: Settings,
    config: ReconcileSettings,
    first: date,
    last: date,
    read: topic.Read,
) -> Report:
    days = (last - first).days + 1
    if not read.caught_up:
        unread = (
            f"the topic was not read to its end within {config.reconcile_read_budget_s:.0f} s: "
            "nothing compared; the next run carries on reading"
        )
        return Report(first, last, 0, read.records, read.events, (), unread)
    values = {
        "orders": sources.orders(app, first, last),
        "topic": sources.topic(own, first, last),
    }
    note: str | None = None
    try:  # the job usually follows closely: give it a moment to pass what was just read
        wait_for(
            lambda: _job_has_applied(own, settings),
            what="the job's ledger",
            timeout=config.reconcile_job_wait_s,
            interval=1.0,
        )
        applied = True
    except NotReadyError:
        applied = False
    if applied:
        values["analytics"] = sources.analytics(own, first, last)
    else:
        note = "the job has not applied every record read yet: analytics not compared"
    found = compare.differences(values, compared=tuple(values))
    named = [_name(own, app, d, config.reconcile_named_orders) for d in found]
    active = tuple(sorted({key[0] for said in values.values() for key in said}))
    return Report(
        first, last, days, read.records, read.events, tuple(values), note, None, named, active
    )
