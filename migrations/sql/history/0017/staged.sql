-- The job's staging area (migration 0010): the executors write a micro-batch here in parallel
-- (Spark's JDBC writer, one transaction per Spark task), keyed by (query id, batch id); the
-- driver folds it into analytics.* and deletes it in the batch's transaction. One row per Kafka
-- record: a valid event (error NULL: the columns of the job's temp table t_events) or a dead
-- letter (error set: those of t_dead); spark_jobs/aggregation/staging.py names them. UNLOGGED:
-- written without WAL (a crash-restart empties it; the fold counts the rows and refuses an
-- incomplete batch). A retried task may have written its rows twice: the fold reads each
-- (kafka_partition, kafka_offset) once.
CREATE UNLOGGED TABLE analytics.staged_records (
    query_id        text        NOT NULL,
    batch_id        bigint      NOT NULL,
    kafka_partition integer     NOT NULL,
    kafka_offset    bigint      NOT NULL,
    kafka_timestamp timestamptz,
    event_id        uuid,
    event_type      text,
    occurred_at     timestamptz,
    day             date,
    order_id        text,
    customer_id     text,
    currency        text,
    status          text,
    status_rank     smallint,
    total_cents     bigint,
    items           jsonb,
    topic           text,
    key             bytea,
    value           bytea,
    error           text,
    staged_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX staged_records_by_batch
    ON analytics.staged_records (query_id, batch_id, kafka_partition, kafka_offset);
