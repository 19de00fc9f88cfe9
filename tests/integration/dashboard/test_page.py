"""The dashboard page in a real headless browser (Debian's /usr/bin/chromium via Playwright),
served by the real app on a loopback port, fed by a stand-in Prometheus and journey lookup:
what the page draws and how it reads, without the stack (tests/e2e/test_dashboard.py is the
same page on the running stack)."""

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
from services.dashboard.panels import PANELS
from stack.waiting import free_port
from tests.integration.dashboard.browser import chromium
from tests.unit.dashboard.fakes import fake_prometheus, journey_doc

ORDER = "0193a4b2-7c1d-7e3f-9a2b-3c4d5e6f7a8b"


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
    app = create_app(obs=obs, settings=Settings(), lookup=_Lookups())
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
        viewport={"width": 1400, "height": 900}, color_scheme=request.param
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
    assert page.locator(".tile[data-job=aggregation]").get_attribute("data-up") == "false"
    assert page.locator(".tile[data-job=api]").get_attribute("data-up") == "true"
    assert "AggregationDown" in page.locator("#alert-list").inner_text()
    assert page.locator("#banner").is_hidden()


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
