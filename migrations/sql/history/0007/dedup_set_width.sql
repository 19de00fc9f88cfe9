-- Before 0008: the width of partitions created from now on (those that exist keep theirs).
CREATE OR REPLACE FUNCTION analytics.dedup_set_width(p_width interval) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    UPDATE analytics.dedup_state SET width = p_width WHERE width IS DISTINCT FROM p_width;
END;
