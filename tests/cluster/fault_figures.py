"""What a network-fault scenario records: availability during the fault (the API's writes, and
the cut hop's own output, as rates against the same span just before the fault) and the time to
recover after the heal. Each scenario's figures are printed and appended, one JSON line, to
.stack/logs/network-faults.jsonl (docs/benchmarks.md, "Network faults", quotes them)."""

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime

from onceflow import paths
from stack.health import scrape
from stack.waiting import wait_for
from tests.e2e.writer import Writer

FIGURES = paths.LOGS / "network-faults.jsonl"


def notified(port: int) -> float:
    """An instance's notified events so far (its metrics endpoint), 0 when it does not answer."""
    samples = scrape(f"http://127.0.0.1:{port}/metrics")
    if isinstance(samples, str):
        return 0.0
    return sum(
        value
        for labels, value in samples.get("onceflow_notifications_records_total", [])
        if labels.get("outcome") == "notified"
    )


@dataclass
class Figures:
    """One scenario's figures; `hop` is the cut component's output (a count that grows)."""

    scenario: str
    writer: Writer
    hop: Callable[[], float]
    fault_s: float = 0.0
    writes_before_per_s: float = 0.0
    writes_during_per_s: float = 0.0
    hop_before_per_s: float = 0.0
    hop_during_per_s: float = 0.0
    recovery_s: float = 0.0
    notes: dict[str, float | str] = field(default_factory=dict)
    _mark: tuple[float, int, float] = (0.0, 0, 0.0)

    def _now(self) -> tuple[float, int, float]:
        return time.monotonic(), self.writer.orders(), self.hop()

    def baseline(self, seconds: float) -> None:
        """Rates over `seconds` just before the fault."""
        t0, w0, h0 = self._now()
        time.sleep(seconds)  # a measured span, not a wait for a condition
        t1, w1, h1 = self._now()
        self.writes_before_per_s = (w1 - w0) / (t1 - t0)
        self.hop_before_per_s = (h1 - h0) / (t1 - t0)
        self._mark = (t1, w1, h1)

    def fault_started(self) -> None:
        self._mark = self._now()

    @property
    def started(self) -> float:
        """When the fault started (time.monotonic()); after the heal, when it was healed."""
        return self._mark[0]

    def healed(self) -> None:
        t1, w1, h1 = self._now()
        t0, w0, h0 = self._mark
        self.fault_s = t1 - t0
        self.writes_during_per_s = (w1 - w0) / self.fault_s
        self.hop_during_per_s = (h1 - h0) / self.fault_s
        self._mark = (t1, w1, h1)

    def recovered_when(self, condition: Callable[[], bool], what: str, timeout: float) -> None:
        """Wait for the hop to work again; the recovery time is from the heal to then."""
        wait_for(condition, what=what, timeout=timeout, interval=0.2)
        self.recovery_s = time.monotonic() - self._mark[0]

    def record(self) -> dict[str, object]:
        taken = (getattr(self, f.name) for f in fields(self))
        row = {
            f.name: round(v, 2) if isinstance(v, float) else v
            for f, v in zip(fields(self), taken, strict=True)
            if f.name not in ("writer", "hop", "_mark")
        }
        row["at"] = datetime.now(UTC).isoformat(timespec="seconds")
        FIGURES.parent.mkdir(parents=True, exist_ok=True)
        with FIGURES.open("a") as out:
            out.write(json.dumps(row) + "\n")
        print(f"network fault figures: {row}")
        return row
