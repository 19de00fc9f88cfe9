"""The NOLOGIN group roles that hold every privilege (migrations/sql/grants.sql grants to them).

Each login role of the settings (`<role>_db_user`) joins the group of its role; the schema
owner (`owner_db_user`) owns the objects and needs no group.
"""

GROUPS: dict[str, str] = {
    "app": "onceflow_app",
    "cdc": "onceflow_cdc",
    "spark": "onceflow_spark",
    # The job's executors: INSERT into the staging area only (migration 0019).
    "spark_stage": "onceflow_spark_stage",
    # Read the job's ledger and the reconciliation's reports, write nothing (migration 0020).
    "observer": "onceflow_observer",
    # The reconciler: schema reconcile, reads of analytics.daily_sales and the ledger (0020).
    "reconcile": "onceflow_reconcile",
    # Maintenance's prunes of the job's bookkeeping: SELECT and DELETE, the dedup set's roll (0021).
    "maintenance": "onceflow_maintenance",
    "analyst": "onceflow_analyst",
}
