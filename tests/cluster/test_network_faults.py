"""Exactly once on the cluster topology while the network between live nodes breaks (issue 26),
under the e2e writer's client load, one writer and one oracle for the chain: a notifications
instance cut from every broker past its session timeout, then healed; the Connect worker running
the task cut from every broker while it still reaches Postgres, past the worker's session
timeout (its task moves, the zombie is fenced, the slot never runs ahead of what Kafka
committed), and the reverse, that worker cut from Postgres while it still reaches the brokers
(its task stalls or fails and is restarted, the slot never ahead of Kafka); the broker leading
an outbox partition isolated from the other two past the controller's fencing timeout (clients
still reach it); the connector task's transaction coordinator behind 30 % loss and 200 ms
delay; the job's driver cut from Postgres while a batch runs; the job's executors 500 ms from
Postgres. Each scenario records the availability during the fault and the time to recover
after the heal (fault_figures.py). A task that FAILED is restarted by the connector watchdog
(services/ops/connect_watchdog.py), never by the test, which checks the watchdog's log. A delay
between the cluster's programs detours their connections through Toxiproxy (tests/faults/
detour.py): nothing in the product is pointed at a proxy."""

import json
import time
from collections.abc import Callable
from contextlib import ExitStack

import httpx
import pytest

from onceflow.settings import Settings, get_aggregation_settings, get_notification_settings
from onceflow.topology import Layout
from stack.components import CONNECTOR_WATCHDOG
from stack.waiting import wait_for
from tests import faults
from tests.cluster import (
    cdc_positions,
    connect_workers,
    job_progress,
    kafka_nodes,
    network_nodes,
    program_logs,
    spark_driver,
)
from tests.cluster.fault_figures import Figures, notified
from tests.cluster.under_load import exactly_once_under_load
from tests.e2e import analytics
from tests.e2e.processes import pid_of
from tests.e2e.writer import Writer

pytestmark = pytest.mark.usefixtures("network_faults")

BASELINE_S = 15


def _hold(seconds: float, writer: Writer) -> None:
    """Keep a fault in place this long: the span is the scenario's, not a wait for a state."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert writer.failure is None, f"a write failed: {writer.failure!r}"
        time.sleep(min(1.0, max(0.0, end - time.monotonic())))


def _took_partitions(log: str) -> bool:
    """The instance's log says it was assigned at least one partition."""
    for line in log.splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            if entry.get("msg") == "assigned" and entry.get("partitions"):
                return True
    return False


def _notifications_cut(layout: Layout, writer: Writer) -> None:
    """notifications-1 loses every broker for its session timeout plus 15 s: the group moves its
    partitions to the other instance, which keeps notifying; after the heal it is fenced or
    rejoins, and notifies again."""
    notify = get_notification_settings()
    ports = [notify.metrics_port(n) for n in range(1, notify.notify_instances + 1)]
    figures = Figures(
        "notifications-1 cut from every broker",
        writer,
        hop=lambda: sum(notified(port) for port in ports),
    )
    figures.baseline(BASELINE_S)
    others = [f"notifications-{n}" for n in range(2, len(ports) + 1)]
    since = {other: program_logs.log_size(other) for other in others}
    with network_nodes.cut_from_brokers(layout, "notifications-1"):
        figures.fault_started()
        at_cut = notified(ports[0])
        hold = notify.notify_session_timeout_ms / 1000 + 15
        wait_for(
            lambda: any(_took_partitions(program_logs.log_since(o, since[o])) for o in others),
            what="another instance given notifications-1's partitions during the cut",
            timeout=hold,
        )
        figures.notes["partitions_moved_after_s"] = round(time.monotonic() - figures.started, 1)
        _hold(hold - (time.monotonic() - figures.started), writer)
        at_heal, pid = notified(ports[0]), pid_of("notifications-1")
    figures.healed()
    figures.notes["cut_instance_notified"] = at_heal - at_cut

    def notifying() -> bool:
        # Fenced by the instance that took its partitions, it may stop and be restarted by
        # supervisor: its count starts again from 0.
        restarted = pid_of("notifications-1") != pid
        if restarted:
            figures.notes["cut_instance_restarted"] = "yes"
        return notified(ports[0]) > (0 if restarted else at_heal)

    figures.recovered_when(
        notifying, what="notifications-1 notifying again after the heal", timeout=180
    )
    figures.record()
    assert figures.hop_during_per_s > 0, "nothing was notified while notifications-1 was cut"
    assert figures.writes_during_per_s > 0, "the API took no write during the fault"


def _task_failed(urls: list[str], connector: str) -> bool:
    """Some worker reports the connector's task FAILED."""
    return any(
        state == "FAILED" for url in urls for state in connect_workers.task_states(url, connector)
    )


def _publishing_again(settings: Settings, layout: Layout, figures: Figures, since: int) -> None:
    """Recovery of the publishing hop: the outbox grows again after the heal. A task that FAILED
    meanwhile must be restarted by the product (the connector watchdog), not by the test: the
    figures say when it was seen FAILED and what the watchdog restarted (its log since byte
    `since`)."""
    urls = [w.url for w in layout.connect]
    at_heal = cdc_positions.outbox_end(settings)

    def publishing() -> bool:
        if "task_failed_seen_after_heal_s" not in figures.notes and _task_failed(
            urls, settings.connector_name
        ):
            figures.notes["task_failed_seen_after_heal_s"] = round(
                time.monotonic() - figures.started, 1
            )
        return cdc_positions.outbox_end(settings) > at_heal

    figures.recovered_when(publishing, what="the outbox growing after the heal", timeout=240)
    _note_watchdog(figures, since)
    if "task_failed_seen_after_heal_s" in figures.notes:
        restarts = connect_workers.watchdog_restarts(since)
        assert any(r.startswith("restarting task") for r in restarts), (
            "the task FAILED and publishing resumed, but the watchdog's log says no restart"
        )


def _note_watchdog(figures: Figures, since: int, key: str = "watchdog_restarted") -> None:
    """What the connector watchdog restarted since byte `since` of its log (each restart's
    first words)."""
    _note_restarts(figures, connect_workers.watchdog_restarts(since), key)


def _note_restarts(figures: Figures, restarts: list[str], key: str) -> None:
    if restarts:
        figures.notes[key] = "; ".join(r.split(":", 1)[0] for r in restarts)


def _slot_behind_kafka(settings: Settings) -> None:
    slot, committed = (
        cdc_positions.slot_confirmed(settings),
        cdc_positions.kafka_committed(settings),
    )
    assert slot <= committed, f"the slot ({slot}) is past what Kafka committed ({committed})"


# The Connect group's session (Kafka's default session.timeout.ms for workers, 10 s;
# connect/worker.properties leaves it).
CONNECT_SESSION_S = 10
# What a worker cut from the coordinator may log about its own task once it revoked it (KIP-415:
# "Broker coordinator was unreachable ... Revoking previous assignment") and its stop ran out:
# the worker cancelled the task (force-closing its producer), whose thread then threw, as an
# orphan, and if it was blocked committing, its commit failed first. A note, not the proof: the
# proof is the live task's producer initializing the task's transactional id (fencing the
# zombie's) before it publishes, and the zombie stopping the task.
ORPHANED = (
    "Failed to commit producer transaction",
    "After being scheduled for shutdown, the orphan task threw an uncaught exception",
)


def _task_scenario(
    settings: Settings, layout: Layout, writer: Writer, fault: Callable[[str], str]
) -> tuple[str, Figures, int]:
    """The start of a scenario about the worker running the task, once every worker reports
    the connector and its task RUNNING: that worker's URL, the figures (titled `fault(its
    program)`, baseline taken, what the watchdog restarted meanwhile noted) and the offset of
    the watchdog's log."""
    urls = [w.url for w in layout.connect]
    running, before = connect_workers.task_worker_with_fresh_status(urls, settings.connector_name)
    figures = Figures(
        fault(connect_workers.program_of(layout, running)),
        writer,
        hop=lambda: cdc_positions.outbox_end(settings),
    )
    _note_restarts(figures, before, "watchdog_restarted_before")
    figures.baseline(BASELINE_S)
    return running, figures, program_logs.log_size(CONNECTOR_WATCHDOG)


def _connect_cut_from_brokers(settings: Settings, layout: Layout, writer: Writer) -> None:
    """The worker running the task loses every broker (not Postgres) past its session timeout:
    the group gives the task to the other worker, which publishes again once it holds the slot;
    its producer fenced the zombie's. After the heal the zombie rejoins, its task elsewhere and
    stopped."""
    name = settings.connector_name
    running, figures, watchdog_since = _task_scenario(
        settings,
        layout,
        writer,
        lambda worker: f"the Connect worker running the task ({worker}) cut from every broker",
    )
    target = next(w.url for w in layout.connect if w.url != running)
    zombie = connect_workers.program_of(layout, running)
    live = connect_workers.program_of(layout, target)
    since, live_since = program_logs.log_size(zombie), program_logs.log_size(live)
    with network_nodes.cut_from_brokers(layout, zombie):
        figures.fault_started()
        at_cut = cdc_positions.outbox_end(settings)
        connect_workers.wait_task_on(target, name, timeout=240)
        wait_for(
            lambda: cdc_positions.outbox_end(settings) > at_cut,
            what=f"the task publishing again from {target}",
            timeout=240,
        )
        figures.notes["task_moved_after_s"] = round(time.monotonic() - figures.started, 1)
        assert connect_workers.producer_initialized(live, live_since, name), (
            f"{target} published without its producer initializing {name}-0's transactional id"
        )
        _hold(CONNECT_SESSION_S + 10 - (time.monotonic() - figures.started), writer)
        _slot_behind_kafka(settings)
    figures.healed()
    figures.recovered_when(
        lambda: connect_workers.task_only_worker(running, name) == target,
        what=f"{zombie} rejoined, its task on {target}",
        timeout=180,
    )
    connect_workers.wait_task_stopped(zombie, since, name)  # in the cut, or when it rejoined
    zombie_log = program_logs.log_since(zombie, since)
    figures.notes["zombie_said"] = "; ".join(m for m in ORPHANED if m in zombie_log) or "-"
    # The zombie's last status write (its connector UNASSIGNED, made when it revoked its own
    # assignment in the cut) may land after the live worker's RUNNING, now or seconds later:
    # the watchdog restarts the connector alone once that has lasted 30 s (the next scenario
    # waits for a fresh status and says what the watchdog restarted).
    figures.notes["connector_state_after_heal"] = str(connect_workers.connector_state(target, name))
    writer.wait_more()
    _slot_behind_kafka(settings)
    _note_watchdog(figures, watchdog_since)
    figures.record()
    assert figures.writes_during_per_s > 0, "the API took no write during the fault"


def _connect_cut_from_postgres(settings: Settings, layout: Layout, writer: Writer) -> None:
    """The worker running the task loses Postgres (not the brokers) past its session timeout: it
    stays in the group, so nothing moves or fences its task, which cannot read the slot (it
    stalls, or fails and the watchdog restarts it, backing off while Postgres stays away); after
    the heal it publishes again, and the slot is never ahead of what Kafka committed."""
    name = settings.connector_name
    urls = [w.url for w in layout.connect]
    running, figures, watchdog_since = _task_scenario(
        settings,
        layout,
        writer,
        lambda worker: f"the Connect worker running the task ({worker}) cut from Postgres",
    )
    worker = connect_workers.program_of(layout, running)
    with faults.partition(worker, network_nodes.POSTGRES):
        figures.fault_started()
        _hold(CONNECT_SESSION_S + 15, writer)
        states = {s for url in urls for s in connect_workers.task_states(url, name)}
        figures.notes["task_states_at_heal"] = ",".join(sorted(states))
        _slot_behind_kafka(settings)
    figures.healed()
    _publishing_again(settings, layout, figures, watchdog_since)
    on = connect_workers.task_only_worker(running, name)
    figures.notes["task_on_after_heal"] = connect_workers.program_of(layout, on) if on else "none"
    writer.wait_more()
    _slot_behind_kafka(settings)
    figures.record()
    assert figures.writes_during_per_s > 0, "the API took no write during the fault"


# How long the controller waits for a broker's heartbeat before fencing it (Kafka's default for
# broker.session.timeout.ms; stack/kafka/server.properties leaves it).
BROKER_SESSION_S = 9


def _leader_isolated_from_brokers(settings: Settings, layout: Layout, writer: Writer) -> None:
    """The broker leading the outbox's partition 0 loses the other two brokers (clients still
    reach it) past the controller's fencing timeout: the partition gets a new leader; after the
    heal publishing goes on (a FAILED task restarted by the watchdog) and every partition is
    whole again."""
    program = {node.node_id: node.program for node in layout.kafka}
    leader = kafka_nodes.leader_of(settings.kafka_bootstrap, settings.topic, 0)
    figures = Figures(
        f"the outbox partition's leader ({program[leader]}) isolated from the other brokers",
        writer,
        hop=lambda: cdc_positions.outbox_end(settings),
    )
    figures.baseline(BASELINE_S)
    watchdog_since = program_logs.log_size(CONNECTOR_WATCHDOG)
    with ExitStack() as cut:
        for node in layout.kafka:
            if node.node_id != leader:
                cut.enter_context(faults.partition(program[leader], node.program))
        figures.fault_started()
        wait_for(
            lambda: _leader_or_none(settings) not in (leader, None),
            what=f"partition 0 led by another broker than {leader}",
            timeout=120,
        )
        figures.notes["new_leader_after_s"] = round(time.monotonic() - figures.started, 1)
        # Past the fencing timeout, well under the task's transaction timeout (300 s,
        # connect/worker.properties): the task's producer may keep writing to the isolated
        # broker (it still answers metadata as the leader) and stall until the heal; a
        # transaction open longer fails the task (the watchdog restarts it).
        _hold(BROKER_SESSION_S + 10, writer)
    figures.healed()
    _publishing_again(settings, layout, figures, watchdog_since)
    wait_for(
        lambda: kafka_nodes.fully_replicated(settings.kafka_bootstrap),
        what="every partition led and fully in sync again",
        timeout=180,
    )
    writer.wait_more()
    figures.record()
    assert figures.writes_during_per_s > 0, "the API took no write during the fault"


def _leader_or_none(settings: Settings) -> int | None:
    try:
        return kafka_nodes.leader_of(settings.kafka_bootstrap, settings.topic, 0)
    except Exception:  # the metadata request may time out while the cluster re-elects
        return None


def _coordinator_behind_loss(settings: Settings, layout: Layout, writer: Writer) -> None:
    """The worker running the task reaches its transaction coordinator 200 ms late, with 30 %
    of the packets between them dropped, for 30 s (its connections to that broker reset once,
    to take the delay's proxy): the task's transactions slow down or stall, none is lost or
    doubled, and publishing resumes after the heal."""
    program = {node.node_id: node.program for node in layout.kafka}
    txn_id = kafka_nodes.connector_transactional_id(settings.connector_name)
    coordinator = program[kafka_nodes.transaction_coordinator(settings.kafka_bootstrap, txn_id)]
    running, figures, watchdog_since = _task_scenario(
        settings,
        layout,
        writer,
        lambda worker: (
            f"the task's transaction coordinator ({coordinator}) behind 30 % loss and"
            f" 200 ms delay from {worker}"
        ),
    )
    worker = connect_workers.program_of(layout, running)
    # The loss inside the delay: it then hits the connections the delay's proxy carries too.
    with faults.delay(worker, coordinator, 200, jitter=20), faults.loss(worker, coordinator, 30):
        figures.fault_started()
        _hold(30, writer)
    figures.healed()
    _publishing_again(settings, layout, figures, watchdog_since)
    writer.wait_more()
    # No bound on the rate during the fault: 30 % loss both ways on top of 200 ms may stall
    # the task's producer for the whole 30 s (0.66 to 67 records/s in the rehearsals); what must
    # hold is that publishing resumes (above) and the oracle.
    figures.record()


def _job_figures(settings: Settings, writer: Writer, scenario: str) -> Figures:
    """A job scenario's figures (its hop: the batches the job commits), baseline taken."""
    figures = Figures(scenario, writer, hop=lambda: job_progress.last_batch(settings))
    figures.baseline(BASELINE_S)
    return figures


def _job_commits_again(settings: Settings, writer: Writer, figures: Figures) -> None:
    """Recovery of the job after the heal: it commits a batch again; then the figures."""
    at_heal = job_progress.last_batch(settings)
    figures.recovered_when(
        lambda: job_progress.last_batch(settings) > at_heal,
        what="the job committing a batch after the heal",
        timeout=300,
    )
    writer.wait_more()
    figures.record()


def _driver_cut_from_postgres(settings: Settings, writer: Writer) -> None:
    """The job's driver loses Postgres for 20 s while a micro-batch runs: the batch's commit
    waits or fails (the job restarts), and the ledger makes its replay count nothing twice."""
    ui = f"http://127.0.0.1:{get_aggregation_settings().agg_ui_port}"
    figures = _job_figures(settings, writer, "the job's driver cut from Postgres mid-batch")
    wait_for(
        lambda: bool(spark_driver.running_jobs(ui)),
        what="a micro-batch running",
        timeout=120,
        interval=0.05,
    )
    with faults.partition("aggregation", network_nodes.POSTGRES):
        figures.fault_started()
        _hold(20, writer)
    figures.healed()
    _job_commits_again(settings, writer, figures)


def _executors_slowed_to_postgres(settings: Settings, layout: Layout, writer: Writer) -> None:
    """Every answer from Postgres to the job's executors (on either Spark worker) 500 ms late,
    until a batch staged through the delay commits (at least 30 s): batches slow down, none is
    lost or doubled; after the heal the next batch commits."""
    assert layout.spark is not None, "the cluster runs Spark standalone"
    figures = _job_figures(settings, writer, "the job's executors slowed to Postgres by 500 ms")
    with ExitStack() as slowed:
        for worker in layout.spark.workers:  # each runs its executors under its own group
            slowed.enter_context(faults.delay(worker.program, network_nodes.POSTGRES, 500))
        figures.fault_started()
        at_fault = job_progress.last_batch(settings)
        wait_for(
            lambda: job_progress.last_batch(settings) > at_fault + 1,
            what="a batch staged through the 500 ms delay committed",
            timeout=300,
        )
        figures.notes["batch_through_delay_after_s"] = round(time.monotonic() - figures.started, 1)
        _hold(30 - (time.monotonic() - figures.started), writer)
    figures.healed()
    # A connection the delay's proxy left silent ends at the executors' socket timeout
    # (stage.socket_timeout_s, 150 s), then Spark runs the task again.
    _job_commits_again(settings, writer, figures)
    assert figures.hop_during_per_s > 0, "no batch committed while the executors were slowed"


# Seven faults, each with its baseline, hold and recovery, then the oracle: about 9-11 minutes.
@pytest.mark.timeout(1200)
def test_network_faults_lose_and_duplicate_nothing(
    api: httpx.Client,
    analyst: analytics.Conn,
    settings: Settings,
    layout: Layout,
    writer: Writer,
) -> None:
    with (
        exactly_once_under_load(api, analyst, settings, writer),
        network_nodes.named(settings, layout),
    ):
        _notifications_cut(layout, writer)
        writer.wait_more()
        _connect_cut_from_brokers(settings, layout, writer)
        _connect_cut_from_postgres(settings, layout, writer)
        _leader_isolated_from_brokers(settings, layout, writer)
        _coordinator_behind_loss(settings, layout, writer)
        _driver_cut_from_postgres(settings, writer)
        _executors_slowed_to_postgres(settings, layout, writer)
