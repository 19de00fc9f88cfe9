"""`python -m services.dashboard`: serve the dashboard on 127.0.0.1:dashboard_port.

Nothing in the pipeline depends on it: stopping it, or it failing, changes no other component.
"""

import uvicorn

from onceflow import logs
from onceflow.settings import get_observability_settings

HOST = "127.0.0.1"  # loopback only, like every exporter and Prometheus itself


def main() -> None:
    """Start uvicorn with one worker (the page's load is a handful of requests every 5 s)."""
    logs.configure("INFO")
    uvicorn.run(
        "services.dashboard.app:create_app",
        factory=True,
        host=HOST,
        port=get_observability_settings().dashboard_port,
        access_log=False,
        log_config=None,
        proxy_headers=False,
        server_header=False,
    )


if __name__ == "__main__":
    main()
