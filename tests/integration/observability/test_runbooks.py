"""Every alert has a severity, a templated summary and a runbook: a link to its own section of
docs/operations.md, which exists."""

import pytest

from tests.integration.observability.rules import RUNBOOKS, alert_rules, anchor, heading_anchors

RULES = alert_rules()


def test_at_least_twelve_alerts_with_unique_names() -> None:
    names = [rule["alert"] for rule in RULES]
    assert len(names) >= 12
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("rule", RULES, ids=[rule["alert"] for rule in RULES])
def test_alert_has_severity_summary_and_its_own_runbook(rule: dict[str, object]) -> None:
    labels = rule.get("labels")
    annotations = rule.get("annotations")
    assert isinstance(labels, dict)
    assert isinstance(annotations, dict)
    assert labels.get("severity") in {"critical", "warning"}
    assert len(str(annotations.get("summary", ""))) > 20
    own = anchor(str(rule["alert"]))
    assert annotations.get("runbook") == f"docs/operations.md#{own}"
    assert own in heading_anchors(RUNBOOKS.read_text()), f"no section {own} in {RUNBOOKS.name}"
