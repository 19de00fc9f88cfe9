"""The local stack's ops credential (onceflow/settings/ops.py): its password, generated once into
.stack/secrets/ops-password, and Kafka Connect's REST login files made from it (the JAAS config
of BasicAuthSecurityRestExtension and its PropertyFileLoginModule's credentials file). Every
file is mode 0600 in the 0700 secrets folder; a later `make up` keeps the password."""

import secrets
from pathlib import Path

from onceflow import paths
from onceflow.settings.ops import OpsSettings
from stack.private_data import write_private

# Kafka Connect reads these at start (-Djava.security.auth.login.config, stack/jvm.py).
CONNECT_REST = paths.SECRETS / "connect-rest"
CONNECT_JAAS = CONNECT_REST / "jaas.conf"
CONNECT_CREDENTIALS = CONNECT_REST / "credentials.properties"
# BasicAuthSecurityRestExtension's JAAS login context name (fixed by Kafka).
JAAS_CONTEXT = "KafkaConnect"
LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"


def jaas_config(credentials: Path) -> str:
    """The JAAS config that makes Connect check HTTP Basic logins against `credentials`."""
    return f'{JAAS_CONTEXT} {{\n  {LOGIN_MODULE} required\n  file="{credentials}";\n}};\n'


def ensure(ops: OpsSettings) -> bool:
    """Generate the ops password unless the file holds one (or the environment sets it), and
    (re)write Connect's login files from it; True when the password was generated."""
    generated = False
    if ops.ops_password is None and not _has_text(ops.ops_password_file):
        generated = write_private(ops.ops_password_file, secrets.token_urlsafe(24) + "\n")
    write_private(CONNECT_CREDENTIALS, f"{ops.ops_user}={ops.password()}\n")
    write_private(CONNECT_JAAS, jaas_config(CONNECT_CREDENTIALS))
    return generated


def _has_text(path: Path) -> bool:
    return path.exists() and bool(path.read_text().strip())
