-- The job's de-duplication set, bounded: applied_events is partitioned by the event's
-- occurred_at (a timestamp every copy of an event shares), so forgetting a window's worth of ids
-- is dropping a partition, never a DELETE. dedup_state holds the partition width and the
-- horizon: ids of events that occurred before `forgotten_before` are no longer remembered, and
-- such an event is counted as late (analytics.late_events says which, docs/analytics.md why).
-- The functions run as the schema owner (SECURITY DEFINER): the job's role may add and drop
-- partitions through them, and nothing else of the DDL.

-- Every writer of analytics.* (the job's batches, partition changes) holds this lock for its
-- transaction, so two writers can neither deadlock nor double count.
CREATE FUNCTION analytics.lock_writers() RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT pg_advisory_xact_lock(253554448);  -- 0x0F1CEF10
END;

CREATE FUNCTION analytics.dedup_bucket(p_at timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE
RETURN date_bin((SELECT width FROM analytics.dedup_state), p_at, timestamptz '2000-01-01 00:00Z');

-- Partitions covering [bucket, bucket + width) for every bucket start in p_buckets at or after
-- the horizon: the gaps are filled with new partitions, which never overlap one that exists
-- (partitions made with an earlier width keep their bounds). Returns how many were created.
CREATE FUNCTION analytics.dedup_cover(p_buckets timestamptz[]) RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_state analytics.dedup_state;
    v_bucket timestamptz;
    v_at timestamptz;
    v_upper timestamptz;
    v_name text;
    v_created integer := 0;
BEGIN
    PERFORM analytics.lock_writers();
    SELECT * INTO STRICT v_state FROM analytics.dedup_state;
    FOR v_bucket IN SELECT DISTINCT b FROM unnest(p_buckets) AS b
                    WHERE b IS NOT NULL AND b >= v_state.forgotten_before ORDER BY b LOOP
        v_at := v_bucket;
        WHILE v_at < v_bucket + v_state.width LOOP
            SELECT p.upper_bound INTO v_upper FROM analytics.dedup_partitions p
             WHERE p.lower_bound <= v_at AND v_at < p.upper_bound;
            IF NOT FOUND THEN
                SELECT least(min(p.lower_bound), v_bucket + v_state.width) INTO v_upper
                  FROM analytics.dedup_partitions p WHERE p.lower_bound > v_at;
                v_upper := coalesce(v_upper, v_bucket + v_state.width);
                v_name := 'applied_events_'
                          || to_char(v_at AT TIME ZONE 'UTC', 'YYYYMMDD"T"HH24MISS');
                EXECUTE format('CREATE TABLE analytics.%I PARTITION OF analytics.applied_events '
                               'FOR VALUES FROM (%L) TO (%L)', v_name, v_at, v_upper);
                INSERT INTO analytics.dedup_partitions (name, lower_bound, upper_bound)
                VALUES (v_name, v_at, v_upper);
                v_created := v_created + 1;
            END IF;
            v_at := v_upper;
        END LOOP;
    END LOOP;
    RETURN v_created;
END $$;

-- Forget every partition that ends at or before p_before; the horizon moves to the latest end
-- dropped. Returns what went, for the caller's log and metrics.
CREATE FUNCTION analytics.dedup_forget(p_before timestamptz)
RETURNS TABLE (partition_name text, ids bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_part analytics.dedup_partitions;
BEGIN
    PERFORM analytics.lock_writers();
    FOR v_part IN SELECT * FROM analytics.dedup_partitions p WHERE p.upper_bound <= p_before
                  ORDER BY p.lower_bound LOOP
        EXECUTE format('SELECT count(*) FROM analytics.%I', v_part.name) INTO ids;
        EXECUTE format('DROP TABLE analytics.%I', v_part.name);
        DELETE FROM analytics.dedup_partitions p WHERE p.name = v_part.name;
        UPDATE analytics.dedup_state
           SET forgotten_before = greatest(forgotten_before, v_part.upper_bound);
        partition_name := v_part.name;
        RETURN NEXT;
    END LOOP;
END $$;

-- The width of partitions created from now on (those that exist keep theirs).
CREATE FUNCTION analytics.dedup_set_width(p_width interval) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    UPDATE analytics.dedup_state SET width = p_width WHERE width IS DISTINCT FROM p_width;
END;
