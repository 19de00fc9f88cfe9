"""`ONCEFLOW_TOPOLOGY`: which node layout runs (onceflow/topology.py). Every settings class
whose defaults differ by topology inherits it, and fills the fields the environment left unset
from the layout, so a process started with `ONCEFLOW_TOPOLOGY=cluster` reaches the cluster."""

from typing import Any

from pydantic_settings import BaseSettings, SettingsConfigDict

from onceflow import paths
from onceflow.topology import SINGLE, Layout, Topology, layout

# The fields' static defaults: the single topology's (the validators replace them by the
# running topology's when the environment sets none).
SINGLE_DATA = paths.data_dirs(SINGLE.data_folder)


class TopologySettings(BaseSettings):
    """The topology, and the layout and data folders that follow from it."""

    model_config = SettingsConfigDict(env_prefix="ONCEFLOW_", env_file=".env", extra="ignore")

    topology: Topology = Topology.SINGLE

    @property
    def layout(self) -> Layout:
        return layout(self.topology)

    @property
    def data(self) -> paths.DataDirs:
        return paths.data_dirs(self.layout.data_folder)

    def default(self, **values: Any) -> None:
        """Give the fields that were not set explicitly these topology-derived values."""
        for name, value in values.items():
            if name not in self.model_fields_set:
                # Past validation, without marking the field as set.
                self.__dict__[name] = value
