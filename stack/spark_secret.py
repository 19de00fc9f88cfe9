"""The local stack's Spark auth secret (onceflow/settings/spark_auth.py): generated once into
.stack/secrets/spark/auth-secret, and the properties file the cluster's master and workers start
with (`--properties-file`) made from it. Both are mode 0600 in the 0700 secrets folder; a later
`make up` keeps the secret. Generated in every topology, as the ops password is: a switch to the
cluster needs nothing more, and the single topology's programs are checked not to hold it."""

import secrets

from onceflow import paths
from onceflow.settings.secrets import given_or_file
from onceflow.settings.spark_auth import SparkAuthSettings
from stack.private_data import write_private

# Read by the master and each worker at start (stack/spark.py).
DAEMON_PROPERTIES = paths.SPARK_AUTH_SECRET.parent / "daemon.properties"


def daemon_properties(auth: SparkAuthSettings) -> str:
    """The daemons' properties file: authentication on, and the secret."""
    return "".join(f"{key}={_escaped(value)}\n" for key, value in auth.spark_conf().items())


def _escaped(value: str) -> str:
    # java.util.Properties reads a backslash as an escape.
    return value.replace("\\", "\\\\")


def ensure(auth: SparkAuthSettings) -> bool:
    """Generate the secret unless its file holds one (or the environment sets it), and (re)write
    the daemons' properties file from it; True when the secret was generated."""
    generated = False
    if auth.spark_auth_secret is None and not given_or_file(None, auth.spark_auth_secret_file):
        generated = write_private(auth.spark_auth_secret_file, secrets.token_urlsafe(32) + "\n")
    write_private(DAEMON_PROPERTIES, daemon_properties(auth))
    return generated
