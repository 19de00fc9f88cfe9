"""docker-compose.yml gives each service only its own database passwords and Kafka principal's
password (contract section 2b), the same as the local stack's program of that name
(stack/components.py), and none has a default: compose refuses to start until each is set."""

import re
from typing import Any

import pytest
import yaml

from onceflow.paths import ROOT
from onceflow.settings import Settings
from onceflow.settings.connections import ROLES
from onceflow.settings.kafka_auth import PRINCIPALS
from onceflow.topology import Topology
from stack.components import components

PASSWORD = re.compile(r"ONCEFLOW_(?P<role>[A-Z_]+)_DB_PASSWORD")
# The exporter's own variable for its password (the monitor role's).
EXPORTER_PASSWORD = "DATA_SOURCE_PASS"
# Provisioning creates every role and sets its password.
PROVISION = "provision"
KAFKA_PASSWORD = re.compile(r"ONCEFLOW_KAFKA_(?P<principal>[A-Z]+)_PASSWORD")
# Creates every Kafka principal (and the ACLs, as the broker) before the topics.
KAFKA_SETUP = "topics"


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return dict(document["services"])


def passwords(service: dict[str, Any]) -> dict[str, str]:
    """The database passwords a service's environment sets, by role."""
    found = {}
    for key, value in (service.get("environment") or {}).items():
        if (match := PASSWORD.fullmatch(key)) is not None:
            found[match["role"].lower()] = str(value)
        elif key == EXPORTER_PASSWORD:
            found["monitor"] = str(value)
    return found


def test_each_service_gets_only_its_own_roles_passwords(services: dict[str, Any]) -> None:
    local = {c.name: set(c.db_roles) for c in components(Settings(topology=Topology.CLUSTER))}
    held = {name: set(passwords(service)) for name, service in services.items()}
    expected = {name: local.get(name, set()) for name in services} | {PROVISION: set(ROLES)}
    assert held == expected
    assert held["aggregation"] == {"spark", "spark_stage"}


def test_no_password_has_a_default(services: dict[str, Any]) -> None:
    for name, service in services.items():
        for role, value in passwords(service).items():
            variable = f"ONCEFLOW_{role.upper()}_DB_PASSWORD"
            assert value.startswith(f"${{{variable}:?"), (name, role, value)


def kafka_passwords(service: dict[str, Any]) -> set[str]:
    """The Kafka principals whose password a service's environment holds (as a variable, or
    within a value: a JAAS login)."""
    text = " ".join(f"{k}={v}" for k, v in (service.get("environment") or {}).items())
    return {match["principal"].lower() for match in KAFKA_PASSWORD.finditer(text)}


def test_each_service_gets_only_its_own_kafka_principals_password(
    services: dict[str, Any],
) -> None:
    local = {
        c.name: {c.kafka_principal} if c.kafka_principal else set()
        for c in components(Settings(topology=Topology.CLUSTER))
    }
    # Compose's dashboard is Grafana, which reads Prometheus only.
    local.pop("dashboard")
    held = {name: kafka_passwords(service) for name, service in services.items()}
    expected = {name: local.get(name, set()) for name in services} | {KAFKA_SETUP: set(PRINCIPALS)}
    assert held == expected
    assert held["kafka-1"] == {"broker"}
    assert held["connect-1"] == {"connect"}


def test_no_kafka_password_has_a_default() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    references = re.findall(r"\$\{(ONCEFLOW_KAFKA_[A-Z]+_PASSWORD)([^}]*)\}", text)
    assert {name for name, _ in references} == {
        f"ONCEFLOW_KAFKA_{p.upper()}_PASSWORD" for p in PRINCIPALS
    }
    for name, rest in references:
        assert rest.startswith(":?"), (name, rest)


SPARK_SECRET = re.compile(r"\$\{ONCEFLOW_SPARK_AUTH_SECRET(?P<rest>[^}]*)\}")
# Spark's own variable for the shared secret, which its daemons (and executors) read.
SPARK_SECRET_VARIABLE = "_SPARK_AUTH_SECRET"


def test_only_the_spark_services_and_the_job_get_the_spark_secret(
    services: dict[str, Any],
) -> None:
    local = {c.name for c in components(Settings(topology=Topology.CLUSTER)) if c.spark_secret}
    held = {
        name
        for name, service in services.items()
        if any(SPARK_SECRET.search(str(v)) for v in (service.get("environment") or {}).values())
    }
    assert held == local
    assert held == {"spark-master", "spark-worker-1", "spark-worker-2", "aggregation"}
    for match in SPARK_SECRET.finditer((ROOT / "docker-compose.yml").read_text()):
        assert match["rest"].startswith(":?"), match[0]


def test_the_spark_daemons_ask_for_the_secret(services: dict[str, Any]) -> None:
    """spark.authenticate on the master and each worker (a -D option: no secret), the secret in
    Spark's variable (a -D option would put it on the JVM's command line); the job by its
    setting (spark_jobs/aggregation/session.py)."""
    opts = {"spark-master": "SPARK_MASTER_OPTS"} | {
        name: "SPARK_WORKER_OPTS" for name in services if name.startswith("spark-worker-")
    }
    assert len(opts) == 3
    for name, variable in opts.items():
        env = services[name]["environment"]
        assert "-Dspark.authenticate=true" in env[variable].split(), name
        assert "secret" not in env[variable], name
        assert SPARK_SECRET.fullmatch(env[SPARK_SECRET_VARIABLE]), name
    assert SPARK_SECRET.fullmatch(
        services["aggregation"]["environment"]["ONCEFLOW_SPARK_AUTH_SECRET"]
    )
