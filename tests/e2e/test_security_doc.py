"""docs/security.md's commands for the ops credential work as written on the running stack:
each line of the "use it" block, and the rotation's re-render step (idempotent while the
password is kept; removing the password and restarting Connect are not run here)."""

import pytest

from onceflow import paths
from tests.e2e.doc_commands import assert_works, commands, run, section, without_comment

SECURITY = (paths.ROOT / "docs" / "security.md").read_text()
OPS = section(SECURITY, "The ops credential", 2).text
USE, ROTATE = OPS.split("**Rotate.**", 1)
CREDENTIAL = '-u "ops:$(cat .stack/secrets/ops-password)"'
# command -> what its stdout must match (MULTILINE)
CHECKS = {
    f"curl -s {CREDENTIAL} http://127.0.0.1:8083/connectors": r'\["orders-outbox"\]',
    f"curl -s {CREDENTIAL} http://127.0.0.1:3000/api/overview": r'"tiles":\s*\[',
    ".venv/bin/onceflow-ops status": r"^connector orders-outbox: RUNNING$",
}
RERENDER = "ops_secret.ensure(get_ops_settings())"


def test_every_use_has_a_check() -> None:
    assert {without_comment(c) for c in commands(USE)} == set(CHECKS)


@pytest.mark.parametrize("command", list(CHECKS))
def test_a_use_works_as_written(command: str) -> None:
    assert_works(run(command, timeout=60), CHECKS[command])


def test_the_rotations_rerender_step_runs() -> None:
    (step,) = [c for c in commands(ROTATE) if RERENDER in c]
    before = paths.OPS_PASSWORD.read_text()
    result = run(step, timeout=60)
    assert result.returncode == 0, str(result)
    assert paths.OPS_PASSWORD.read_text() == before  # kept: nothing to rotate
