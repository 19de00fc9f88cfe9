"""`onceflow-ops reconcile [--since DAY] [--until DAY] [--json]`: run a reconciliation now (what
the maintenance process does each interval, services/reconcile) and print its differences, each
with the orders involved."""

from datetime import date

import typer
from confluent_kafka import KafkaException

from onceflow.settings import get_settings
from onceflow.settings.reconcile import get_reconcile_settings
from services.ops.output import JsonFlag, Listing, console, emit_json, fail, readable_errors
from services.reconcile.run import ReconcileError, Report, run_once
from stack.waiting import NotReadyError

SINCE_HELP = "First UTC day to check (YYYY-MM-DD); default: the newest closed days."
UNTIL_HELP = "Last UTC day to check (YYYY-MM-DD, a closed day); default: the newest closed one."


def _day(option: str, text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        fail("reconcile", f"{option} {text!r} is not a day: give it as YYYY-MM-DD (UTC)")


def _value(value: int | None) -> str:
    return "-" if value is None else str(value)


def show(report: Report) -> None:
    """The run in a sentence, then its differences (or that there are none)."""
    days = f"{report.first_day} .. {report.last_day}"
    console.print(
        f"checked {report.days_checked} closed UTC days ({days}), comparing "
        f"{', '.join(report.compared) or 'nothing'}; {report.records_read} new topic records read",
        highlight=False,
    )
    if report.note:
        console.print(f"[yellow]{report.note}[/]", highlight=False)
    if not report.differences:
        console.print("0 differences" if report.compared else "no result: try again later")
        return
    table = Listing(
        (
            "day",
            "currency",
            "event type",
            "measure",
            "orders",
            "topic",
            "analytics",
            "orders involved",
        ),
        title=f"{len(report.differences)} differences",
        right=("orders", "topic", "analytics"),
    )
    for d in report.differences:
        more = d.involved - len(d.order_ids)
        named = " ".join(d.order_ids) + (f" (+{more} more)" if more else "")
        table.add_row(
            d.day,
            d.currency,
            d.event_type,
            d.measure,
            _value(d.orders),
            _value(d.topic),
            _value(d.analytics),
            named or "none known",
        )
    table.print()


def reconcile(
    since: str | None = typer.Option(None, "--since", help=SINCE_HELP),
    until: str | None = typer.Option(None, "--until", help=UNTIL_HELP),
    as_json: JsonFlag = False,
) -> None:
    """Check that the order tables, the topic and the analytics tables agree on every closed
    UTC day (counts and sums per event type and currency); print the differences and the orders
    involved (exit status 0 either way: --json for scripts)."""
    first, last = _day("--since", since), _day("--until", until)
    with readable_errors("reconcile"):
        try:
            report = run_once(
                settings=get_settings(), config=get_reconcile_settings(), since=first, until=last
            )
        except (ReconcileError, NotReadyError) as exc:
            fail("reconcile", str(exc))
        except KafkaException as exc:
            fail("reconcile", f"Kafka is unreachable or refused the request ({exc})")
    if report is None:
        fail("reconcile", "another reconciliation holds the lock: try again in a minute")
    if as_json:
        emit_json(report)
        return
    show(report)
