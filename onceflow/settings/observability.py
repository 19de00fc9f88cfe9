"""Where the pipeline is observed from (contract section 6): Prometheus, the exporters, the
dashboard. Every port binds to 127.0.0.1; docs/observability.md lists what each one serves."""

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ObservabilitySettings(BaseSettings):
    """Ports of Prometheus, the exporters and the dashboard, and Prometheus's retention."""

    model_config = SettingsConfigDict(env_prefix="ONCEFLOW_", env_file=".env", extra="ignore")

    # Where the Python services serve /metrics: loopback locally; a container sets 0.0.0.0 so
    # Prometheus can reach it from another container (docker-compose.yml).
    metrics_host: str = "127.0.0.1"
    prometheus_port: int = 9090
    # Prometheus drops samples older than this, or the oldest blocks past the size.
    prometheus_retention_time: str = "7d"
    prometheus_retention_size: str = "1GB"
    # The JMX exporter agent in each JVM (false: no agent; bench/observe_bench.py measures the
    # cost of observing with it).
    jmx_exporter_enabled: bool = True
    kafka_jmx_port: int = 9404
    connect_jmx_port: int = 9405
    pg_exporter_port: int = 9187
    # The aggregation job's StreamingQueryListener and sink results.
    agg_metrics_port: int = 9108
    # The local stack's supervisor event listener: starts and restarts of every program.
    supervisor_exporter_port: int = 9103
    dashboard_port: int = 3000
    # How long a dashboard or `onceflow-ops alerts` waits for Prometheus before saying so.
    prometheus_timeout_s: float = Field(default=3.0, gt=0)

    @property
    def prometheus_url(self) -> str:
        """Prometheus's HTTP API root."""
        return f"http://127.0.0.1:{self.prometheus_port}"


@lru_cache
def get_observability_settings() -> ObservabilitySettings:
    """Return the process-wide observability settings, read once."""
    return ObservabilitySettings()
