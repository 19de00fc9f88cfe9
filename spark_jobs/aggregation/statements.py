"""The job's SQL statements, one .sql file each in sql/ (read once per process)."""

from functools import cache
from pathlib import Path

FOLDER = Path(__file__).parent / "sql"


@cache
def sql(name: str) -> str:
    """The statement in sql/<name>.sql."""
    return (FOLDER / f"{name}.sql").read_text()
