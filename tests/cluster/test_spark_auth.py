"""The cluster's Spark master runs only applications that hold the cluster's shared secret
(spark.authenticate, docs/security.md): a driver without it, or with a wrong one, is refused
and never registered; the job, which reads the secret from its file, is registered and runs.
The master's and the job's environment pages say authentication is on and show the secret
redacted."""

import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from onceflow.settings import get_aggregation_settings
from onceflow.settings.spark_auth import SparkAuthSettings
from onceflow.topology import Layout
from stack import spark
from stack.waiting import wait_for
from tests.cluster.spark_apps import refused, running_app

pytestmark = pytest.mark.integration

# How Spark's UI shows a value spark.redaction.regex matches (its default matches "secret").
REDACTED = "*********(redacted)"


def _known_apps(state: dict[str, Any]) -> set[str]:
    """The names of every application the master has registered, running or finished."""
    return {app["name"] for app in [*state["activeapps"], *state["completedapps"]]}


def test_a_driver_without_the_secret_is_refused(layout: Layout, tmp_path: Path) -> None:
    cluster = layout.spark
    assert cluster is not None
    run = uuid.uuid4().hex[:8]
    wrong = {"spark.authenticate": "true", "spark.authenticate.secret": f"not-it-{run}"}
    attempts: dict[str, dict[str, str]] = {f"no-secret-{run}": {}, f"wrong-secret-{run}": wrong}
    with ExitStack() as stack:
        logs = [
            stack.enter_context(running_app(cluster.url, name, conf, tmp_path / f"{name}.log"))
            for name, conf in attempts.items()
        ]
        # Both drivers start side by side (a JVM each, 10-20 s), then try to register.
        wait_for(
            lambda: all(refused(log) for log in logs),
            what="both drivers refused by the master",
            timeout=90,
        )
        known = _known_apps(spark.master_state(cluster))
    texts = {log.name: log.read_text(errors="replace") for log in logs}
    # Refused by the authentication, not by anything else: the master expects a SASL
    # handshake from a driver with no secret, and the wrong secret's digest does not match.
    assert "SASL" in texts[f"no-secret-{run}.log"]
    assert "Mismatched response" in texts[f"wrong-secret-{run}.log"]
    assert known
    assert not set(attempts) & known


def test_the_job_holds_the_secret_and_is_registered(layout: Layout) -> None:
    cluster = layout.spark
    assert cluster is not None
    apps = spark.master_state(cluster)["activeapps"]
    (job,) = [app for app in apps if app["name"] == "onceflow-aggregation"]
    assert job["state"] == "RUNNING"
    secret = SparkAuthSettings().secret()
    # The master's environment page and the job's (its UI and REST API) show it redacted.
    agg = get_aggregation_settings()
    driver = f"http://127.0.0.1:{agg.agg_ui_port}"
    (app,) = httpx.get(f"{driver}/api/v1/applications", timeout=10).json()
    environment = httpx.get(f"{driver}/api/v1/applications/{app['id']}/environment", timeout=10)
    assert secret not in environment.text
    properties = environment.json()["sparkProperties"]
    assert ["spark.authenticate", "true"] in properties
    assert ["spark.authenticate.secret", REDACTED] in properties
    assert secret not in httpx.get(f"{driver}/environment/", timeout=10).text
    page = httpx.get(f"{cluster.ui}/environment/", timeout=10).text
    assert secret not in page
    assert "spark.authenticate</td><td>true" in page
    assert f"spark.authenticate.secret</td><td>{REDACTED}" in page
