-- The outbox slot as ops see it: active, wal_status (reserved / extended / unreserved / lost),
-- WAL retained (since restart_lsn), WAL not yet confirmed by the connector, and how much more
-- may pile up before max_slot_wal_keep_size makes Postgres drop what the slot needs.
SELECT active,
       coalesce(wal_status, 'lost'),
       coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::bigint,
       coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn), 0)::bigint,
       safe_wal_size
FROM pg_replication_slots
WHERE slot_name = %s
