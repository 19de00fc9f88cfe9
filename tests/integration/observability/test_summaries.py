"""An alert's summary is shown while it is pending too (Prometheus renders it at once): it
must not claim the rule's `for:` duration, which has not passed yet. The dashboard and
`onceflow-ops alerts` say how long it has been pending or firing. A duration of the expression
itself (`increase(...[10m])`, `min_over_time(...[5m])`) is a fact from the first evaluation
and may be named."""

import re

import pytest

from tests.integration.observability.rules import alert_rules

RULES = [rule for rule in alert_rules() if "for" in rule]
UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}


def _spoken(duration: str) -> str:
    """`15m` -> `15 minute` (the stem of "15 minutes")."""
    match = re.fullmatch(r"(\d+)([smhd])", duration)
    assert match, f"unexpected duration {duration!r}"
    return f"{match.group(1)} {UNITS[match.group(2)]}"


def test_every_rule_with_a_for_is_checked() -> None:
    assert len(RULES) >= 12


@pytest.mark.parametrize("rule", RULES, ids=[rule["alert"] for rule in RULES])
def test_the_summary_does_not_claim_the_pending_duration(rule: dict[str, object]) -> None:
    duration = str(rule["for"])
    looked_back = re.findall(r"\[(\d+[smhd])\]", str(rule["expr"]))  # the expression's own
    summary = str(rule["annotations"]["summary"])  # type: ignore[index]
    claimed = _spoken(duration) in summary
    assert not claimed or duration in looked_back, (
        f"{rule['alert']}: the summary claims {duration}, which has not passed while it is pending"
    )
