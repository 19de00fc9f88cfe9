"""The ops credential's files and where each topology's Connect workers and Prometheus get their
authentication and CORS settings (issue 24)."""

import stat
from pathlib import Path

import pytest

from onceflow import paths
from onceflow.settings import ObservabilitySettings, Settings
from onceflow.settings.ops import OpsCredentialMissingError, OpsSettings
from onceflow.topology import Topology, layout
from stack import jvm, node_configs, ops_secret, prometheus

EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"


@pytest.fixture
def secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "secrets"
    monkeypatch.setattr(ops_secret, "CONNECT_CREDENTIALS", folder / "rest" / "credentials")
    monkeypatch.setattr(ops_secret, "CONNECT_JAAS", folder / "rest" / "jaas.conf")
    return folder


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_password_is_generated_once_and_connects_files_follow_it(secrets: Path) -> None:
    ops = OpsSettings(ops_password_file=secrets / "ops-password")
    assert ops_secret.ensure(ops)
    password = ops.password()
    assert len(password) >= 32
    written = [ops.ops_password_file, ops_secret.CONNECT_CREDENTIALS, ops_secret.CONNECT_JAAS]
    assert [_mode(p) for p in written] == [0o600] * 3
    assert _mode(secrets) == 0o700
    assert ops_secret.CONNECT_CREDENTIALS.read_text() == f"ops={password}\n"
    jaas = ops_secret.CONNECT_JAAS.read_text()
    assert jaas.startswith("KafkaConnect {")
    assert f'file="{ops_secret.CONNECT_CREDENTIALS}";' in jaas

    assert not ops_secret.ensure(ops)  # a second `make up` keeps it
    assert ops.password() == password


def test_the_environments_password_wins_and_none_is_an_error(secrets: Path) -> None:
    given = OpsSettings(ops_password="from-the-environment", ops_password_file=secrets / "none")
    assert not ops_secret.ensure(given)
    assert not given.ops_password_file.exists()
    assert ops_secret.CONNECT_CREDENTIALS.read_text() == "ops=from-the-environment\n"
    with pytest.raises(OpsCredentialMissingError, match="ONCEFLOW_OPS_PASSWORD"):
        OpsSettings(ops_password_file=secrets / "none").password()


@pytest.mark.parametrize("topology", list(Topology))
def test_every_connect_worker_asks_for_the_credential(topology: Topology) -> None:
    nodes = layout(topology)
    text = (paths.ROOT / node_configs.WORKER_TEMPLATE).read_text()
    for worker in nodes.connect:
        overrides = node_configs.connect_overrides(nodes, worker)
        rendered = node_configs.properties(
            node_configs.render(text, overrides, source=node_configs.WORKER_TEMPLATE)
        )
        assert rendered["rest.extension.classes"] == EXTENSION
        allowed = rendered["config.providers.env.param.allowlist.pattern"]
        assert "OWNER" not in allowed
        assert "CDC_DB_PASSWORD" in allowed
        command = jvm.connect_command(worker.program, "1g", None)
        assert f"-Djava.security.auth.login.config={ops_secret.CONNECT_JAAS}" in command


def test_prometheus_answers_no_other_origin() -> None:
    command = prometheus.server_command(ObservabilitySettings(), Settings().data)
    assert "'--web.cors.origin=http://127\\.0\\.0\\.1:9090'" in command
