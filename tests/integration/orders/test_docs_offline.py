"""`/docs` works without internet: the real order API on a loopback port, in Debian's chromium
with every request to another host blocked, renders Swagger UI and every operation, its script,
stylesheet and icon served by the API itself from the pinned swagger-ui-dist."""

import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import uvicorn
from playwright.sync_api import Route

from services.orders.entrypoints.app import create_app
from stack.waiting import wait_for
from tests.integration.dashboard.browser import chromium

pytestmark = pytest.mark.integration


@pytest.fixture
def api_url() -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(), log_config=None, access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_for(lambda: server.started, what="the order API", timeout=10, interval=0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    thread.join(10)


def test_docs_render_with_every_other_host_blocked(api_url: str) -> None:
    local, blocked = [], []

    def offline(route: Route) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            local.append(urlsplit(route.request.url).path)
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort("internetdisconnected")

    with chromium() as browser:
        page = browser.new_page()
        page.route("**/*", offline)
        page.goto(f"{api_url}/docs")
        page.locator(".swagger-ui .info .title").filter(has_text="Onceflow order API").wait_for()
        page.locator(".opblock").first.wait_for()
        operations = page.locator(".opblock").count()
        page.close()
    assert blocked == []
    assert operations >= 5
    assert {"/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"} <= set(local)
    assert "/openapi.json" in local
