"""The Python reader's (onceflow.events) reason for a test record: what the other reader and
the running consumers are held to."""

from onceflow.events import InvalidEventError, parse
from tests.oracle.bad_records import LIMIT
from tests.oracle.events import Record


def reason(r: Record) -> str | None:
    """The record's dead-letter reason, or None for a valid v1 event."""
    key, value, _topic, _partition, _offset, headers = r
    try:
        parse(key, value, headers, LIMIT)
    except InvalidEventError as error:
        return str(error)
    return None
