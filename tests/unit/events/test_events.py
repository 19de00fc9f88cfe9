"""The Python reader (onceflow.events) gives every bad record of the shared corpus its reason in
every serialized form, accepts the unusual valid ones, and agrees with the independent oracle
(tests/oracle/validity.py) on valid versus invalid. tests/spark/aggregation/test_bad_records.py
holds the Spark parser to the same corpus."""

import pytest

from onceflow.events import parse
from tests.oracle.bad_records import FORMS, GOOD, LIMIT, Bad, corpus
from tests.oracle.events import Record, event, record
from tests.oracle.validity import is_valid
from tests.python_reader import reason

CORPUS = corpus(LIMIT)


def oracle(r: Record) -> bool:
    key, value, _topic, _partition, _offset, headers = r
    return is_valid(key, value, headers, LIMIT)


def test_the_corpus_has_at_least_25_kinds() -> None:
    names = [bad.name for bad in CORPUS]
    assert len(set(names)) == len(names) >= 25


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("bad", CORPUS, ids=lambda b: b.name)
def test_a_bad_record_gets_its_reason(bad: Bad, form: str) -> None:
    r = bad.make(FORMS[form])
    assert reason(r) == bad.reason
    assert not oracle(r)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", GOOD)
def test_an_unusual_valid_record_is_valid(name: str, form: str) -> None:
    r = GOOD[name](FORMS[form])
    assert reason(r) is None
    assert oracle(r)


def test_the_first_header_of_a_name_counts() -> None:
    e = event()
    first_wins = [("id", e["event_id"].encode()), ("id", b"other")]
    assert reason(record(e, headers=first_wins)) is None
    second = [("id", b"other"), ("id", e["event_id"].encode())]
    assert reason(record(e, headers=second)) == "header id does not match event_id"


def test_a_valid_event_yields_its_fields() -> None:
    e = event("OrderPaid", event_id="0AB2C3D4-0000-4000-8000-000000000001")
    key, value, _topic, _partition, _offset, headers = record(e)
    parsed = parse(key, value, headers)
    assert parsed.event_id == "0ab2c3d4-0000-4000-8000-000000000001"
    assert (parsed.event_type, parsed.order_id, parsed.total_cents) == (
        "OrderPaid",
        e["order"]["id"],
        2600,
    )
