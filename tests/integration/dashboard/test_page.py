"""The dashboard page in a real headless browser (Debian's /usr/bin/chromium via Playwright),
served by the real app on a loopback port, fed by a stand-in Prometheus, overview and journey
lookup: what the page draws and how it reads, without the stack (tests/e2e/test_dashboard.py
is the same page on the running stack)."""

import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
import uvicorn
from playwright.sync_api import Browser, Page

from onceflow.settings import ObservabilitySettings, Settings
from services.dashboard.app import create_app
from services.dashboard.login import Login
from services.dashboard.panels import PANELS
from stack.waiting import free_port
from tests.integration.dashboard.browser import chromium
from tests.unit.dashboard.fakes import (
    OUTCOME_LEVELS,
    PENDING_FOR_S,
    fake_prometheus,
    journey_doc,
    overview_hops,
)

ORDER = "0193a4b2-7c1d-7e3f-9a2b-3c4d5e6f7a8b"
LOGIN = Login("ops", "page-test-password")


class _Lookups:
    """The order's journey is under way for the first two reads, then complete."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self, order_id: UUID) -> dict[str, Any] | None:
        if str(order_id) != ORDER:
            return None
        self.reads += 1
        return journey_doc(ORDER, complete=self.reads > 2)


def _serve(prometheus_port: int) -> tuple[uvicorn.Server, str]:
    obs = ObservabilitySettings(prometheus_port=prometheus_port, prometheus_timeout_s=1)
    hops = lambda: overview_hops(connector="PAUSED")  # noqa: E731
    app = create_app(obs=obs, settings=Settings(), lookup=_Lookups(), hops=hops, login=LOGIN)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the dashboard app did not start"
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def dashboard() -> Iterator[str]:
    with fake_prometheus() as port:
        server, url = _serve(port)
        yield url
        server.should_exit = True


@pytest.fixture
def blind_dashboard() -> Iterator[str]:
    server, url = _serve(free_port())
    yield url
    server.should_exit = True


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture(params=["light", "dark"])
def page(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(
        viewport={"width": 1400, "height": 900},
        color_scheme=request.param,
        http_credentials={"username": LOGIN.user, "password": LOGIN.password},
    )
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, f"JavaScript errors: {errors}"


def test_every_panel_draws_and_status_and_alerts_show(dashboard: str, page: Page) -> None:
    page.goto(dashboard)
    keys = [panel.key for panel in PANELS]
    page.wait_for_function(
        "keys => keys.every(k => (window.onceflowDashboard.panels[k] || {}).points > 0)",
        arg=keys,
        timeout=15_000,
    )
    assert page.locator(".panel canvas").count() >= len(keys)
    for panel in PANELS:
        card = page.locator(f".panel[data-panel={panel.key}]")
        assert panel.title in card.inner_text()
        assert panel.unit.label in card.inner_text()  # the y axis names its unit
    assert "AggregationDown" in page.locator("#alert-list").inner_text()
    assert page.locator("#banner").is_hidden()


def test_the_first_view_is_the_overview_and_a_paused_connector_reads_paused(
    dashboard: str, page: Page
) -> None:
    page.goto(dashboard)
    page.wait_for_selector(".hop-tile[data-hop=connector]", timeout=10_000)
    tiles = page.locator(".hop-tile")
    assert [t.get_attribute("data-hop") for t in tiles.all()] == [
        "api",
        "connector",
        "aggregation",
        "reconciliation",
    ]
    connector = page.locator(".hop-tile[data-hop=connector]")
    assert connector.locator(".state").inner_text() == "paused"
    assert connector.get_attribute("data-calm") == "false"
    assert "connect RUNNING · up 1h2m · 1 restarts" in connector.inner_text()
    reconciliation = page.locator(".hop-tile[data-hop=reconciliation] .state").inner_text()
    assert reconciliation == "up"  # the fakes' clean last run (tests/unit/dashboard/fakes.py)
    assert page.locator(".hop-tile[data-hop=api] .state").inner_text() == "up"
    # The overview comes before the charts on the page.
    overview_y = page.locator("#overview").bounding_box()
    charts_y = page.locator("#hops").bounding_box()
    assert overview_y is not None
    assert charts_y is not None
    assert overview_y["y"] < charts_y["y"]


def test_a_journey_is_followed_until_every_hop_is_done(dashboard: str, page: Page) -> None:
    page.goto(f"{dashboard}/#journey={ORDER}")
    result = page.locator("#journey-result")
    page.wait_for_selector("#journey-result[data-state=partial]", timeout=10_000)
    paid = result.locator("li.event").nth(1)
    assert paid.locator("[data-hop=batch]").get_attribute("data-state") == "pending"
    assert "not applied yet" in paid.inner_text()
    page.wait_for_selector("#journey-result[data-state=complete]", timeout=20_000)
    for row in result.locator("li.event").all():
        for hop in ("api", "kafka", "batch", "notification"):
            assert row.locator(f"[data-hop={hop}]").get_attribute("data-state") == "done"
    text = result.inner_text()
    assert "partition 2 · offset 48219" in text
    assert "batch 1892" in text
    assert "+380 ms" in text  # Kafka's timestamp after the API commit


def test_bad_and_unknown_ids_read_as_sentences(dashboard: str, page: Page) -> None:
    page.goto(dashboard)
    for order_id, status, words in (
        ("42", "422", "UUID"),
        ("0193a4b2-0000-7000-8000-000000000000", "404", "no order"),
    ):
        page.fill("#journey-id", order_id)
        page.click("#journey-form button")
        page.wait_for_selector(f"#journey-result[data-status='{status}']", timeout=10_000)
        assert words in page.locator("#journey-result").inner_text()


def test_prometheus_down_shows_a_banner_not_a_hang(blind_dashboard: str, page: Page) -> None:
    started = time.monotonic()
    page.goto(blind_dashboard)
    page.locator("#banner").wait_for(state="visible", timeout=10_000)
    assert "Prometheus unreachable" in page.locator("#banner").inner_text()
    assert time.monotonic() - started < 10
    assert page.locator(".panel[data-state=error]").count() == len(PANELS)


def _drawn(page: Page) -> None:
    page.wait_for_function(
        "keys => keys.every(k => (window.onceflowDashboard.panels[k] || {}).points > 0)",
        arg=[panel.key for panel in PANELS],
        timeout=15_000,
    )


def test_headlines_say_what_they_sum_and_every_series_is_in_the_legend(
    dashboard: str, page: Page
) -> None:
    page.goto(dashboard)
    _drawn(page)
    shown = page.evaluate("() => window.onceflowDashboard.panels")
    notifications = shown["notifications_rate"]
    assert notifications["headline"]["label"] == "total"
    total = sum(notifications["legend"].values())
    assert notifications["headline"]["value"] == pytest.approx(total)
    assert total == pytest.approx(sum(OUTCOME_LEVELS.values()), abs=0.2)
    head = page.locator(".panel[data-panel=notifications_rate] .headline").inner_text()
    assert head.startswith("total"), head
    assert "26." in head, head
    for key in ("job_offsets_behind", "notifications_lag", "topic_lso_lag"):
        assert shown[key]["headline"]["label"] == "worst: partition 1", key
    assert shown["api_latency"]["headline"]["label"] == "p99"
    for panel in PANELS:
        legend = page.locator(f".panel[data-panel={panel.key}] .u-legend")
        for label in shown[panel.key]["legend"]:
            entry = legend.locator(".u-series", has_text=label).first
            assert entry.is_visible(), f"{panel.key}: {label} is not visible in the legend"


def test_the_range_picker_redraws_over_the_picked_window(dashboard: str, page: Page) -> None:
    page.goto(dashboard)
    _drawn(page)
    buttons = page.locator("#range button")
    assert [b.inner_text() for b in buttons.all()] == ["15m", "1h", "6h", "24h", "7d"]
    assert page.locator("#range button[aria-pressed=true]").inner_text() == "15m"
    page.click("#range button[data-range='6h']")
    # 6 hours at a point every 30 s: 721 points for the one series of a panel.
    page.wait_for_function(
        "() => window.onceflowDashboard.panels.debezium_events.points === 721", timeout=10_000
    )
    assert "range=6h" in page.url
    assert "last 6h" in page.locator("#window").inner_text()
    page.reload()  # the address keeps the range
    page.wait_for_function("() => window.onceflowDashboard.range === '6h'", timeout=10_000)


def test_alert_cards_say_how_long_and_link_their_runbooks(dashboard: str, page: Page) -> None:
    page.goto(dashboard)
    page.wait_for_selector("#alert-list li[data-state=pending]", timeout=10_000)
    pending = page.locator("#alert-list li[data-state=pending]")
    since = pending.locator(".since").inner_text()
    match = re.fullmatch(r"pending for (\d+) s", since)
    assert match, since
    assert PENDING_FOR_S <= int(match.group(1)) <= PENDING_FOR_S + 5, since
    firing = page.locator("#alert-list li[data-state=firing] .since").inner_text()
    assert firing.startswith("firing, true for"), firing
    link = pending.locator("a.runbook")
    assert link.get_attribute("href") == "/docs/operations.md#connectorpausedtoolong"
    with page.context.expect_page() as opened:
        link.click()
    runbook = opened.value
    runbook.wait_for_load_state()
    section = runbook.locator("#connectorpausedtoolong")
    assert section.inner_text() == "ConnectorPausedTooLong"
    assert section.is_visible()
    runbook.close()
