-- Durable de-duplication, step 2: drop the events an earlier batch counted (t_counted).
DELETE FROM t_new n USING t_counted c WHERE c.event_id = n.event_id
