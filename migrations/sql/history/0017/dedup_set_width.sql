-- The width of partitions created from now on. Partitions made ahead at another width that hold
-- no id yet are dropped, and dedup_cover makes them again at the new width: a change applies
-- from the end of the partition being filled now (a partition holding ids keeps its bounds).
CREATE OR REPLACE FUNCTION analytics.dedup_set_width(p_width interval) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_part analytics.dedup_partitions;
    v_empty boolean;
BEGIN
    PERFORM analytics.lock_writers();
    UPDATE analytics.dedup_state SET width = p_width WHERE width IS DISTINCT FROM p_width;
    FOR v_part IN SELECT * FROM analytics.dedup_partitions p
                   WHERE p.lower_bound > now() AND p.upper_bound - p.lower_bound <> p_width LOOP
        EXECUTE format('SELECT NOT EXISTS (SELECT FROM analytics.%I)', v_part.name) INTO v_empty;
        IF v_empty THEN
            EXECUTE format('DROP TABLE analytics.%I', v_part.name);
            DELETE FROM analytics.dedup_partitions p WHERE p.name = v_part.name;
        END IF;
    END LOOP;
END $$;
