"""The notifications' content fingerprint of a valid event (fingerprint.py): of its content,
not its bytes; computed over the connector's canonical form (jsonb's key order, no whitespace)."""

import json

import orjson

from services.notifications.fingerprint import SIZE, canonical, fingerprint, walked
from tests.oracle.events import event


def test_the_same_content_in_other_bytes_has_the_same_fingerprint() -> None:
    e = event()
    as_written = json.dumps(e).encode()
    others = [
        json.dumps(e, sort_keys=True, indent=2).encode(),
        json.dumps(dict(reversed(list(e.items())))).encode(),
        as_written.replace(b'"SKU-1"', b'"SKU\\u002d1"'),
    ]
    assert {fingerprint(v) for v in others} == {fingerprint(as_written)}
    assert len(fingerprint(as_written)) == SIZE


def test_other_content_has_another_fingerprint() -> None:
    e = event()
    changed = [
        {**e, "occurred_at": "2026-11-22T23:59:59.999998Z"},
        {**e, "order": {**e["order"], "updated_at": "2026-11-23T00:00:00Z"}},
        {**e, "order": {**e["order"], "items": [*reversed(e["order"]["items"])]}},
        {**e, "event_id": e["event_id"].upper()},
    ]
    values = [json.dumps(x).encode() for x in (e, *changed)]
    assert len({fingerprint(v) for v in values}) == len(values)


def test_the_canonical_form_is_the_connectors() -> None:
    e = event()
    text = orjson.dumps(canonical(e)).decode()
    assert text.startswith('{"order":{"id":')  # jsonb: shorter keys first
    assert '"items":[{"sku":"SKU-1","quantity":2,"unit_price_cents":1250}' in text
    assert text.endswith(f'"occurred_at":"{e["occurred_at"]}","schema_version":1}}')


def test_the_compiled_canonical_form_is_the_walked_one() -> None:
    items = [{"sku": f"SKU-{n}", "quantity": n, "unit_price_cents": 10 * n} for n in (3, 1, 2)]
    one, three = {"items": items[:1]}, {"items": items}
    events = [event(), event("OrderPaid", order=one), event(order=three)]
    for e in events:
        shuffled = {k: e[k] for k in reversed(e)}  # another key order in, the wire order out
        assert orjson.dumps(canonical(shuffled)) == orjson.dumps(walked(e))
        assert list(canonical(shuffled)["order"]) == list(walked(e)["order"])
