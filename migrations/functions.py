"""The server-side functions of schema `orders`: one .sql file each, in migrations/sql/orders/.

The files hold each function's current definition (readable, diffable). A migration that
changes any of them calls `replace_all(op)`, which drops every function of the schema and
creates them all again from the files, then grants EXECUTE to the API's group role only
(the pattern of Flyway's repeatable migrations: the file is the body's one home).
"""

from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent / "sql" / "orders"
HISTORY = FOLDER.parent / "history"
# Creation order: SQL-body functions are checked against the functions they call.
ORDER = (
    "iso_utc",
    "items_json",
    "order_json",
    "claim_key",
    "emit_event",
    "place_order",
    "transition_order",
)
DROP_ALL = """
DO $$
DECLARE fn oid;
BEGIN
    FOR fn IN SELECT p.oid FROM pg_proc p WHERE p.pronamespace = 'orders'::regnamespace LOOP
        -- CASCADE may already have dropped it with a function it depended on.
        IF EXISTS (SELECT 1 FROM pg_proc WHERE oid = fn) THEN
            EXECUTE format('DROP FUNCTION %s CASCADE', fn::regprocedure);
        END IF;
    END LOOP;
END $$
"""


def definition(name: str, earlier: Path | None = None) -> Path:
    """The file of function `name` as the revision of history folder `earlier` had it.

    A folder of migrations/sql/history/ holds the definitions its revision had of the functions
    the next function-changing migration changed; a function changed only later is in a later
    folder. So the first folder from `earlier` on that holds it wins, else FOLDER."""
    if earlier is not None:
        for folder in sorted(f for f in HISTORY.iterdir() if f.name >= earlier.name):
            if (file := folder / f"{name}.sql").exists():
                return file
    return FOLDER / f"{name}.sql"


def replace_all(op: Any, *, earlier: Path | None = None) -> None:
    """Drop every function of schema orders, create each from its file, grant EXECUTE.

    A downgrade passes `earlier`, the history folder of the revision it returns to."""
    op.execute(DROP_ALL)
    for name in ORDER:
        op.execute(definition(name, earlier).read_text())
    op.execute("REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA orders FROM PUBLIC")
    op.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA orders TO onceflow_app")
