"""Schemathesis against the LIVE API (settings.api_host:api_port): no 5xx, responses match the
OpenAPI document. Uses the running API (the stack's `python -m services.orders`), or starts one
for the test and stops it afterwards."""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from onceflow.settings import Settings

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
    ]
)


def ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@pytest.fixture(scope="module")
def live_api(settings: Settings) -> Iterator[str]:
    url = f"http://{settings.api_host}:{settings.api_port}"
    if ready(url):
        yield url
        return
    env = {**os.environ, "ONCEFLOW_API_WORKERS": "1", "ONCEFLOW_API_ACCESS_LOG": "false"}
    proc = subprocess.Popen([sys.executable, "-m", "services.orders"], env=env)
    try:
        deadline = time.monotonic() + 30
        while not ready(url):
            assert proc.poll() is None, "the API exited during startup"
            assert time.monotonic() < deadline, f"{url}/readyz not ready after 30s"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_live_api_conforms_to_its_openapi(live_api: str) -> None:
    cli = Path(sys.executable).with_name("schemathesis")
    result = subprocess.run(
        [
            str(cli),
            "run",
            f"{live_api}/openapi.json",
            "--checks",
            CHECKS,
            "--max-examples",
            "25",
            "--phases",
            "coverage,fuzzing,stateful",
            "--max-time",
            "150",
            "--request-timeout",
            "10",
            "--seed",
            "20261122",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "passed" in result.stdout
