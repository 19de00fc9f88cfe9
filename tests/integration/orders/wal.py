"""Logical decoding for tests: committed transactions as a temporary test_decoding slot sees
them (conftest's `wal` fixture creates the slot)."""

import re
from dataclasses import dataclass, field
from typing import Any

import psycopg

CHANGE = re.compile(r"^table (\S+): (INSERT|UPDATE|DELETE): (.*)$", re.DOTALL)
FIELD = re.compile(r"(\w+)\[[^\]]+\]:('(?:[^']|'')*'|\S+)")


@dataclass
class Transaction:
    """One committed transaction: its row changes as (table, operation, column values)."""

    xid: int
    changes: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)

    def of(self, table: str, op: str) -> list[dict[str, str]]:
        return [values for t, o, values in self.changes if (t, o) == (table, op)]


class Wal:
    """A temporary test_decoding slot: committed transactions, as logical decoding sees them."""

    def __init__(self, conn: psycopg.Connection[tuple[Any, ...]], slot: str) -> None:
        self.conn, self.slot = conn, slot

    def transactions(self) -> list[Transaction]:
        rows = self.conn.execute(
            "SELECT xid::text::bigint, data FROM pg_logical_slot_get_changes(%s, NULL, NULL, "
            "'include-xids', '1', 'skip-empty-xacts', '1')",
            (self.slot,),
        ).fetchall()
        by_xid: dict[int, Transaction] = {}
        for xid, data in rows:
            match = CHANGE.match(data)
            if match:
                table, op, rest = match.groups()
                values = {
                    k: v[1:-1].replace("''", "'") if v.startswith("'") else v
                    for k, v in FIELD.findall(rest)
                }
                by_xid.setdefault(xid, Transaction(xid)).changes.append((table, op, values))
        return list(by_xid.values())
