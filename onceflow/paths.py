"""Where Onceflow keeps its files: the repository root (computed here, once) and .stack/ state."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATE = ROOT / ".stack"
DATA = STATE / "data"
LOGS = STATE / "logs"
RUN = STATE / "run"
LIB = STATE / "lib"
CONF = STATE / "conf"
SECRETS = STATE / "secrets"  # mode 0700
API_KEY = SECRETS / "api-key"  # the local-dev client's key, mode 0600
VENV_BIN = ROOT / ".venv" / "bin"

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PG_DATA = DATA / "postgres"
PG_SOCKET_DIR = RUN / "postgres"
KAFKA_DATA = DATA / "kafka"
SPARK_CHECKPOINTS = DATA / "spark" / "checkpoints"
PROMETHEUS_DATA = DATA / "prometheus"
OBSERVABILITY = ROOT / "observability"
SUPERVISOR_CONF = CONF / "supervisord.conf"
SUPERVISOR_SOCKET = RUN / "supervisor.sock"
MIGRATIONS_INI = ROOT / "migrations" / "alembic.ini"


def ensure_dirs() -> None:
    """Create the state folders (idempotent)."""
    for path in (DATA, LOGS, RUN, CONF, SPARK_CHECKPOINTS):
        path.mkdir(parents=True, exist_ok=True)
