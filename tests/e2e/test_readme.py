"""The README's "Try it" and "Watch it" steps work as written on the running stack.

Their commands are the lines of the sections' ```sh blocks (tests/e2e/doc_commands.py); each
runs with bash at the repository root and must exit 0 and print what CHECKS expects of it. One
runs on a stand-in: `clients create my-shop` creates a client of another name (a name is
taken once), revoked afterwards. The addresses "Watch it" opens must answer with their page.
"""

import re
import uuid
from collections.abc import Iterator

import httpx
import pytest

from onceflow import paths
from onceflow.settings import Settings
from onceflow.settings.ops import get_ops_settings
from services.ops.clients import resolve, revoke
from stack.waiting import wait_for
from tests.e2e.doc_commands import Ran, commands, run, section, without_comment
from tests.e2e.orders import place

README = (paths.ROOT / "README.md").read_text()
TRY_IT = section(README, "Try it", 2).text
WATCH_IT = section(README, "Watch it", 2).text
PEEKED = re.compile(r"^p(\d+)@\d+ key=\S+ headers=", re.MULTILINE)
PARTITIONS = 3  # stack/topics.py: every topic
SHOWN_LAST = 5  # stack.peek's default --last


def _records_per_partition(text: str) -> dict[int, int]:
    counts = dict.fromkeys(range(PARTITIONS), 0)
    for partition in PEEKED.findall(text):
        counts[int(partition)] += 1
    return counts


CREATE = ".venv/bin/onceflow-ops clients create my-shop --scopes orders:write,orders:read"
PEEK = ".venv/bin/python -m stack.peek"
PEEK_NOTIFICATIONS = ".venv/bin/python -m stack.peek notifications.order"
# command -> what its stdout must match (regular expressions, MULTILINE, every one)
CHECKS: dict[str, tuple[str, ...]] = {
    "curl -i -X POST http://127.0.0.1:8000/orders -H 'Idempotency-Key: k1' "
    '-H "Authorization: Bearer $(cat .stack/secrets/api-key)" '
    "-H 'Content-Type: application/json' "
    """-d '{"customer_id":"c-1","currency":"EUR","items":[{"sku":"SKU-1","quantity":2,"""
    """"unit_price_cents":1250}]}'""": (
        r"\AHTTP/1\.1 201 Created\r?$",
        r"^location: /orders/[0-9a-f-]{36}\r?$",
        r'"customer_id": "c-1"',
        r'"total_cents": 2500\b',
    ),
    CREATE: (
        r"^client readme-[0-9a-f]{12} \([0-9a-f-]{36}\), scopes",
        r"^of_[a-z]+_[A-Za-z0-9_-]{20,}$",
    ),
    PEEK: (r'^  "event_type": "Order\w+",$',),
    PEEK_NOTIFICATIONS: (r'^  "message": "Your order ',),
    ".stack/bin/kafka-consumer-groups.sh --bootstrap-server 127.0.0.1:9092 "
    "--command-config .stack/secrets/kafka/ops.properties "
    "--describe --group onceflow-notifications": (
        r"^GROUP\s+TOPIC\s+PARTITION\s+CURRENT-OFFSET",
        r"^onceflow-notifications\s+outbox\.event\.order\s+\d+\s+\d+",
    ),
    "psql postgresql://analyst:analyst@127.0.0.1:5432/shop "
    "-c 'SELECT * FROM analytics.daily_sales ORDER BY day DESC' "
    "-c 'SELECT * FROM analytics.freshness'": (
        r"^\s+day\s+\|.*\bcurrency\b.*\borders_placed\b",
        r"^\s+stream\s+\|\s+last_event_at\s+\|",
        r"^\(\d+ rows?\)$[\s\S]*^\(\d+ rows?\)$",
    ),
}


@pytest.fixture(scope="module")
def my_shop(settings: Settings) -> Iterator[str]:
    """The name `clients create` gets instead of my-shop; the client is revoked afterwards."""
    name = f"readme-{uuid.uuid4().hex[:12]}"
    yield name
    revoke(settings=settings, client_id=resolve(settings=settings, client=name))


def _shows_last_records(ran: Ran) -> bool:
    """True when it printed "the last 5 events of each partition", as the README says."""
    return ran.returncode == 0 and _records_per_partition(ran.stdout) == dict.fromkeys(
        range(PARTITIONS), SHOWN_LAST
    )


@pytest.fixture(scope="module")
def ran(api: httpx.Client, my_shop: str) -> dict[str, Ran]:
    """Each step's run, in the README's order, once both topics have at least SHOWN_LAST
    records on every partition: orders of distinct customers spread over both keys, and the
    steps that peek wait for them (each run returns on its own within its timeout)."""
    for n in range(20 * PARTITIONS):
        place(api, f"readme-{n}", "EUR", [{"sku": "SKU-1", "quantity": 1, "unit_price_cents": 5}])
    results: dict[str, Ran] = {}
    for command in map(without_comment, commands(TRY_IT)):
        pasted = command.replace(" my-shop ", f" {my_shop} ") if command == CREATE else command
        results[command] = run(pasted, timeout=15)
        if command in (PEEK, PEEK_NOTIFICATIONS):

            def shown(command: str = command) -> bool:
                results[command] = run(command, timeout=15)
                return _shows_last_records(results[command])

            if not _shows_last_records(results[command]):
                wait_for(shown, what=f"{command}: {SHOWN_LAST} records a partition", timeout=60)
    return results


def test_every_step_has_a_check() -> None:
    shown = [without_comment(c) for c in commands(TRY_IT)]
    assert shown
    assert set(shown) == set(CHECKS), (
        f"steps without a check: {sorted(set(shown) - set(CHECKS))}; "
        f"checks of no step: {sorted(set(CHECKS) - set(shown))}"
    )


@pytest.mark.parametrize("command", list(CHECKS))
def test_try_it_step_works_as_written(command: str, ran: dict[str, Ran]) -> None:
    result = ran[command]
    assert result.returncode == 0, str(result)
    for expected in CHECKS[command]:
        assert re.search(expected, result.stdout, re.MULTILINE), f"{expected}\n{result}"
    if command in (PEEK, PEEK_NOTIFICATIONS):
        assert _shows_last_records(result), str(result)


def test_watch_it_addresses_answer_with_their_page() -> None:
    urls = re.findall(r"\*\*(http://127\.0\.0\.1:\d+)\*\*", WATCH_IT)
    assert urls == ["http://127.0.0.1:3000"]
    assert httpx.get(urls[0], timeout=10).status_code == 401  # the ops credential first
    page = httpx.get(urls[0], timeout=10, auth=get_ops_settings().auth())
    assert page.status_code == 200
    assert "<title>Onceflow · pipeline dashboard</title>" in page.text
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", WATCH_IT):
        assert (paths.ROOT / image).is_file(), f"{image} is missing"


OPS = '-u "ops:$(cat .stack/secrets/ops-password)"'
WATCH_CHECKS: dict[str, tuple[str, ...]] = {
    f"curl -s {OPS} http://127.0.0.1:3000/api/overview": (r'"tiles":\s*\[', r'"hop":\s*"api"'),
    f"curl -s {OPS} http://127.0.0.1:8083/connectors/orders-outbox/status": (
        r'"connector":\s*\{"state":"RUNNING"',
    ),
}


def test_watch_it_commands_work_as_written() -> None:
    shown = [without_comment(c) for c in commands(WATCH_IT)]
    assert set(shown) == set(WATCH_CHECKS)
    for command in shown:
        result = run(command, timeout=30)
        assert result.returncode == 0, str(result)
        for expected in WATCH_CHECKS[command]:
            assert re.search(expected, result.stdout, re.MULTILINE), f"{expected}\n{result}"
