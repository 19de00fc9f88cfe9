"""The Kafka source: committed records of the order topic, with headers."""

from pyspark.sql import DataFrame, SparkSession

from onceflow.settings import AggregationSettings
from onceflow.settings.kafka_auth import AGGREGATION_GROUP_PREFIX, get_kafka_auth_settings


def kafka_options(
    bootstrap: str, topic: str, settings: AggregationSettings, *, backfill: bool
) -> dict[str, str]:
    """readStream options; only Kafka transactions that committed are ever read, as the job's
    Kafka principal (its SASL settings when on)."""
    max_offsets = (
        settings.agg_backfill_max_offsets_per_trigger
        if backfill
        else settings.agg_max_offsets_per_trigger
    )
    options = {
        "kafka.bootstrap.servers": bootstrap,
        "subscribe": topic,
        "kafka.isolation.level": "read_committed",
        "includeHeaders": "true",
        "startingOffsets": "earliest" if backfill else settings.agg_starting_offsets,
        "failOnDataLoss": str(settings.agg_fail_on_data_loss).lower(),
        "maxOffsetsPerTrigger": str(max_offsets),
        "kafka.fetch.max.wait.ms": str(settings.agg_kafka_fetch_max_wait_ms),
        "groupIdPrefix": AGGREGATION_GROUP_PREFIX,
    }
    security = get_kafka_auth_settings().java_client_config("aggregation")
    options |= {f"kafka.{key}": value for key, value in security.items()}
    if backfill:
        options["minPartitions"] = str(settings.agg_backfill_min_partitions)
    return options


def read_orders(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    settings: AggregationSettings,
    *,
    backfill: bool = False,
) -> DataFrame:
    """Streaming DataFrame of raw Kafka rows (key, value, topic, partition, offset, headers)."""
    reader = spark.readStream.format("kafka")
    for key, value in kafka_options(bootstrap, topic, settings, backfill=backfill).items():
        reader = reader.option(key, value)
    return reader.load()
