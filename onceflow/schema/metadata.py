"""The one MetaData that every table of Onceflow belongs to, and the types they share."""

from sqlalchemy import MetaData
from sqlalchemy.dialects.postgresql import TIMESTAMP

# analytics: what analysts query (contract section 5); aggregation: the job's bookkeeping (its
# ledger, de-duplication set, staging area, late events and each order's latest status), which
# analysts neither see nor need (migration 0018 moved it out of analytics).
REPORTING_SCHEMA = "analytics"
BOOKKEEPING_SCHEMA = "aggregation"
# Every schema Onceflow owns (alembic compares these with the metadata; reconcile: migration 0017).
SCHEMAS = ("orders", REPORTING_SCHEMA, BOOKKEEPING_SCHEMA, "reconcile")
metadata = MetaData()

# Every timestamp is a timestamptz (an instant), rendered and read as UTC.
TIMESTAMPTZ = TIMESTAMP(timezone=True)
