"""The comparison (services/reconcile/compare.py) and the days a run checks (run.py), pure."""

from datetime import UTC, date, datetime, timedelta
from functools import partial

import pytest

from onceflow.contract import EventType
from onceflow.settings.reconcile import ReconcileSettings
from services.reconcile.compare import Difference, Key, differences, involved
from services.reconcile.run import ReconcileError, closed_through, days_to_check

DAY = date(2026, 11, 20)
PLACED: Key = (DAY, "EUR", EventType.PLACED, "events")
PAID_CENTS: Key = (DAY, "EUR", EventType.PAID, "cents")
LATEST: Key = (DAY, "EUR", EventType.PAID, "latest")


def test_agreeing_sources_have_no_difference() -> None:
    said = {PLACED: 3, PAID_CENTS: 500, LATEST: 1}
    assert differences({"orders": said, "topic": said, "analytics": said}) == []


def test_each_source_is_compared_only_on_what_it_says() -> None:
    # The order tables say nothing of a payment's sum; the analytics tables nothing of latest.
    topic = {PAID_CENTS: 500, LATEST: 1}
    assert (
        differences({"orders": {LATEST: 1}, "topic": topic, "analytics": {PAID_CENTS: 500}}) == []
    )
    found = differences({"orders": {}, "topic": topic, "analytics": {PAID_CENTS: 507}})
    assert found == [
        Difference(*PAID_CENTS, orders=None, topic=500, analytics=507),
        Difference(*LATEST, orders=0, topic=1, analytics=None),
    ]


def test_a_missing_row_counts_as_zero_and_a_source_not_compared_is_left_out() -> None:
    values = {"orders": {PLACED: 2}, "topic": {PLACED: 2}, "analytics": {}}
    assert differences(values) == [Difference(*PLACED, orders=2, topic=2, analytics=0)]
    assert differences(values, compared=("orders", "topic")) == []


def test_the_orders_named_are_those_only_one_side_holds_else_the_whole_group() -> None:
    assert involved({"a", "b"}, {"b", "c"}) == ["a", "c"]
    assert involved({"a", "b"}, {"a", "b"}) == ["a", "b"]
    assert involved({"b", "a"}, None) == ["a", "b"]


CONFIG = ReconcileSettings(reconcile_days=7, reconcile_keep_days=35)
NOW = datetime(2026, 11, 26, 0, 20, tzinfo=UTC)


def test_a_day_is_closed_once_its_end_is_the_settle_margin_past() -> None:
    assert closed_through(NOW, timedelta(minutes=15)) == date(2026, 11, 25)
    assert closed_through(NOW, timedelta(minutes=30)) == date(2026, 11, 24)


def test_the_days_checked_by_default_and_asked_for() -> None:
    last = date(2026, 11, 25)
    common = partial(days_to_check, last_closed=last, today=NOW.date(), config=CONFIG)
    assert common(complete_from=None, since=None, until=None) == (date(2026, 11, 19), last)
    # Never before the reader's first complete day, unless asked.
    later = date(2026, 11, 23)
    assert common(complete_from=later, since=None, until=None)[0] == later
    assert common(complete_from=later, since=DAY, until=DAY) == (DAY, DAY)


@pytest.mark.parametrize(
    ("since", "until", "said"),
    [
        (None, date(2026, 11, 26), "2026-11-26 is not closed yet"),
        (date(2026, 10, 1), None, "older than the 35 days"),
        (date(2026, 11, 24), date(2026, 11, 23), "--since is after --until"),
    ],
)
def test_days_that_cannot_be_checked_are_refused_in_a_sentence(
    since: date | None, until: date | None, said: str
) -> None:
    with pytest.raises(ReconcileError, match=said):
        days_to_check(
            last_closed=date(2026, 11, 25),
            today=NOW.date(),
            config=CONFIG,
            complete_from=None,
            since=since,
            until=until,
        )
