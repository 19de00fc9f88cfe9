"""Kafka's principals (contract section 2b) and each one's client settings.

Every Kafka client authenticates with SASL/SCRAM-SHA-512 as one principal: the nodes as
`broker` (each other, and the controllers), Kafka Connect as `connect`, the aggregation job as
`aggregation`, the notifications processor as `notifications`, the ops tooling as `ops`, the
test suites as `tests`. A principal's password is `ONCEFLOW_KAFKA_<PRINCIPAL>_PASSWORD` when
set (compose, production), else the local stack's file `.stack/secrets/kafka/<principal>`
(mode 0600, generated once: stack/kafka_security.py). There is no default password.

`kafka_sasl` is on by default: every listener of every topology asks for SASL, and
client_config() adds each principal's credentials. `ONCEFLOW_KAFKA_SASL=false` runs the whole
stack with PLAINTEXT listeners and no ACLs instead (client_config() then gives the bare
bootstrap address): only for comparing the two (docs/benchmarks.md), never elsewhere.
"""

from functools import lru_cache
from pathlib import Path

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from onceflow import paths
from onceflow.settings.secrets import given_or_file

PRINCIPALS = ("broker", "connect", "aggregation", "notifications", "ops", "tests")
MECHANISM = "SCRAM-SHA-512"
# The controllers' listener: SCRAM credentials live in the metadata log the controllers
# serve, so the nodes authenticate to the controllers with PLAIN (loopback, no TLS locally).
CONTROLLER_MECHANISM = "PLAIN"
LOCAL_KAFKA_PASSWORDS = paths.SECRETS / "kafka"
# The aggregation job's consumer groups (Spark's groupIdPrefix): the ACLs allow the job these.
AGGREGATION_GROUP_PREFIX = "onceflow-aggregation"
# What confluent-kafka's clients take.
ClientConfig = dict[str, str | int | float | bool]


class KafkaPasswordMissingError(RuntimeError):
    """A principal's password is neither in the environment nor in the local stack's file."""


class KafkaAuthSettings(BaseSettings):
    """Whether Kafka's listeners ask for SASL, and where each principal's password comes from."""

    model_config = SettingsConfigDict(env_prefix="ONCEFLOW_", env_file=".env", extra="ignore")

    kafka_sasl: bool = True
    kafka_password_dir: Path = LOCAL_KAFKA_PASSWORDS
    # Every client of this process connects as this principal instead of its own (the test
    # suites set `tests`: the code under test then reads and writes their scratch topics).
    kafka_principal: str | None = None
    # Each principal's password where the environment gives it (compose, production); the
    # local stack's are in their files instead.
    kafka_broker_password: SecretStr | None = None
    kafka_connect_password: SecretStr | None = None
    kafka_aggregation_password: SecretStr | None = None
    kafka_notifications_password: SecretStr | None = None
    kafka_ops_password: SecretStr | None = None
    kafka_tests_password: SecretStr | None = None

    def given(self, principal: str) -> str | None:
        """The principal's password as the environment gives it, if it does."""
        if principal not in PRINCIPALS:
            raise ValueError(
                f"unknown Kafka principal {principal!r}: one of {', '.join(PRINCIPALS)}"
            )
        secret: SecretStr | None = getattr(self, f"kafka_{principal}_password")
        return secret.get_secret_value() if secret else None

    def password(self, principal: str) -> str:
        """The principal's password: its variable's, else its file's first line."""
        given = self.given(principal)
        variable = f"ONCEFLOW_KAFKA_{principal.upper()}_PASSWORD"
        file = self.kafka_password_dir / principal
        text = given_or_file(given, file)
        if not text:
            raise KafkaPasswordMissingError(
                f"no password for Kafka principal {principal}: set {variable}"
                f" (or, on the local stack, run `make up`, which generates {file})"
            )
        return text

    def client_config(self, bootstrap: str, principal: str) -> ClientConfig:
        """librdkafka's (confluent-kafka's) settings that connect as `principal`."""
        config: ClientConfig = {"bootstrap.servers": bootstrap}
        principal = self.kafka_principal or principal
        if self.kafka_sasl:
            config |= {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": MECHANISM,
                "sasl.username": principal,
                "sasl.password": self.password(principal),
            }
        return config

    def java_client_config(self, principal: str) -> dict[str, str]:
        """A Java client's settings (Connect, Spark's Kafka source, the CLI tools) that connect
        as `principal`, without the bootstrap address; empty with SASL off."""
        if not self.kafka_sasl:
            return {}
        principal = self.kafka_principal or principal
        return {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": MECHANISM,
            "sasl.jaas.config": scram_jaas(principal, self.password(principal)),
        }


def scram_jaas(user: str, password: str) -> str:
    """A Java client's sasl.jaas.config logging in as `user` with SCRAM."""
    return (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{_quoted(user)}" password="{_quoted(password)}";'
    )


def _quoted(text: str) -> str:
    if '"' in text or "\\" in text:
        raise ValueError("a Kafka user name or password may not hold a quote or a backslash")
    return text


@lru_cache
def get_kafka_auth_settings() -> KafkaAuthSettings:
    """Return the process-wide Kafka authentication settings, read once."""
    return KafkaAuthSettings()


def client_config(bootstrap: str, principal: str) -> ClientConfig:
    """This process's librdkafka settings that connect to `bootstrap` as `principal`."""
    return get_kafka_auth_settings().client_config(bootstrap, principal)
