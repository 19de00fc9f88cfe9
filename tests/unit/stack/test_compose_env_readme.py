"""The README's Docker section gives compose every secret it refuses to start without: its
commands that write `.env`, run as written in an empty folder, set each variable that
docker-compose.yml requires (`${VAR:?...}`), each to a different value."""

import re
import subprocess
from pathlib import Path

from onceflow import paths
from tests.e2e.doc_commands import inline_spans, section

README = (paths.ROOT / "README.md").read_text()
REQUIRED = re.compile(r"\$\{([A-Z0-9_]+):\?")


def test_the_readmes_env_commands_set_every_variable_compose_requires(tmp_path: Path) -> None:
    writes = [span for span in inline_spans(section(README, "Docker", 2).text) if ">> .env" in span]
    assert writes
    for command in writes:
        ran = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=30
        )
        assert ran.returncode == 0, (command, ran.stderr)
    lines = (tmp_path / ".env").read_text().splitlines()
    written = dict(line.split("=", 1) for line in lines)
    assert len(written) == len(lines)  # each variable once
    required = set(REQUIRED.findall((paths.ROOT / "docker-compose.yml").read_text()))
    assert required <= set(written), sorted(required - set(written))
    assert all(len(value) >= 32 for value in written.values()), written
    assert len(set(written.values())) == len(written)
