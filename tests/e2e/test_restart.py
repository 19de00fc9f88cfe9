"""`make down` then `make up` resumes where the pipeline was: orders from before and after the
restart are each on the topic once and counted once."""

import subprocess
import uuid

import httpx
import psycopg

from onceflow import paths
from onceflow.settings import Settings
from tests.e2e import analytics, exactly_once
from tests.e2e.orders import Expected, post_history


def _make(target: str) -> None:
    result = subprocess.run(
        ["make", target], cwd=paths.ROOT, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, f"make {target} failed:\n{result.stdout}\n{result.stderr}"


def test_down_then_up_resumes_exactly_once(api: httpx.Client, settings: Settings) -> None:
    run = uuid.uuid4().hex[:8]
    expected = Expected()
    with psycopg.connect(settings.dsn("analyst"), autocommit=True) as analyst:
        analytics.barrier(api, analyst)
        before = exactly_once.baseline(settings)
        post_history(api, f"{run}-before", expected, orders=8)
        exactly_once.assert_exactly_once(settings, expected, before)

    _make("down")
    _make("up")

    with psycopg.connect(settings.dsn("analyst"), autocommit=True) as analyst:
        post_history(api, f"{run}-after", expected, orders=8)
        exactly_once.assert_exactly_once(settings, expected, before)
