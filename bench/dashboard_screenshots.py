"""The dashboard's screenshots in the README and docs, taken again from the running stack:
`.venv/bin/python -m bench.dashboard_screenshots` (after `make up`).

It places one order and pays it through the API (with the local stack's key,
.stack/secrets/api-key), waits until its journey is complete, then opens the dashboard in
Debian's headless chromium (Playwright) with that journey, waits until the overview is read and
every chart has points, and writes a full-page PNG: docs/dashboard.png by default.
"""

import argparse
import uuid
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import sync_playwright

from onceflow import paths
from onceflow.settings import get_observability_settings, get_settings
from onceflow.settings.ops import get_ops_settings
from services.dashboard.panels import PANELS
from stack.waiting import wait_for

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1600, "height": 1000}
WAIT_S = 180  # rates need two scrapes, the journey a micro-batch and a notification
READY = """keys => {
  const s = window.onceflowDashboard;
  return !!s && !!s.overview && !s.overview.error && s.alerts !== undefined
    && keys.every(k => s.panels[k] && s.panels[k].points > 0);
}"""


def _order(api: httpx.Client) -> str:
    """A placed and paid order's id."""
    body = {
        "customer_id": "screenshot",
        "currency": "EUR",
        "items": [{"sku": "SKU-SHOT", "quantity": 2, "unit_price_cents": 1250}],
    }
    placed = api.post("/orders", json=body, headers={"Idempotency-Key": str(uuid.uuid4())})
    placed.raise_for_status()
    order_id = str(placed.json()["id"])
    paid = api.post(f"/orders/{order_id}/pay", headers={"Idempotency-Key": str(uuid.uuid4())})
    paid.raise_for_status()
    return order_id


def _complete(journey: dict[str, Any]) -> bool:
    events = journey.get("events", [])
    return len(events) == 2 and all(
        e["batch"] is not None and e["notification"]["produced"] is True for e in events
    )


def _wait_journey(dashboard: str, order_id: str) -> None:
    def arrived() -> bool:
        url = f"{dashboard}/api/journey/{order_id}"
        answer = httpx.get(url, timeout=20, auth=get_ops_settings().auth())
        return answer.status_code == 200 and _complete(answer.json())

    wait_for(arrived, what=f"order {order_id}'s journey at every hop", timeout=WAIT_S, interval=2)


def take(dashboard: str, out: Path) -> None:
    """Place an order, wait for its journey, and screenshot the whole page with it."""
    settings = get_settings()
    key = paths.API_KEY.read_text().strip()
    with httpx.Client(
        base_url=f"http://{settings.api_host}:{settings.api_port}",
        headers={"Authorization": f"Bearer {key}"},
        timeout=30,
    ) as api:
        order_id = _order(api)
    _wait_journey(dashboard, order_id)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        try:
            ops = get_ops_settings()  # the dashboard asks for the ops credential
            login = {"username": ops.ops_user, "password": ops.password()}
            page = browser.new_page(viewport=VIEWPORT, color_scheme="light", http_credentials=login)
            page.goto(f"{dashboard}/#journey={order_id}")
            keys = [panel.key for panel in PANELS]
            page.wait_for_function(READY, arg=keys, timeout=WAIT_S * 1000, polling=1000)
            page.wait_for_selector("#journey-result[data-state=complete]", timeout=30_000)
            page.mouse.move(0, 0)  # no hover legend: every legend at its latest values
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True)
        finally:
            browser.close()
    print(f"{out}: the dashboard with order {order_id}'s journey")


def main() -> None:
    port = get_observability_settings().dashboard_port
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=f"http://127.0.0.1:{port}", help="the dashboard")
    parser.add_argument("--out", type=Path, default=paths.ROOT / "docs" / "dashboard.png")
    args = parser.parse_args()
    take(args.url.rstrip("/"), args.out)


if __name__ == "__main__":
    main()
