"""Onceflow's configuration: one package, imported by services, spark_jobs, stack and migrations.

Every field is read from `ONCEFLOW_<FIELD>` (e.g. `ONCEFLOW_PG_PORT`) or from `.env`; the
local defaults match the embedded stack (.env.example lists them). Each `get_*` reads once
per process; code receives the object it needs as an argument.
"""

from onceflow.settings.aggregation import AggregationSettings, get_aggregation_settings
from onceflow.settings.api import ApiSettings, get_api_settings
from onceflow.settings.connections import Settings, get_settings
from onceflow.settings.notifications import NotificationSettings, get_notification_settings
from onceflow.settings.observability import (
    ObservabilitySettings,
    get_observability_settings,
)
from onceflow.settings.retention import RetentionSettings, get_retention_settings
from onceflow.settings.topology import TopologySettings

__all__ = [
    "AggregationSettings",
    "ApiSettings",
    "NotificationSettings",
    "ObservabilitySettings",
    "RetentionSettings",
    "Settings",
    "TopologySettings",
    "get_aggregation_settings",
    "get_api_settings",
    "get_notification_settings",
    "get_observability_settings",
    "get_retention_settings",
    "get_settings",
]
