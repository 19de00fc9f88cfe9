"""No record can stop the pipeline (contract section 4c, issue 21): every kind of bad record of
the shared corpus, produced on one real topic between valid events and read by both real
consumers — the aggregation job and a notifications processor — in one run of each.

For each kind: exactly one dead letter in each stage, both with the corpus's reason and the raw
record; every valid event around it counted exactly once (the table oracle, restricted to the
case's own customer, skus and order) and notified exactly once, in order. For the whole run:
no stage stopped or restarted, the tables equal the oracle of every valid event, nothing else is
a dead letter, nothing else is notified. The corpus's unusual valid records ride along: counted
and notified, never dead letters.
"""

from collections import Counter
from collections.abc import Iterator

import pytest

from onceflow import contract
from onceflow.settings import get_settings
from stack.waiting import port_open
from tests.integration.aggregation.conftest import Pipeline
from tests.integration.aggregation.history import delete_topic
from tests.integration.aggregation.tables import oracle
from tests.integration.databases import drop_database
from tests.integration.notifications.harness import Scratch
from tests.integration.poison.cases import REQUIRED, Case, build_cases, iso
from tests.integration.poison.run import LIMIT, Results, prepare, run, source

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1500)]

BAD = [case.name for case in build_cases(LIMIT) if case.reason is not None]
VALID = [case.name for case in build_cases(LIMIT) if case.reason is None]
KIND = {e.value: kind for e, kind in contract.NOTIFICATION_KIND.items()}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Results]:
    settings = get_settings()
    host, port = settings.kafka_bootstrap.rsplit(":", 1)
    assert port_open(host, int(port)), f"no Kafka broker at {settings.kafka_bootstrap}"
    tmp = tmp_path_factory.mktemp("poison")
    pipeline = Pipeline(tmp)  # a scratch database (and a topic of its own, not needed)
    try:
        delete_topic(pipeline.bootstrap, pipeline.topic)
        scratch = Scratch(state_dir=tmp / "state")
        prepare(scratch, pipeline)
        try:
            yield run(scratch, pipeline, tmp)
        finally:
            scratch.delete()
    finally:
        drop_database(pipeline.database)


def _dead_letters(results: Results, case: Case) -> tuple[list[str], list[str]]:
    """The reasons of the dead letters of the case's record, in the job and the processor."""
    where = results.positions[case.name]
    aggregation = [row.error for row in results.dead_rows if row.position == where]
    notifications = []
    for r in results.dlq:
        if source(r) == where:
            notifications.append((dict(r.headers).get("error") or b"").decode())
    return aggregation, notifications


def _check_counted_and_notified(results: Results, case: Case) -> None:
    """Every valid event of the case counted once (the copy at its own position) and notified
    once; its order's tables."""
    mine = len(case.before)
    index = {e.event_id: n for n, e in enumerate(case.before)}
    index |= {e.event_id: mine + 1 + n for n, e in enumerate(case.after)}
    for e in case.counted:
        rows = results.applied.get(e.event_id.lower(), [])
        assert len(rows) == 1, f"{e.event_type} {e.event_id} counted {len(rows)} times"
        landed = results.landed[(case.name, index.get(e.event_id, mine))]
        assert rows == [landed], f"{e.event_type} {e.event_id} counted from another record"
        notified = [n for n in results.notifications if n["event_id"] == e.event_id.lower()]
        assert len(notified) == 1, f"{e.event_type} {e.event_id} notified {len(notified)} times"
        (n,) = notified
        assert (n["order_id"], n["customer_id"], n["kind"]) == (
            e.order["id"],
            e.order["customer_id"],
            KIND[e.event_type],
        )
        assert n["_headers"] == {"id": n["notification_id"], "eventId": n["event_id"]}
    # The order around the record: its customer's, skus' and order's rows, as the oracle says.
    expected = oracle(case.around)
    tables = results.tables
    for customer, row in expected["customer_sales"].items():
        assert tables["customer_sales"].get(customer) == row, f"customer_sales {customer}"
    for sku, row in expected["product_sales"].items():
        assert tables["product_sales"].get(sku) == row, f"product_sales {sku}"
    statuses = Counter(results.order_state.get(e.order["id"]) for e in case.around[:1])
    assert statuses == +Counter(expected["order_status_counts"]), "order_state"
    customer = case.around[0].order["customer_id"]
    sequence = [
        (n["event_id"], n["occurred_at"])
        for n in results.notifications
        if n["customer_id"] == customer
    ]
    assert sequence == [(e.event_id, iso(e.occurred_at)) for e in case.around], (
        "the order's notifications, in order"
    )


@pytest.mark.parametrize("name", BAD)
def test_a_bad_record_is_one_dead_letter_in_each_stage_and_stops_nothing(
    results: Results, name: str
) -> None:
    case = results.case(name)
    aggregation, notifications = _dead_letters(results, case)
    assert aggregation == [case.reason], "the aggregation job's dead letters of the record"
    assert notifications == [case.reason], "the notifications processor's dead letters"
    where = results.positions[name]
    (row,) = [row for row in results.dead_rows if row.position == where]
    assert (row.key, row.value) == (case.record.key, case.record.value), "the raw record"
    (letter,) = [r for r in results.dlq if source(r) == where]
    assert (letter.key, letter.value) == (case.record.key, case.record.value), "the raw record"
    _check_counted_and_notified(results, case)


@pytest.mark.parametrize("name", VALID)
def test_an_unusual_valid_record_is_counted_and_notified(results: Results, name: str) -> None:
    case = results.case(name)
    assert _dead_letters(results, case) == ([], [])
    _check_counted_and_notified(results, case)


def test_no_stage_stopped_or_restarted(results: Results) -> None:
    assert results.problems == [], results.logs()
    assert (results.job_exit, results.notify_exit) == (0, 0), results.logs()


def test_the_tables_equal_the_oracle_of_every_valid_event(results: Results) -> None:
    expected = oracle([e for case in results.cases for e in case.counted])
    for table, rows in expected.items():
        assert results.tables[table] == rows, f"analytics.{table} differs from the oracle"


def test_nothing_else_is_a_dead_letter_or_notified(results: Results) -> None:
    bad = Counter(results.positions[name] for name in BAD)
    assert Counter(row.position for row in results.dead_rows) == bad
    assert Counter(source(r) for r in results.dlq) == bad
    counted = Counter(e.event_id.lower() for case in results.cases for e in case.counted)
    assert Counter(n["event_id"] for n in results.notifications) == counted
    assert {event_id: len(rows) for event_id, rows in results.applied.items()} == counted


def test_the_suite_covers_the_issue() -> None:
    assert len(BAD) >= 25
    assert set(REQUIRED) <= set(BAD), set(REQUIRED) - set(BAD)
    assert "valid-no-headers" in VALID  # a record without headers is valid (the corpus)
