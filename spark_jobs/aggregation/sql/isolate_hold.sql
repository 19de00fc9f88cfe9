-- The fold of a batch the database refused, piece by piece (refold.py): its events and dead
-- letters are held aside, and each piece is put back into t_events. Every copy of an event id
-- has the same piece_row, so one piece holds all of them (in-batch de-duplication stays whole).
CREATE TEMP TABLE t_held ON COMMIT DROP AS
SELECT dense_rank() OVER (ORDER BY event_id) - 1 AS piece_row, * FROM t_events;
CREATE TEMP TABLE t_held_dead ON COMMIT DROP AS SELECT * FROM t_dead;
DELETE FROM t_events;
DELETE FROM t_dead
