"""De-duplication by event id across input partitions (contract section 4b, issue 22): every
notified event produced again on each other partition yields no second notification, with two
instances splitting the partitions, after a restart, and after the local cache is deleted; a
copy with other content on another partition is a dead letter."""

from pathlib import Path

from onceflow.event_definition import REUSED_ID
from tests.integration.notifications.harness import Input, Instance, Scratch, check
from tests.integration.notifications.test_conflicts import changed


def copy_elsewhere(source: Input, everywhere: list[int], home: dict[bytes, int]) -> int:
    """Every valid record sent so far, again on each partition but the one it first landed on
    (`home`: its value -> that partition); how many."""
    source.flush()
    copies = 0
    for r in list(source.sent):
        for partition in everywhere:
            if partition != home[r[1]]:
                source.send(r, partition=partition)
                copies += 1
    return copies


def test_a_copy_on_another_partition_is_not_notified_again(
    scratch: Scratch, tmp_path: Path
) -> None:
    everywhere = scratch.partitions()
    assert len(everywhere) > 1
    source = Input(scratch)
    for _ in range(40):
        source.order(events=3)
    one = Instance(scratch, 1, tmp_path / "1.log")
    two = Instance(scratch, 2, tmp_path / "2.log")
    check(scratch, source)
    source.flush()  # every delivery report served
    home = dict(source.landed)  # each record's first landing (copies overwrite landed)
    # Read by the instance that owns the other partition, or by the one that notified it.
    assert copy_elsewhere(source, everywhere, home) == len(source.sent) * (len(everywhere) - 1)
    check(scratch, source)
    assert two.stop() == 0
    # The same again for a restarted instance with its cache, then one without it.
    assert one.stop() == 0
    copy_elsewhere(source, everywhere, home)
    one = Instance(scratch, 1, tmp_path / "1b.log")
    check(scratch, source)
    assert one.stop() == 0
    (scratch.state_dir / f"{scratch.name}-1.sqlite").unlink()
    copy_elsewhere(source, everywhere, home)
    # Other content under a notified id, on another partition: a dead letter.
    first = source.sent[0]
    conflict = changed(first, occurred_at="2026-11-22T10:00:00Z")
    other = next(p for p in everywhere if p != home[first[1]])
    source.send(conflict, partition=other)
    source.poison[conflict[1]] = REUSED_ID
    one = Instance(scratch, 1, tmp_path / "1c.log")
    check(scratch, source)
    assert one.stop() == 0
