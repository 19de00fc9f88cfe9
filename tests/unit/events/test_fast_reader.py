"""The v1 reader's fast path (onceflow.event_reader_fast, compiled from the definition) accepts
only records the exact path accepts, with the same document: over the shared bad-record corpus
(tests/oracle/bad_records.py) in every form, and over generated valid and near-valid records.
And it does accept the valid records the connector writes (else it would be no fast path)."""

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from onceflow.events import InvalidEventError, exact, fast, parse
from tests.oracle.bad_records import FORMS, GOOD, LIMIT, Bad, corpus, wire
from tests.oracle.events import Record, event
from tests.oracle.generated import records, valid_events

CORPUS = corpus(LIMIT)


def exact_doc(r: Record) -> dict[str, Any] | str:
    """The exact path's document, or its reason."""
    key, value, _topic, _partition, _offset, headers = r
    try:
        return exact(key, value, headers, LIMIT)
    except InvalidEventError as error:
        return str(error)


def fast_doc(r: Record) -> dict[str, Any] | None:
    key, value, _topic, _partition, _offset, headers = r
    return fast(key, value, headers, LIMIT)


def agree(r: Record) -> dict[str, Any] | None:
    """Assert the fast path accepts nothing the exact one refuses, with the same document."""
    quick = fast_doc(r)
    if quick is not None:
        assert exact_doc(r) == quick
        assert json.dumps(quick) == json.dumps(exact_doc(r))  # types too (1 is no 1.0)
    return quick


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("bad", CORPUS, ids=lambda b: b.name)
def test_the_fast_path_refuses_every_bad_record(bad: Bad, form: str) -> None:
    r = bad.make(FORMS[form])
    assert fast_doc(r) is None
    key, value, _topic, _partition, _offset, headers = r
    with pytest.raises(InvalidEventError) as refused:
        parse(key, value, headers, LIMIT)
    assert str(refused.value) == bad.reason


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", GOOD)
def test_the_paths_agree_on_the_unusual_valid_records(name: str, form: str) -> None:
    r = GOOD[name](FORMS[form])
    # Either path's document is the value as orjson reads it (the notifications processor's
    # content fingerprint is taken of the document, services/notifications/fingerprint.py).
    assert exact_doc(r) == orjson.loads(r[1])
    quick = agree(r)
    # Escapes are left to the exact path; every other valid record takes the fast one.
    assert (quick is None) == (b"\\" in r[1])


def test_a_duplicate_key_is_left_to_the_exact_path() -> None:
    e = event()
    for dup in ('{"event_type": "OrderPaid", ', '{"schema_version": 1, '):
        value = dup.encode() + json.dumps(e).encode()[1:]
        r: Record = (e["order"]["id"].encode(), value, "t", 0, 0, [])
        assert fast_doc(r) is None
        assert exact_doc(r) == "value has a duplicate key in a JSON object"


def test_the_connectors_form_takes_the_fast_path() -> None:
    e = event("OrderShipped")
    headers = [("id", e["event_id"].encode()), ("eventType", b"OrderShipped")]
    r: Record = (e["order"]["id"].encode(), wire(e).encode(), "t", 0, 0, headers)
    assert fast_doc(r) == e


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_the_paths_agree_on_generated_records(r: Record) -> None:
    agree(r)


@settings(max_examples=100, deadline=None)
@given(valid_events(), st.sampled_from(list(FORMS)))
def test_a_generated_valid_event_takes_the_fast_path(e: dict[str, Any], form: str) -> None:
    headers = [("id", e["event_id"].encode()), ("eventType", e["event_type"].encode())]
    r: Record = (e["order"]["id"].encode(), FORMS[form](e).encode(), "t", 0, 0, headers)
    assert agree(r) == e
