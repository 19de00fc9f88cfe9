"""Where Onceflow keeps its files: the repository root (computed here, once) and .stack/ state."""

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STATE = ROOT / ".stack"
LOGS = STATE / "logs"
RUN = STATE / "run"
LIB = STATE / "lib"
CONF = STATE / "conf"
SECRETS = STATE / "secrets"  # mode 0700
API_KEY = SECRETS / "api-key"  # the local-dev client's key, mode 0600
OPS_PASSWORD = SECRETS / "ops-password"  # the ops credential's password, mode 0600
# The Spark standalone cluster's shared secret (spark.authenticate), mode 0600.
SPARK_AUTH_SECRET = SECRETS / "spark" / "auth-secret"
VENV_BIN = ROOT / ".venv" / "bin"

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PG_SOCKET_DIR = RUN / "postgres"
OBSERVABILITY = ROOT / "observability"
SUPERVISOR_CONF = CONF / "supervisord.conf"
SUPERVISOR_SOCKET = RUN / "supervisor.sock"
MIGRATIONS_INI = ROOT / "migrations" / "alembic.ini"


@dataclass(frozen=True)
class DataDirs:
    """One topology's data folder (.stack/<folder>, kept between runs) and each component's
    place in it."""

    root: Path

    @property
    def postgres(self) -> Path:
        return self.root / "postgres"

    def kafka(self, program: str) -> Path:
        """A Kafka node's log dir, named for its program (kafka, kafka-1, ...)."""
        return self.root / program

    @property
    def spark_checkpoints(self) -> Path:
        return self.root / "spark" / "checkpoints"

    def spark_work(self, program: str) -> Path:
        """A Spark standalone worker's work dir (its executors' files and logs)."""
        return self.root / "spark" / "work" / program

    @property
    def prometheus(self) -> Path:
        return self.root / "prometheus"

    @property
    def notifications(self) -> Path:
        return self.root / "notifications"


def data_dirs(folder: str) -> DataDirs:
    """The data folders of a topology whose data lives in .stack/<folder>."""
    return DataDirs(STATE / folder)


def ensure_dirs(data: DataDirs) -> None:
    """Create the state folders (idempotent)."""
    for path in (data.root, LOGS, RUN, CONF, data.spark_checkpoints):
        path.mkdir(parents=True, exist_ok=True)
