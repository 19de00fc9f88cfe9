"""A batch staged the way the executors stage it, without Spark: COPY lines keyed for the
staging area, each list of lines one part written by stage.PartWriter."""

from collections.abc import Mapping, Sequence

from spark_jobs.aggregation.stage import PartWriter


def stage_lines(
    dsn: str, query_id: str, batch_id: int, parts: Mapping[tuple[str, int], Sequence[str]]
) -> dict[tuple[str, int], int]:
    """Stage (kind, part) -> COPY lines of the staged table `kind`; what the executors report."""
    writer = PartWriter(dsn, "-c TimeZone=UTC", query_id, batch_id)
    rows = [
        {
            "kind": kind,
            "part": part,
            "payload": "\n".join(f"{query_id}\t{batch_id}\t{part}\t{line}" for line in lines),
            "rows": len(lines),
        }
        for (kind, part), lines in parts.items()
        if lines
    ]
    return {(kind, part): n for kind, part, n in writer(rows)}
