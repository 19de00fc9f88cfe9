"""The local stack's database passwords: one file per role in .stack/secrets/postgres/ (mode
0600, folder 0700), generated once. A later `make up` keeps each file; provisioning sets every
role's password from them (stack/postgres.py), and every process of this checkout reads its own
role's file when the environment does not give it the password (onceflow/settings/connections.py).

The analyst's is `analyst`: the contract's documented local default (`psql
postgresql://analyst:analyst@...` in the README). Every other one is random.
"""

import secrets

from onceflow.settings import Settings
from onceflow.settings.connections import ROLES
from stack.private_data import write_private

# The contract's (section 2) local default, for humans' psql commands.
ANALYST_DEFAULT = "analyst"


def new_password(role: str) -> str:
    """A fresh password for a role of the local stack."""
    return ANALYST_DEFAULT if role == "analyst" else secrets.token_urlsafe(24)


def ensure(settings: Settings) -> list[str]:
    """Write a password file for every role that has none and whose password the environment
    does not set; the roles written."""
    written = []
    for role in ROLES:
        file = settings.db_password_dir / role
        given = getattr(settings, f"{role}_db_password")
        if given is not None or (file.exists() and file.read_text().strip()):
            continue
        write_private(file, new_password(role) + "\n")
        written.append(role)
    return written


def rotate(settings: Settings, role: str) -> None:
    """Replace a role's password file by a new random password (provisioning then sets it)."""
    if role not in ROLES:
        raise ValueError(f"unknown database role {role!r}: one of {', '.join(ROLES)}")
    if getattr(settings, f"{role}_db_password") is not None:
        raise ValueError(
            f"ONCEFLOW_{role.upper()}_DB_PASSWORD sets this password: change it where it is set"
        )
    write_private(settings.db_password_dir / role, secrets.token_urlsafe(24) + "\n")
