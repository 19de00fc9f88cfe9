"""The NOLOGIN group roles that hold every privilege (migrations/sql/grants.sql grants to them).

Each login role of the settings (`<role>_db_user`) joins the group of its role; the schema
owner (`owner_db_user`) owns the objects and needs no group.
"""

GROUPS: dict[str, str] = {
    "app": "onceflow_app",
    "cdc": "onceflow_cdc",
    "spark": "onceflow_spark",
    "analyst": "onceflow_analyst",
}
