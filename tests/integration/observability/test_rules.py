"""The alert rules (observability/prometheus/rules) are valid, pass their promtool unit tests,
and every alert is tested both firing and quiet; Prometheus's config loads them. Needs the
`promtool` binary (Debian package prometheus), not the running stack."""

import subprocess
from collections import defaultdict

from tests.integration.observability.rules import (
    CONFIG,
    PROMETHEUS_DIR,
    RULE_FILES,
    RULE_TESTS,
    alert_rules,
    load,
    promtool,
)


def _promtool(*args: str) -> str:
    result = subprocess.run(
        [promtool(), *args], cwd=PROMETHEUS_DIR, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_promtool_checks_the_rules() -> None:
    assert RULE_FILES
    _promtool("check", "rules", *map(str, RULE_FILES))


def test_promtool_unit_tests_pass() -> None:
    assert RULE_TESTS
    _promtool("test", "rules", *map(str, RULE_TESTS))


def test_prometheus_config_is_valid_and_loads_every_rule_file() -> None:
    out = _promtool("check", "config", str(CONFIG))
    assert f"SUCCESS: {len(RULE_FILES)} rule files found" in out


def test_every_alert_is_tested_firing_and_quiet_on_healthy_series() -> None:
    """A firing case (an exp_alerts entry) and a quiet case (empty exp_alerts in a test named
    `healthy: ...`, on series of a working pipeline) for every alert."""
    cases: dict[str, set[str]] = defaultdict(set)
    for path in RULE_TESTS:
        for test in load(path)["tests"]:
            healthy = str(test.get("name", "")).startswith("healthy")
            for case in test.get("alert_rule_test", []):
                if case.get("exp_alerts"):
                    cases[case["alertname"]].add("fires")
                elif healthy:
                    cases[case["alertname"]].add("quiet")
    names = [rule["alert"] for rule in alert_rules()]
    missing = {name: {"fires", "quiet"} - cases[name] for name in names}
    assert {name: sorted(what) for name, what in missing.items() if what} == {}
