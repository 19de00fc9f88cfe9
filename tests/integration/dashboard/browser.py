"""A real headless browser for the dashboard's tests: Debian's chromium, driven by Playwright
(no browser download: `make up` apt-installs chromium)."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")


@contextmanager
def chromium() -> Iterator[Browser]:
    """Launch /usr/bin/chromium headless; fail with one sentence when it is missing."""
    assert CHROMIUM.is_file(), (
        f"{CHROMIUM} is missing: `make up` installs Debian's chromium (apt-get install chromium)"
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            yield browser
        finally:
            browser.close()
