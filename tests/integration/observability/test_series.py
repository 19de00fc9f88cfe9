"""The series of docs/observability.md exist in Prometheus, from the real exporters: Connect
and Debezium (JMX agent), the broker (JMX agent, after transactional traffic and a fenced
producer made here), PostgreSQL (the exporter's project queries) and supervisor (its event
listener)."""

import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from onceflow.settings import get_settings
from onceflow.settings.kafka_auth import client_config
from stack.components import components
from tests.integration.observability.prom import value, wait_for_samples

pytestmark = pytest.mark.integration

CONNECTOR = get_settings().connector_name
TASK = f'connector="{CONNECTOR}",task="0"'
SERVER = 'server="onceflow"'  # the connector's topic.prefix
TXN_REQUESTS = [
    "Produce",
    "InitProducerId",
    "AddPartitionsToTxn",
    "AddOffsetsToTxn",
    "EndTxn",
    "TxnOffsetCommit",
    "WriteTxnMarkers",
]
TABLES = [
    "orders.idempotency_keys",
    "aggregation.applied_events",
    "aggregation.applied_batches",
    "analytics.dead_letters",
    "aggregation.late_events",
]


@pytest.mark.parametrize(
    "expr",
    [
        f'kafka_connect_connector_status{{connector="{CONNECTOR}",status="running"}} == 1',
        f'kafka_connect_task_status{{{TASK},status="running"}} == 1',
        f"kafka_connect_source_task_transaction_size_avg{{{TASK}}}",
        f"kafka_connect_source_task_transaction_size_max{{{TASK}}}",
        f"kafka_connect_source_task_transaction_size_min{{{TASK}}}",
        f"kafka_connect_source_task_source_record_poll_rate{{{TASK}}}",
        f"kafka_connect_source_task_source_record_write_rate{{{TASK}}}",
        f'kafka_producer_txn_commit_time_ns_total{{client_id="connector-producer-{CONNECTOR}-0"}}',
        f'kafka_producer_txn_abort_time_ns_total{{client_id="connector-producer-{CONNECTOR}-0"}}',
        f"debezium_postgres_streaming_connected{{{SERVER}}} == 1",
        f"debezium_postgres_streaming_milliseconds_behind_source{{{SERVER}}}",
        f"debezium_postgres_streaming_queue_remaining_capacity{{{SERVER}}} > 0",
        f"debezium_postgres_streaming_total_number_of_events_seen{{{SERVER}}}",
        f"debezium_postgres_streaming_number_of_committed_transactions{{{SERVER}}}",
        f"debezium_postgres_streaming_milliseconds_since_last_event{{{SERVER}}}",
    ],
)
def test_connect_and_debezium_series(expr: str) -> None:
    samples = wait_for_samples(expr)
    assert {s["metric"]["job"] for s in samples} == {"connect"}


@pytest.mark.parametrize(
    "expr",
    [
        f'onceflow_slot_active{{slot="{get_settings().replication_slot}"}} == 1',
        f'onceflow_slot_wal_status{{slot="{get_settings().replication_slot}"}} == 1',
        "onceflow_slot_safe_wal_size_bytes > 0",
        "onceflow_slot_retained_wal_bytes >= 0",
        "onceflow_slot_unconfirmed_wal_bytes >= 0",
        *(f'onceflow_table_rows{{table="{table}"}} >= 0' for table in TABLES),
        *(f'onceflow_table_bytes{{table="{table}"}} > 0' for table in TABLES),
        f'pg_stat_activity_count{{datname="{get_settings().pg_database}",state="active"}}',
        "pg_up == 1",
    ],
)
def test_postgres_series(expr: str) -> None:
    samples = wait_for_samples(expr)
    assert {s["metric"]["job"] for s in samples} == {"postgres"}


def test_wal_status_is_a_label_of_one_series_per_slot() -> None:
    samples = wait_for_samples("onceflow_slot_wal_status")
    statuses = {s["metric"]["wal_status"] for s in samples}
    assert statuses <= {"reserved", "extended", "unreserved", "lost"}, statuses
    slots = [s["metric"]["slot"] for s in samples]
    assert len(slots) == len(set(slots))


def test_debezium_lag_is_one_series_per_connector() -> None:
    # The exporter's patterns are not anchored: Debezium's statistics beside the attribute
    # (MaxValue, P99, ...) would come out under the same name and make the lag look stuck.
    lag = f"debezium_postgres_streaming_milliseconds_behind_source{{{SERVER}}}"
    samples = wait_for_samples(f"count by (instance, server) ({lag})")
    assert [value(s) for s in samples] == [1.0]


@pytest.mark.parametrize(
    "expr",
    [
        "kafka_controller_active_controller_count == 1",
        "kafka_controller_offline_partitions_count == 0",
        "kafka_server_replica_manager_under_replicated_partitions",
        f'kafka_cluster_partition_last_stable_offset_lag{{topic="{get_settings().topic}"}}',
    ],
)
def test_broker_series(expr: str) -> None:
    samples = wait_for_samples(expr)
    assert {s["metric"]["job"] for s in samples} == {"kafka"}


@pytest.fixture(scope="module")
def fenced() -> Iterator[str]:
    """A scratch topic, a committed transaction with consumer offsets (every transaction
    request), then the same transactional.id started again so the first producer is fenced."""
    bootstrap = get_settings().kafka_bootstrap
    name = f"test-obs-{uuid.uuid4().hex[:10]}"
    admin = AdminClient(client_config(bootstrap, "tests"))
    for future in admin.create_topics([NewTopic(name, 1, -1)]).values():
        future.result(timeout=30)
    try:
        group = Consumer({**client_config(bootstrap, "tests"), "group.id": name})
        first = Producer({**client_config(bootstrap, "tests"), "transactional.id": name})
        first.init_transactions(30)
        first.begin_transaction()
        first.produce(name, b"committed")
        first.send_offsets_to_transaction(
            [TopicPartition(name, 0, 1)], group.consumer_group_metadata(), 30
        )
        first.commit_transaction(30)
        first.begin_transaction()
        first.produce(name, b"to be fenced")
        first.flush(30)
        second = Producer({**client_config(bootstrap, "tests"), "transactional.id": name})
        second.init_transactions(30)  # bumps the epoch: `first` is now a zombie
        first.produce(name, b"zombie")
        with pytest.raises(KafkaException):
            first.commit_transaction(30)
        group.close()
        yield name
    finally:
        for future in admin.delete_topics([name]).values():
            future.result(timeout=30)
        for future in admin.delete_consumer_groups([name]).values():
            future.result(timeout=30)


@pytest.mark.parametrize("request_type", TXN_REQUESTS)
def test_transaction_request_series(fenced: str, request_type: str) -> None:
    request = f'request="{request_type}"'
    wait_for_samples(f"sum by (request) (kafka_network_request_rate{{{request}}}) > 0")
    wait_for_samples(f"kafka_network_requests_total{{{request}}} > 0")
    quantiles = wait_for_samples(f"kafka_network_request_total_time_ms{{{request}}}")
    assert {s["metric"]["quantile"] for s in quantiles} == {"0.5", "0.95", "0.99", "0.999"}
    wait_for_samples(f'kafka_network_request_errors_total{{{request},error="NONE"}} > 0')


def test_a_fenced_producer_shows_in_the_error_counts(fenced: str) -> None:
    samples = wait_for_samples(
        'kafka_network_request_errors_total{error=~"PRODUCER_FENCED|INVALID_PRODUCER_EPOCH"} > 0'
    )
    assert {s["metric"]["job"] for s in samples} == {"kafka"}
    assert all(value(s) > 0 for s in samples)


def test_supervisor_reports_every_programs_starts_and_running_processes() -> None:
    names = {c.name for c in components(get_settings())}
    requested = wait_for_samples('onceflow_supervisor_process_starts_total{trigger="requested"}')
    started = {s["metric"]["program"]: value(s) for s in requested}
    assert names <= started.keys()
    assert all(started[name] >= 1 for name in names)  # `make up` started each
    automatic = wait_for_samples('onceflow_supervisor_process_starts_total{trigger="automatic"}')
    assert names <= {s["metric"]["program"] for s in automatic}  # at 0 until a restart
    running = wait_for_samples("onceflow_supervisor_process_start_time_seconds")
    assert names <= {s["metric"]["program"] for s in running}
