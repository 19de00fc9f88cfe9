"""Fields staged without COPY escaping can never hold a tab, newline, CR or backslash: every
value that passes the contract's pattern for such a field is free of them."""

import re

from hypothesis import given
from hypothesis import strategies as st

from onceflow import contract
from spark_jobs.aggregation import staging

COPY_SPECIAL = re.compile(r"[\t\n\r\\]")
# The validation each verbatim text column of staging.EVENTS passes in parse.py.
PATTERNS = {
    "event_id": contract.UUID,
    "occurred_at": contract.TIMESTAMP,
    "customer_id": contract.IDENTIFIER,
    "currency": contract.CURRENCY,
    "items": contract.IDENTIFIER,  # the skus inside the JSON; the rest are numbers and keys
}
ENUMS = {
    "event_type": [e.value for e in contract.EventType],
    "status": [s.value for s in contract.OrderStatus],
}
# Spark-typed numbers, dates and timestamps: rendered as digits, separators and spaces only.
NUMERIC = {
    "kafka_partition",
    "kafka_offset",
    "kafka_timestamp",
    "day",
    "status_rank",
    "total_cents",
}


def test_every_verbatim_column_is_numeric_enumerated_or_pattern_checked() -> None:
    verbatim = {c.name for c in staging.EVENTS.columns if c.encoding == "verbatim"}
    assert verbatim == set(PATTERNS) | set(ENUMS) | NUMERIC


def test_enumerated_values_hold_no_copy_special_character() -> None:
    assert not any(COPY_SPECIAL.search(v) for values in ENUMS.values() for v in values)


@given(
    st.sampled_from(sorted(PATTERNS)).flatmap(
        lambda column: st.from_regex(rf"\A(?:{PATTERNS[column]})\Z", fullmatch=True)
    )
)
def test_pattern_checked_values_hold_no_copy_special_character(value: str) -> None:
    assert not COPY_SPECIAL.search(value)
