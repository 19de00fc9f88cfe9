"""`python -m services.orders`: serve the API with uvicorn on api_host:api_port.

Each worker speaks HTTP through entrypoints/edge.py (uvicorn's httptools protocol with the
edge's limits). With several workers (default: one per core) Prometheus metrics are kept in a shared
multiprocess directory, so /metrics reports the sum over all workers.
"""

import os
import shutil
import tempfile

import uvicorn

from onceflow import logs
from onceflow.settings import get_api_settings, get_settings


def main() -> None:
    """Start uvicorn (workers are separate processes importing the app factory)."""
    settings, api = get_settings(), get_api_settings()
    logs.configure(api.api_log_level)
    if api.api_workers > 1 and "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
        folder = os.path.join(tempfile.gettempdir(), f"onceflow-api-metrics-{settings.api_port}")
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
    uvicorn.run(
        "services.orders.entrypoints.app:create_app",
        factory=True,
        host=settings.api_host,
        port=settings.api_port,
        workers=api.api_workers,
        access_log=False,
        log_config=None,
        proxy_headers=False,
        server_header=False,
        # The edge's limits (head size, read deadline, concurrency) are in this protocol.
        http="services.orders.entrypoints.edge:EdgeProtocol",
        timeout_keep_alive=api.api_keep_alive_s,
    )


if __name__ == "__main__":
    main()
