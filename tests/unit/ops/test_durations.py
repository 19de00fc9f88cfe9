"""`clients rotate --overlap` and `--expires-in` durations: a number and a unit, or a sum."""

from datetime import timedelta

import pytest

from onceflow.client_keys import ClientError
from services.ops.clients import parse_duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", timedelta(seconds=90)),
        ("30m", timedelta(minutes=30)),
        ("24h", timedelta(hours=24)),
        ("7d", timedelta(days=7)),
        ("2w", timedelta(weeks=2)),
        ("1h30m", timedelta(minutes=90)),
        (" 1h 30m ", timedelta(minutes=90)),
    ],
)
def test_durations(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["", "24", "h", "1y", "-1h", "1.5h", "1h-30m", "soon"])
def test_anything_else_is_a_clear_error(text: str) -> None:
    with pytest.raises(ClientError, match=r"is not a duration: use e\.g\. 90s"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["3651d", "9999999999d", "99999999999999999999w"])
def test_a_duration_past_the_longest_is_a_clear_error(text: str) -> None:
    with pytest.raises(ClientError, match=r"is too long: at most 3650d \(omit it for never\)"):
        parse_duration(text)
