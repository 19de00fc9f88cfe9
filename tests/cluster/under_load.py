"""The frame of every cluster failure test: a barrier, the tables' baseline, the e2e writer
posting orders while the block breaks things, then the exactly-once oracle on all it wrote."""

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from onceflow.settings import Settings
from tests.e2e import analytics, exactly_once
from tests.e2e.writer import Writer


@contextmanager
def exactly_once_under_load(
    api: httpx.Client, analyst: analytics.Conn, settings: Settings, writer: Writer
) -> Iterator[None]:
    analytics.barrier(api, analyst)
    before = exactly_once.baseline(settings)
    writer.start()
    writer.wait_more()
    yield
    expected = writer.finish()
    exactly_once.assert_exactly_once(settings, expected, before, timeout=300)
