"""`python -m services.notifications N`: run notifications instance N until SIGTERM.

A failed transaction is aborted, or its producer re-created, and the batch read again
(recovery.py). Exits non-zero when fenced or on an error a new producer would meet again: the
supervisor restarts it, and the restart's init_transactions() aborts what the old one left open.
"""

import faulthandler
import logging
import signal
import sys
import threading
from types import FrameType

import typer
from confluent_kafka import Consumer, KafkaException
from confluent_kafka.admin import AdminClient
from prometheus_client import start_http_server

from onceflow import logs
from onceflow.settings import (
    get_notification_settings,
    get_observability_settings,
    get_retention_settings,
    get_settings,
)
from onceflow.settings.kafka_auth import client_config
from services.notifications.clients import make_clients, restore_config
from services.notifications.processor import LostInputError, Processor
from services.notifications.seen import SeenIds

log = logging.getLogger("onceflow.notifications")
# The committer thread (processor.py) takes the GIL back after each broker call it waited on,
# while the loop routes the next batch: at the default 5 ms a turn, its flush, send-offsets and
# commit took twice as long on a busy machine (docs/benchmarks.md, issue 22).
GIL_SWITCH_S = 0.0005
app = typer.Typer(add_completion=False)


@app.command()
def main(instance: int = typer.Argument(..., min=1, help="instance number (1, 2, ...)")) -> None:
    """Run one notifications instance."""
    settings, notify = get_settings(), get_notification_settings()
    logs.configure(notify.notify_log_level)
    stop = threading.Event()

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        log.info("received %s: finishing the batch, leaving the group", name)
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>`: every thread's stack to the log
    sys.setswitchinterval(GIL_SWITCH_S)
    start_http_server(notify.metrics_port(instance), addr=get_observability_settings().metrics_host)
    seen = SeenIds(notify.notify_state_dir / f"{notify.notify_group}-{instance}.sqlite")
    try:
        consumer, producer = make_clients(settings, notify, instance)
        Processor(
            notify=notify,
            input_topic=settings.topic,
            window=get_retention_settings().dedup_window,
            consumer=consumer,
            producer=producer,
            reader=lambda: Consumer(restore_config(settings, notify)),
            admin=AdminClient(client_config(settings.kafka_bootstrap, "notifications")),
            seen=seen,
        ).run(stop)
    except (KafkaException, LostInputError) as exc:
        log.error("stopping: %s", exc)
        sys.exit(1)
    finally:
        seen.close()
    log.info("stopped")


if __name__ == "__main__":
    app()
