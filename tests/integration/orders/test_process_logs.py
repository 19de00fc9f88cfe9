"""The order API as ops run it (`python -m services.orders`, its own process on a loopback
port): every line it writes to stderr is one JSON object with no ANSI colour code, and each
request's access line carries the id its response returned."""

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from stack.waiting import free_port, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture
def api() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    env = {**os.environ, "ONCEFLOW_API_PORT": str(port), "ONCEFLOW_API_WORKERS": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "services.orders"], env=env, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: httpx.get(f"{url}/healthz").status_code == 200, what="the API", timeout=30)
        yield url, process
    finally:
        process.terminate()
        process.wait(30)


def test_stderr_is_json_lines_without_colour_and_access_lines_carry_the_request_id(
    api: tuple[str, subprocess.Popen[str]],
) -> None:
    url, process = api
    ids = [httpx.get(f"{url}{path}").headers["x-request-id"] for path in ("/healthz", "/nope")]
    process.terminate()
    _, stderr = process.communicate(timeout=30)
    assert "\x1b" not in stderr
    lines = [json.loads(line) for line in stderr.splitlines()]  # every line is JSON
    assert all("color_message" not in line and "\\u001b" not in json.dumps(line) for line in lines)
    assert any(line["msg"].startswith("Started server process") for line in lines)
    access = [line for line in lines if line["logger"] == "onceflow.access"]
    assert [line.get("request_id") for line in access][-2:] == ids
