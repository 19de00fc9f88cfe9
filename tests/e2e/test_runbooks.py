"""Every command the runbooks of docs/operations.md show works as pasted on the running stack.

The runbooks are the `###` sections under "Alerts and runbooks"; their commands are the lines
of their ```sh blocks (tests/e2e/doc_commands.py). Each one runs once, with bash at the
repository root, and must exit 0 and print what CHECKS expects of it on the running stack. The
ones that only read run side by side first; then those that change something, one at a time,
on the stand-ins docs/operations.md names: `abort` on a hanging transaction of a scratch topic,
`clients update` on a scratch client, and supervisorctl's `restart`/`stop`/`start` as `status`
of the same program. Every inline command the runbooks' prose names is one of its block's.
"""

import re
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from onceflow import paths
from onceflow.settings import Settings
from onceflow.settings.kafka_auth import client_config
from services.ops.clients import resolve, revoke
from services.ops.lag import partition_lags
from stack import checks
from stack.components import components
from stack.waiting import wait_for
from tests.e2e.doc_commands import (
    Ran,
    Section,
    assert_works,
    commands,
    inline_spans,
    names,
    run,
    sections,
    without_comment,
)
from tests.integration.clients import new_client

RUNBOOKS = sections(
    (paths.ROOT / "docs" / "operations.md").read_text(), 3, within="Alerts and runbooks"
)
# What the prose may name, each backed by a command of its runbook's block.
TOOLS = re.compile(
    r"^(\S*/)?(onceflow-ops|onceflow-stack|supervisorctl|kafka-[a-z-]+\.sh|curl|psql|make)\b"
)
# The stack's own start (`make up`) is named, not pasted: tests/e2e/test_restart.py runs it.
NAMED_ONLY = {"make up"}

SUPERVISORCTL = re.compile(
    r"^(\.venv/bin/supervisorctl -c \.stack/conf/supervisord\.conf) (restart|stop|start) (\S+)$"
)
ABORT_TARGET = "--topic outbox.event.order --partition 0 --start-offset 1234"


@dataclass(frozen=True)
class Scratch:
    """What the stand-ins act on instead of the pipeline's own."""

    topic: str  # holds a transaction left open at offset 0 of partition 0
    client: str  # a client's name


@dataclass(frozen=True)
class Check:
    expect: str  # a regular expression (MULTILINE) that stdout must match
    stand_in: Callable[[str, Scratch], str] | None = None  # the command run instead
    changes: bool = False  # run after the others, one at a time
    busy: str | None = None  # an answer meaning "try again later": retried


def _as_status(command: str, scratch: Scratch) -> str:
    match = SUPERVISORCTL.match(command)
    assert match, f"not a supervisorctl restart/stop/start: {command}"
    return f"{match.group(1)} status {match.group(3)}"


def _scratch_abort(command: str, scratch: Scratch) -> str:
    assert ABORT_TARGET in command, command
    return command.replace(ABORT_TARGET, f"--topic {scratch.topic} --partition 0 --start-offset 0")


def _scratch_client(command: str, scratch: Scratch) -> str:
    return command.replace(" local-dev ", f" {scratch.client} ")


def _program_running(command: str) -> Check:
    program = command.rsplit(" ", 1)[1]
    return Check(rf"^{re.escape(program)}\s+RUNNING\b", stand_in=_as_status)


SUP = ".venv/bin/supervisorctl -c .stack/conf/supervisord.conf"
# Kafka's tools log in as the ops principal (docs/security.md).
K = (
    ".stack/bin/kafka-{} --bootstrap-server 127.0.0.1:9092"
    " --command-config .stack/secrets/kafka/ops.properties"
)
# The monitor role's password is the local stack's generated one (docs/security.md).
MONITOR_PASSWORD = "$(cat .stack/secrets/postgres/monitor)"
MONITOR = f'psql "postgresql://shop_monitor:{MONITOR_PASSWORD}@127.0.0.1:5432/shop" -c'
PSQL_ROWS = r"^\(\d+ rows?\)$"
MAINTENANCE_BUSY = "holds the lock"
# None, or the count per stage and reason and then the newest by id.
DEAD_LETTERS = (
    r"\A(no dead letters$|\s*dead letters per stage and reason\s*$[\s\S]*^\s*newest \d+ )"
)

CHECKS: dict[str, Check] = {
    "make status": Check(r"^│ connect\s+│ RUNNING\s+│.*│ yes\s+│"),
    "curl -s 127.0.0.1:9111/metrics | head": Check(r"^# (HELP|TYPE) \w+"),
    "curl -s 127.0.0.1:9103/metrics | grep 'trigger=\"automatic\"'": Check(
        r'^onceflow_supervisor_process_starts_total\{program="aggregation",'
        r'trigger="automatic"\} \d'
    ),
    'curl -s -u "ops:$(cat .stack/secrets/ops-password)" 127.0.0.1:8083/connectors': Check(
        r'"orders-outbox"'
    ),
    "curl -s 127.0.0.1:8000/readyz": Check(r'"status":\s*"ready"'),
    ".venv/bin/onceflow-ops status": Check(
        r"^connector orders-outbox: RUNNING\n\s+task 0: RUNNING"
    ),
    ".venv/bin/onceflow-ops lag": Check(r"^slot onceflow_outbox: active, wal_status \w+"),
    ".venv/bin/onceflow-ops dead-letters list": Check(DEAD_LETTERS),
    ".venv/bin/onceflow-ops dead-letters list --stage aggregation": Check(DEAD_LETTERS),
    ".venv/bin/onceflow-ops dead-letters list --stage notifications": Check(DEAD_LETTERS),
    ".venv/bin/python -m stack.peek notifications.order.dlq": Check(r"\A\Z|^p\d+@\d+ key="),
    ".venv/bin/onceflow-ops clients list": Check(r"^name\s+local-dev$|│ local-dev\s+│"),
    ".venv/bin/onceflow-ops reconcile": Check(
        r"^checked \d+ closed UTC days", busy="another reconciliation holds the lock"
    ),
    "curl -s 127.0.0.1:9102/metrics | grep '^onceflow_reconcile'": Check(
        r"^onceflow_reconcile_report_readable 1\.0$"
    ),
    ".venv/bin/onceflow-ops maintenance --dry-run": Check(
        r"^\s*would be removed \(dry run\)\s*$[\s\S]*│ idempotency_keys\s+│\s+\d+ │",
        busy=MAINTENANCE_BUSY,
    ),
    "psql postgresql://analyst:analyst@127.0.0.1:5432/shop -c "
    "'SELECT stream, last_applied_at FROM freshness'": Check(
        r"^\s+stream\s+\|\s+last_applied_at\s*$[\s\S]*\(\d+ rows?\)"
    ),
    f'{MONITOR} "SELECT pid, state, wait_event_type, wait_event, now() - xact_start AS '
    "in_transaction FROM pg_stat_activity WHERE usename = 'shop_spark'\"": Check(
        r"^\s+pid\s+\|\s+state\s+\|.*in_transaction[\s\S]*" + PSQL_ROWS
    ),
    f'{MONITOR} "SELECT pid, usename, wait_event_type, wait_event, now() - query_start AS '
    "running, left(query, 60) AS query FROM pg_stat_activity WHERE state = 'active' AND "
    "wait_event_type = 'Lock'\"": Check(r"^\s+pid\s+\|\s+usename\s+\|[\s\S]*" + PSQL_ROWS),
    f'{MONITOR} "SELECT pid, state, now() - xact_start AS in_transaction FROM pg_stat_activity '
    "WHERE application_name = 'onceflow-maintenance'\"": Check(
        r"^\s+pid\s+\|\s+state\s+\|\s+in_transaction[\s\S]*" + PSQL_ROWS
    ),
    K.format("transactions.sh") + " find-hanging --broker-id 1 --max-transaction-timeout 1": Check(
        r"^Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\tStartOffset"
    ),
    K.format("transactions.sh")
    + " describe-producers --topic outbox.event.order --partition 0": Check(
        r"^ProducerId\tProducerEpoch\t.*CurrentTransactionStartOffset"
    ),
    K.format("topics.sh") + " --describe --unavailable-partitions": Check(r"\A\s*\Z"),
    K.format("topics.sh") + " --describe --under-replicated-partitions": Check(r"\A\s*\Z"),
    K.format("topics.sh") + " --describe --topic outbox.event.order": Check(
        r"^\tTopic: outbox\.event\.order\tPartition: 0\tLeader: \d+\tReplicas: [\d,]+\tIsr: "
    ),
    K.format("metadata-quorum.sh") + " describe --status": Check(r"^LeaderId:\s+\d+$"),
    K.format("consumer-groups.sh") + " --describe --group onceflow-notifications": Check(
        r"^onceflow-notifications\s+outbox\.event\.order\s+\d+\s+\d+\s+\d+\s+\d+"
    ),
    **{
        f"{SUP} {verb} {program}": _program_running(f"{SUP} {verb} {program}")
        for verb, program in [
            ("restart", "notifications-1"),
            ("restart", "notifications-2"),
            ("stop", "aggregation"),
            ("start", "aggregation"),
            ("restart", "aggregation"),
            ("restart", "kafka"),
            ("restart", "api"),
        ]
    },
    # Those that change something, in this order.
    ".venv/bin/onceflow-ops resume": Check(r"^resume: done$", changes=True),
    ".venv/bin/onceflow-ops restart --wait": Check(
        r"^restart: done \(connector and \d+ task\(s\) RUNNING\)$", changes=True
    ),
    ".venv/bin/onceflow-stack provision": Check(
        r"^provisioned: roles, database, migrations, replication slot$", changes=True
    ),
    ".venv/bin/onceflow-ops clients update local-dev --rate 5": Check(
        r"^client [0-9a-f-]{36}: rate 5(\.0)? requests/s$", stand_in=_scratch_client, changes=True
    ),
    K.format("transactions.sh") + f" abort {ABORT_TARGET}": Check(
        r"\A", stand_in=_scratch_abort, changes=True
    ),
    ".venv/bin/onceflow-ops maintenance": Check(
        r"^\s*removed\s*$[\s\S]*│ idempotency_keys\s+│\s+\d+ │", changes=True, busy=MAINTENANCE_BUSY
    ),
}

SHOWN = list(
    dict.fromkeys(without_comment(c) for runbook in RUNBOOKS for c in commands(runbook.text))
)


@pytest.fixture(scope="module")
def scratch(settings: Settings) -> Iterator[Scratch]:
    """A scratch topic whose partition 0 holds a transaction left open, and a scratch client."""
    admin = AdminClient(client_config(settings.kafka_bootstrap, "tests"))
    topic = f"runbook-{uuid.uuid4().hex[:10]}"
    admin.create_topics([NewTopic(topic, num_partitions=1)])[topic].result(timeout=30)
    producer = Producer(
        {
            **client_config(settings.kafka_bootstrap, "tests"),
            "transactional.id": f"{topic}-tx",
            # Open until the abort, however slow the commands before it (the broker's maximum).
            "transaction.timeout.ms": 900_000,
        }
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"left open", b"k", 0)
    assert producer.flush(30) == 0
    try:
        client = new_client(settings, name="runbook")
        try:
            yield Scratch(topic=topic, client=client.name)
        finally:
            revoke(settings=settings, client_id=resolve(settings=settings, client=client.name))
    finally:
        # The abort the runbook shows writes the partition's markers, not the coordinator's
        # state: end the transaction there too (or at all, when the abort did not run), so no
        # transaction stays open for 15 minutes after the test.
        producer.abort_transaction(30)
        admin.delete_topics([topic])[topic].result(timeout=30)


def _stable_offset(settings: Settings, topic: str) -> int:
    """Partition 0's last stable offset: where read_committed readers must stop."""
    return partition_lags(settings.kafka_bootstrap, topic, {})[0].stable_offset


def _run(command: str, scratch: Scratch) -> Ran:
    check = CHECKS[command]
    pasted = check.stand_in(command, scratch) if check.stand_in else command
    runs = [run(pasted, timeout=90)]

    def answered() -> bool:
        """An answer that says "later" (check.busy) is tried again, as an operator would."""
        last = runs[-1]
        if check.busy is None or last.returncode == 0 or check.busy not in last.stderr:
            return True
        runs.append(run(pasted, timeout=90))
        return False

    wait_for(answered, what=f"{command} past {check.busy!r}", timeout=30)
    return runs[-1]


def _unhealthy(settings: Settings) -> list[str]:
    return [name for name, c in checks.check(components(settings)).items() if not c.healthy]


@pytest.fixture(scope="module")
def reads(scratch: Scratch, settings: Settings) -> dict[str, Ran]:
    """The run of each command that only reads, side by side, on a stack that works (a
    component restarted by an earlier test settles first: `make status` exits 1 until then)."""
    wait_for(lambda: not _unhealthy(settings), what="every component healthy", timeout=60)
    reading = [c for c in SHOWN if c in CHECKS and not CHECKS[c].changes]
    with ThreadPoolExecutor(max_workers=6) as pool:
        return dict(zip(reading, pool.map(lambda c: _run(c, scratch), reading), strict=True))


def test_every_command_shown_has_a_check() -> None:
    assert len(RUNBOOKS) >= 30
    assert set(SHOWN) == set(CHECKS), (
        f"runbook commands without a check: {sorted(set(SHOWN) - set(CHECKS))}; "
        f"checks of commands no runbook shows: {sorted(set(CHECKS) - set(SHOWN))}"
    )


@pytest.mark.parametrize("runbook", RUNBOOKS, ids=lambda r: r.title)
def test_the_prose_names_only_commands_of_its_block(runbook: Section) -> None:
    shown = commands(runbook.text)
    named = [s for s in inline_spans(runbook.text) if TOOLS.match(s) and s not in NAMED_ONLY]
    unbacked = [span for span in named if not any(names(span, c) for c in shown)]
    assert not unbacked, f"{runbook.title} names commands its block does not show: {unbacked}"


@pytest.mark.parametrize("command", [c for c in SHOWN if c in CHECKS and not CHECKS[c].changes])
def test_command_works_as_pasted(command: str, reads: dict[str, Ran]) -> None:
    assert_works(reads[command], CHECKS[command].expect)


# After those that read (pytest runs a module's tests in order), in CHECKS's order.
@pytest.mark.parametrize("command", [c for c, check in CHECKS.items() if check.changes])
def test_command_that_changes_something_works_as_pasted(
    command: str, scratch: Scratch, settings: Settings
) -> None:
    assert command in SHOWN, f"no runbook shows {command}"
    if " abort " in command:
        assert _stable_offset(settings, scratch.topic) == 0, "the scratch transaction is not open"
    assert_works(_run(command, scratch), CHECKS[command].expect)
    if " abort " in command:
        # The record and the abort marker: read_committed readers now pass both.
        wait_for(
            lambda: _stable_offset(settings, scratch.topic) == 2,
            what="the scratch partition's stable offset past the aborted transaction",
            timeout=10,
        )
