"""Every secret of the local stack, by name, for tests that look for them where they must not
be (test_secrets.py: processes and files; tests/e2e/test_open_surfaces.py: what answers)."""

from onceflow import paths
from onceflow.settings import get_settings
from onceflow.settings.connections import ROLES
from onceflow.settings.kafka_auth import PRINCIPALS, KafkaAuthSettings
from stack import db_secrets

# Each principal's own password (the suites' ONCEFLOW_KAFKA_PRINCIPAL does not apply to files).
KAFKA = KafkaAuthSettings(kafka_principal=None)
# The cluster's Spark programs and the job hold it (Component.spark_secret); a worker's executors
# get it in their environment from the worker, Spark's way of handing it to them.
SPARK_SECRET = "spark-auth"


def secrets() -> dict[str, str]:
    """Every secret of the local stack, by name: each database role's password (but the
    analyst's documented local default, `analyst`, which is no secret), each Kafka principal's,
    the ops password, the local API client's key and the Spark cluster's shared secret."""
    settings = get_settings()
    found = {f"db:{role}": settings.credentials(role)[1] for role in ROLES}
    found |= {f"kafka:{principal}": KAFKA.password(principal) for principal in PRINCIPALS}
    if found["db:analyst"] == db_secrets.ANALYST_DEFAULT:
        del found["db:analyst"]
    for name, file in (
        ("ops-password", paths.OPS_PASSWORD),
        ("api-key", paths.API_KEY),
        (SPARK_SECRET, paths.SPARK_AUTH_SECRET),
    ):
        if file.exists():
            found[name] = file.read_text().strip()
    return found
