"""A supervised program's log from a point on: what it said since a fault began."""

from onceflow import paths


def log_size(program: str) -> int:
    return (paths.LOGS / f"{program}.log").stat().st_size


def log_since(program: str, offset: int) -> str:
    with (paths.LOGS / f"{program}.log").open("rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")
