"""Each component's process (supervisor) and whether it works (its probe): what `make status`
and `onceflow-ops overview` show."""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from onceflow.settings import get_observability_settings
from stack import health, supervisor
from stack.components import Component


@dataclass(frozen=True)
class Checked:
    """One component: its process and why it does not work (None: it works)."""

    process: health.Process
    problem: str | None

    @property
    def healthy(self) -> bool:
        """Its process runs and its probe passed."""
        return self.problem is None

    def as_dict(self) -> dict[str, Any]:
        """For --json."""
        return {**self.process.as_dict(), "healthy": self.healthy, "problem": self.problem}


def exporter_url() -> str:
    """The supervisor exporter's metrics (automatic restarts of every program)."""
    return f"http://127.0.0.1:{get_observability_settings().supervisor_exporter_port}/metrics"


def check(parts: list[Component]) -> dict[str, Checked]:
    """Each component's process and verdict, its probes run side by side (a frozen one costs
    its deadline once, not once per component)."""
    proxy = supervisor.proxy() if supervisor.is_running() else None
    processes = health.processes(proxy, exporter_url(), [c.name for c in parts])
    with ThreadPoolExecutor(max_workers=max(1, len(parts))) as pool:
        verdicts = pool.map(lambda c: health.verdict(processes[c.name], c.check), parts)
        return {
            c.name: Checked(processes[c.name], problem)
            for c, problem in zip(parts, verdicts, strict=True)
        }
