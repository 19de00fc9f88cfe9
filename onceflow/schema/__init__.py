"""The database schema as SQLAlchemy Core metadata: the single definition of every table.

Alembic's migrations must produce exactly this (`alembic check` in `make test`); the API's read
queries are built from these Table objects. CHECK constraints are compared with
onceflow.contract by tests/integration/schema/test_contract_bounds.py.
"""

from onceflow.schema import analytics, orders, reconcile, staged
from onceflow.schema.metadata import SCHEMAS, metadata

__all__ = ["SCHEMAS", "analytics", "metadata", "orders", "reconcile", "staged"]
