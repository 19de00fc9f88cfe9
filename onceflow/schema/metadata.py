"""The one MetaData that every table of Onceflow belongs to, and the types they share."""

from sqlalchemy import MetaData
from sqlalchemy.dialects.postgresql import TIMESTAMP

SCHEMAS = ("orders", "analytics")
metadata = MetaData()

# Every timestamp is a timestamptz (an instant), rendered and read as UTC.
TIMESTAMPTZ = TIMESTAMP(timezone=True)
