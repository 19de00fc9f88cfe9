"""The soak benchmark's plot: one panel per kind of state, the first window marked."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

PANELS = (
    (
        "bounded state (rows)",
        "rows aggregation.applied_events",
        "rows aggregation.applied_batches",
        "rows orders.idempotency_keys",
        "rows aggregation.late_events",
    ),
    (
        "bounded state (bytes)",
        "bytes aggregation.applied_events",
        "bytes aggregation.applied_batches",
        "bytes orders.idempotency_keys",
    ),
    ("WAL and topic (bytes)", "wal retained bytes", "topic bytes on disk"),
    (
        "memory, PSS (bytes)",
        "pss postgres",
        "pss kafka",
        "pss connect",
        "pss api",
        "pss maintenance",
        "pss aggregation",
    ),
    (
        "open file descriptors",
        "fds postgres",
        "fds kafka",
        "fds connect",
        "fds api",
        "fds maintenance",
        "fds aggregation",
    ),
    ("freshness (s) and business data (orders)", "freshness s"),
)


def plot(samples: list[dict[str, float]], window_s: float, path: Path) -> None:
    """Write the PNG: time in minutes on x, a dashed line where the first window ends."""
    figure, axes = plt.subplots(3, 2, figsize=(14, 12))
    minutes = [s["t"] / 60 for s in samples]
    for ax, (title, *series) in zip(axes.flat, PANELS, strict=True):
        for name in series:
            ax.plot(minutes, [s.get(name, 0.0) for s in samples], label=name)
        ax.axvline(window_s / 60, linestyle="--", color="grey", label="first window ends")
        ax.set_title(title)
        ax.set_xlabel("minutes")
        ax.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
