"""The one MetaData that every table of Onceflow belongs to."""

from sqlalchemy import MetaData

SCHEMAS = ("orders", "analytics")
metadata = MetaData()
