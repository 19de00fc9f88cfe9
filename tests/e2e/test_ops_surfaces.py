"""The running stack's ops surfaces refuse what issue 24 showed them doing (contract section 2b):
the dashboard, its journey view and its Prometheus proxy answer 401 without the ops credential
and the proxy runs only the panels' queries; Prometheus sends no `Access-Control-Allow-Origin`
to another origin; the job's Spark UI cannot kill a job or a stage."""

import itertools
import uuid

import httpx
import pytest

from onceflow.settings import get_aggregation_settings, get_observability_settings
from onceflow.settings.ops import get_ops_settings
from services.dashboard.panels import PANELS
from stack.waiting import wait_for
from tests.e2e.orders import place

OBSERVE = get_observability_settings()
DASHBOARD = f"http://127.0.0.1:{OBSERVE.dashboard_port}"
EVIL = "http://evil.example"


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/api/overview",
        "/api/panels",
        f"/api/journey/{uuid.uuid4()}",
        "/api/prom/query_range?query=up&start=0&end=10&step=5",
        "/api/prom/alerts",
        "/docs/operations.md",
    ],
)
@pytest.mark.parametrize("auth", [None, ("ops", "wrong")])
def test_the_dashboard_refuses_without_the_ops_credential(
    path: str, auth: tuple[str, str] | None
) -> None:
    answer = httpx.get(DASHBOARD + path, auth=auth, timeout=10)
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Basic")
    assert answer.headers["content-type"] == "application/problem+json"
    assert httpx.get(DASHBOARD + "/healthz", timeout=10).status_code == 200


def test_the_dashboards_proxy_runs_its_panels_queries_only() -> None:
    auth = get_ops_settings().auth()
    window = {"start": "0", "end": "60", "step": "5"}
    panel = httpx.get(
        f"{DASHBOARD}/api/prom/query_range",
        params={"query": PANELS[0].series[0].expr, **window},
        auth=auth,
        timeout=10,
    )
    assert panel.status_code == 200, panel.text
    for query in ("up", 'count({__name__=~".+"})'):
        refused = httpx.get(
            f"{DASHBOARD}/api/prom/query_range",
            params={"query": query, **window},
            auth=auth,
            timeout=10,
        )
        assert refused.status_code == 403, query
        assert refused.json()["type"].endswith("query-not-offered")


@pytest.mark.parametrize("path", ["/api/v1/query?query=up", "/api/v1/targets", "/-/ready"])
def test_prometheus_answers_no_other_origin(path: str) -> None:
    answer = httpx.get(OBSERVE.prometheus_url + path, headers={"Origin": EVIL}, timeout=10)
    assert answer.status_code == 200
    assert "access-control-allow-origin" not in answer.headers


def test_the_spark_ui_cannot_kill(api: httpx.Client) -> None:
    agg = get_aggregation_settings()
    if not agg.agg_ui_enabled:
        pytest.skip("the Spark UI is off (ONCEFLOW_AGG_UI_ENABLED=false)")
    ui = f"http://127.0.0.1:{agg.agg_ui_port}"
    (app,) = httpx.get(f"{ui}/api/v1/applications", timeout=10).json()
    env = httpx.get(f"{ui}/api/v1/applications/{app['id']}/environment", timeout=10).json()
    assert ["spark.ui.killEnabled", "false"] in env["sparkProperties"]
    # Orders make micro-batches; the first job seen running is asked to die from the UI.
    jobs = f"{ui}/api/v1/applications/{app['id']}/jobs"
    polls, asked = itertools.count(), []

    def kill_a_running_job() -> bool:
        if next(polls) % 40 == 0:
            place(api, "ui-kill", "EUR", [{"sku": "K-1", "quantity": 1, "unit_price_cents": 1}])
        running = httpx.get(jobs, params={"status": "running"}, timeout=10).json()
        for job in running:
            httpx.get(f"{ui}/jobs/job/kill/", params={"id": job["jobId"]}, timeout=10)
            asked.append(job["jobId"])
        return bool(running)

    wait_for(kill_a_running_job, what="a running job to ask a kill of", timeout=90, interval=0.05)
    for job_id in asked:

        def ended(job_id: int = job_id) -> bool:
            return bool(httpx.get(f"{jobs}/{job_id}").json()["status"] != "RUNNING")

        wait_for(ended, what=f"job {job_id} to end", timeout=60)
        assert httpx.get(f"{jobs}/{job_id}").json()["status"] == "SUCCEEDED", job_id
