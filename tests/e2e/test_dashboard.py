"""The dashboard as a person sees it: a real headless browser (Debian's /usr/bin/chromium, driven
by Playwright) on the running stack's dashboard, after orders went through the API.

Every chart must have drawn points under a headline that says what it is, an order's journey
must show every hop, a paused connector must read "paused" in the overview (the CLI's and the
dashboard's first view) with its pending alert's age and runbook, and a dashboard whose
Prometheus is down must say so. Screenshots land in .stack/artifacts/ (paths printed).
"""

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page
from typer.testing import CliRunner

from onceflow import paths
from onceflow.settings import Settings, get_observability_settings
from onceflow.settings.ops import get_ops_settings
from services.dashboard.panels import PANELS, ranges
from services.ops import cli, connect_api
from stack.waiting import free_port, wait_for
from tests.e2e.orders import act, place
from tests.integration.dashboard.browser import chromium

ARTIFACTS = paths.STATE / "artifacts"
# Rates need two scrapes after the orders, the job a micro-batch, notifications a transaction.
DRAWN_WITHIN_S = 180
# The dashboard asks for the ops credential (HTTP Basic); the browser and httpx give it.
OPS = get_ops_settings()
ALL_DRAWN = """keys => {
  const s = window.onceflowDashboard;
  return !!s && keys.every(k => s.panels[k] && s.panels[k].points > 0);
}"""


@pytest.fixture(scope="module")
def dashboard_url() -> str:
    url = f"http://127.0.0.1:{get_observability_settings().dashboard_port}"
    try:
        healthy = httpx.get(url + "/healthz", timeout=5).status_code == 200
    except httpx.TransportError:
        healthy = False
    assert healthy, f"the dashboard does not answer at {url}: run `make up`"
    return url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(
        viewport={"width": 1600, "height": 1000},
        http_credentials={"username": OPS.ops_user, "password": OPS.password()},
    )
    opened = context.new_page()
    yield opened
    context.close()


def _screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def _post_orders(api: httpx.Client, count: int, over_s: float) -> list[dict[str, Any]]:
    """Orders spread over several scrapes: a labelled series that appears with its whole count
    at one scrape has no rate() yet, so a burst alone would leave latency without points."""
    orders = []
    for n in range(count):
        time.sleep(over_s / count)
        items = [{"sku": f"DASH-{n % 3}", "quantity": 1 + n % 4, "unit_price_cents": 250 * n}]
        order = place(api, f"dash-c{n % 5}", "EUR", items)
        if n % 2:
            order = act(api, order["id"], "pay")
        orders.append(order)
    return orders


def test_every_chart_draws_points_after_orders_pass(
    api: httpx.Client, dashboard_url: str, page: Page
) -> None:
    _post_orders(api, 30, over_s=20)
    page.goto(dashboard_url)
    keys = [panel.key for panel in PANELS]
    try:
        page.wait_for_function(ALL_DRAWN, arg=keys, timeout=DRAWN_WITHIN_S * 1000, polling=1000)
    except Exception:
        _screenshot(page, "dashboard-failed.png")
        panels = page.evaluate("() => window.onceflowDashboard && window.onceflowDashboard.panels")
        empty = {key: (panels or {}).get(key) for key in keys if not (panels or {}).get(key)}
        empty |= {k: v for k, v in (panels or {}).items() if v["points"] == 0}
        pytest.fail(f"charts without points after {DRAWN_WITHIN_S} s: {empty}")
    state = page.evaluate("() => window.onceflowDashboard")
    assert state["prometheus"] == "ok"
    assert page.locator("#banner").is_hidden()
    page.wait_for_function("() => window.onceflowDashboard.overview", timeout=30_000)
    overview = page.evaluate("() => window.onceflowDashboard.overview")
    assert "error" not in overview, overview
    assert set(overview["tiles"]) >= {"api", "slot", "connector", "topic", "aggregation"}
    drawn = page.locator(".panel[data-state=ok] canvas").count()
    assert drawn >= len(keys), f"{drawn} canvases for {len(keys)} panels"
    headlines = {k: p["headline"] for k, p in state["panels"].items() if p["headline"]}
    assert headlines, "no panel has a headline"  # None: no sample in the last step yet
    for key, headline in headlines.items():  # each names what it is: total, worst, a series
        label = headline["label"]
        legend = state["panels"][key]["legend"]
        assert label == "total" or label.startswith("worst: ") or label in legend, (key, label)
    retention = get_observability_settings().prometheus_retention_time
    offered = [b.inner_text() for b in page.locator("#range button").all()]
    assert offered == [r["label"] for r in ranges(retention)]
    _screenshot(page, "dashboard.png")


def _complete(journey: dict[str, Any], events: int) -> bool:
    """The order committed, and each of its events is in Kafka, applied by a committed batch
    and notified (services.ops.journey's shape)."""
    return (
        journey.get("order") is not None
        and len(journey["events"]) == events
        and all(
            e["kafka"]["offset"] is not None
            and e["batch"] is not None
            and e["batch"]["committed_at"] is not None
            and e["notification"]["produced"] is True
            for e in journey["events"]
        )
    )


def test_an_orders_journey_shows_every_hop(
    api: httpx.Client, dashboard_url: str, page: Page
) -> None:
    items = [{"sku": "J-1", "quantity": 2, "unit_price_cents": 990}]
    order = place(api, "dash-journey", "EUR", items)
    act(api, order["id"], "pay")
    journey: dict[str, Any] = {}

    def arrived() -> bool:
        nonlocal journey
        answer = httpx.get(
            f"{dashboard_url}/api/journey/{order['id']}", timeout=20, auth=OPS.auth()
        )
        journey = answer.json() if answer.status_code == 200 else {}
        return bool(journey) and _complete(journey, events=2)

    wait_for(arrived, what=f"every hop of order {order['id']}", timeout=180, interval=2)
    page.goto(f"{dashboard_url}/#journey={order['id']}")
    result = page.locator("#journey-result")
    page.wait_for_selector("#journey-result[data-state=complete]", timeout=30_000)
    rows = result.locator("li.event")
    assert rows.count() == 2
    for event in journey["events"]:
        row = result.locator(f"li.event[data-event='{event['event_id']}']")
        for hop in ("api", "kafka", "batch", "notification"):
            assert row.locator(f"[data-hop={hop}]").get_attribute("data-state") == "done", hop
        text = row.inner_text()
        kafka, batch = event["kafka"], event["batch"]
        assert f"partition {kafka['partition']} · offset {kafka['offset']}" in text
        assert f"batch {batch['batch_id']}" in text
        assert event["event_type"] in text
    assert order["id"] in result.inner_text()
    result.scroll_into_view_if_needed()
    _screenshot(page, "dashboard-journey.png")


def test_a_malformed_and_an_unknown_order_read_as_sentences(dashboard_url: str, page: Page) -> None:
    page.goto(dashboard_url)
    for order_id, status in (
        ("not-an-order", "422"),
        ("0193a4b2-0000-7000-8000-000000000000", "404"),
    ):
        page.fill("#journey-id", order_id)
        page.click("#journey-form button")
        page.wait_for_selector(f"#journey-result[data-status='{status}']", timeout=30_000)
        text = page.locator("#journey-result").inner_text()
        assert "Traceback" not in text
        assert ("UUID" if status == "422" else "no order") in text


def test_prometheus_down_reads_as_prometheus_unreachable(page: Page) -> None:
    """A second dashboard pointed at a port where no Prometheus listens (the stack's own
    Prometheus keeps running): the page says so within seconds, the charts stay calm."""
    port, nowhere = free_port(), free_port()
    env = {
        **os.environ,
        "ONCEFLOW_DASHBOARD_PORT": str(port),
        "ONCEFLOW_PROMETHEUS_PORT": str(nowhere),
        "ONCEFLOW_PROMETHEUS_TIMEOUT_S": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "services.dashboard"],
        cwd=paths.ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(
            lambda: httpx.get(url + "/healthz").status_code == 200, what="dashboard", timeout=30
        )
        started = time.monotonic()
        page.goto(url)
        banner = page.locator("#banner")
        banner.wait_for(state="visible", timeout=15_000)
        assert "Prometheus unreachable" in banner.inner_text()
        assert time.monotonic() - started < 15
        assert page.locator(".panel[data-state=error]").count() == len(PANELS)
        _screenshot(page, "dashboard-prometheus-down.png")
    finally:
        process.terminate()
        process.wait(timeout=20)


def _connector_state(settings: Settings) -> str:
    return str(connect_api.status(settings=settings)["connector"]["state"])


def _cli_connector() -> dict[str, Any]:
    result = CliRunner().invoke(cli.app, ["overview", "--json"])
    assert result.exit_code == 0, result.output
    hops = {hop["hop"]: hop for hop in json.loads(result.stdout)["hops"]}
    connector: dict[str, Any] = hops["connector"]
    return connector


def test_a_paused_connector_reads_paused_in_the_overview_and_the_dashboard(
    settings: Settings, dashboard_url: str, page: Page
) -> None:
    """Paused through Connect's REST API; resumed in any case. The overview's tile and
    `onceflow-ops overview` say paused, not "up"; the pending alert says for how long."""
    wait_for(lambda: _connector_state(settings) == "RUNNING", what="connector running", timeout=60)
    page.goto(dashboard_url)
    tile = ".hop-tile[data-hop=connector]"
    page.wait_for_selector(f"{tile}[data-state=up]", timeout=30_000)
    connect_api.pause(settings=settings)
    try:
        page.wait_for_selector(f"{tile}[data-state=paused]", timeout=30_000)
        assert page.locator(f"{tile} .state").inner_text() == "paused"
        assert page.locator(tile).get_attribute("data-calm") == "false"
        served = httpx.get(f"{dashboard_url}/api/overview", timeout=30, auth=OPS.auth()).json()
        assert {t["hop"]: t["state"] for t in served["tiles"]}["connector"] == "paused"
        in_cli = _cli_connector()
        assert in_cli["connector"]["state"] == "PAUSED"
        assert in_cli["healthy"] is False
        card = "#alert-list li[data-alert=ConnectorPausedTooLong]"
        page.wait_for_selector(f"{card}[data-state=pending]", timeout=30_000)
        since = page.locator(f"{card} .since").inner_text()
        assert re.fullmatch(r"pending for \d+ s", since), since  # not "for over 15 minutes"
        link = page.locator(f"{card} a.runbook").get_attribute("href")
        assert link == "/docs/operations.md#connectorpausedtoolong"
        assert httpx.get(dashboard_url + link, timeout=10, auth=OPS.auth()).status_code == 200
        _screenshot(page, "dashboard-paused.png")
    finally:  # the next test finds the connector running, also when this one failed
        connect_api.resume(settings=settings)
        wait_for(
            lambda: _connector_state(settings) == "RUNNING", what="connector resumed", timeout=60
        )
    page.wait_for_selector(f"{tile}[data-state=up]", timeout=30_000)
