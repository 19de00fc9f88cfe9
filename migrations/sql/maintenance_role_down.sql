-- Migration 0021's downgrade: the maintenance role's group holds nothing (maintenance of the
-- previous revision prunes as the job's role, which still has every privilege it needs).
REVOKE ALL ON ALL TABLES IN SCHEMA aggregation FROM onceflow_maintenance;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA aggregation FROM onceflow_maintenance;
REVOKE ALL ON SCHEMA aggregation FROM onceflow_maintenance;
