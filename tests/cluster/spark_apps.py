"""Throw-away Spark applications against a standalone master, each a PySpark driver in its own
process (its own session, killed with its JVM afterwards), to see whether the master lets it in.

`python -m tests.cluster.spark_apps MASTER NAME CONF_JSON` is one such driver: it connects as
NAME with the given extra settings, says REGISTERED once its session is up and runs a tiny job.
"""

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from onceflow.paths import ROOT

REGISTERED = "registered with the master"
# StandaloneAppClient's warning when a registration attempt fails (Spark 4.2).
REFUSED = "Failed to connect to master"


@contextmanager
def running_app(master: str, name: str, conf: dict[str, str], log: Path) -> Iterator[Path]:
    """Run a throw-away driver of application `name` (its output in `log`) until leaving."""
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.cluster.spark_apps", master, name, json.dumps(conf)],
            cwd=ROOT,
            env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield log
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


def refused(log: Path) -> bool:
    """Whether the driver writing `log` was refused by the master (and never let in)."""
    text = log.read_text(errors="replace")
    if REGISTERED in text:
        raise AssertionError(f"the master let the application in: {log}")
    return REFUSED in text


def main(master: str, name: str, conf: dict[str, str]) -> None:
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName(name)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "512m")
        .config("spark.executor.memory", "512m")
        .config("spark.cores.max", "1")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    print(REGISTERED, flush=True)
    print("sum", spark.sparkContext.parallelize(range(100), 2).sum(), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
