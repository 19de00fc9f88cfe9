-- The job's staging area (migration 0010): executors COPY a micro-batch's parts here, keyed by
-- (query id, batch id, part); the driver folds them into analytics.* and deletes them in the
-- batch's transaction. UNLOGGED: written without WAL (a crash-restart empties them; the fold
-- counts the rows and refuses an incomplete batch). Columns after `part` are the job's temp
-- tables' (spark_jobs/aggregation/staging.py).
CREATE UNLOGGED TABLE analytics.staged_events (
    query_id        text        NOT NULL,
    batch_id        bigint      NOT NULL,
    part            integer     NOT NULL,
    kafka_partition integer,
    kafka_offset    bigint,
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
    staged_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX staged_events_by_batch ON analytics.staged_events (query_id, batch_id, part);

CREATE UNLOGGED TABLE analytics.staged_dead_letters (
    query_id        text        NOT NULL,
    batch_id        bigint      NOT NULL,
    part            integer     NOT NULL,
    topic           text,
    kafka_partition integer,
    kafka_offset    bigint,
    key             bytea,
    value           bytea,
    error           text,
    staged_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX staged_dead_letters_by_batch
    ON analytics.staged_dead_letters (query_id, batch_id, part);
