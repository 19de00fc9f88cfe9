"""How the docs' runnable commands are read and judged (tests/e2e/doc_commands.py), and that
every runbook shows its commands (tests/e2e/test_runbooks.py runs them on the stack)."""

import pytest

from onceflow import paths
from tests.e2e import doc_commands
from tests.e2e.doc_commands import commands, inline_spans, names, sections, without_comment

DOC = """# Title

## Alerts

Intro `curl -s x`.

### First

Run `tool status` or `tool restart NAME`.

```sh
.venv/bin/tool status
# a comment line
.venv/bin/tool restart api   # the API
long \\
  --flag \\
  value
```

```json
{"not": "a command"}
```

### Second

Nothing.

## After

```sh
outside
```
"""


def test_sections_under_a_heading() -> None:
    found = sections(DOC, 3, within="Alerts")
    assert [s.title for s in found] == ["First", "Second"]
    assert "outside" not in found[1].text


def test_commands_are_the_sh_blocks_lines_with_continuations_joined() -> None:
    first = sections(DOC, 3, within="Alerts")[0]
    assert commands(first.text) == [
        ".venv/bin/tool status",
        ".venv/bin/tool restart api   # the API",
        "long --flag value",
    ]
    assert without_comment(commands(first.text)[1]) == ".venv/bin/tool restart api"


def test_inline_spans_leave_out_fenced_blocks() -> None:
    first = sections(DOC, 3, within="Alerts")[0]
    assert inline_spans(first.text) == ["tool status", "tool restart NAME"]


def test_a_span_names_a_command_by_its_words_in_order() -> None:
    assert names("tool restart NAME", ".venv/bin/tool restart api")
    assert names("tool status", ".venv/bin/tool status")
    assert not names("tool status", ".venv/bin/tool restart api")
    assert not names("restart tool", ".venv/bin/tool restart api")
    assert not names("other status", ".venv/bin/tool status")


def test_every_runbook_shows_its_commands() -> None:
    runbooks = sections(
        (paths.ROOT / "docs" / "operations.md").read_text(), 3, within="Alerts and runbooks"
    )
    assert len(runbooks) >= 30
    assert [r.title for r in runbooks if not commands(r.text)] == []


def test_a_command_works_when_it_exits_0_and_prints_what_is_expected() -> None:
    doc_commands.assert_works(doc_commands.run("printf 'one\\ntwo\\n'", timeout=10), r"^two$")
    with pytest.raises(AssertionError, match="exit 3"):
        doc_commands.assert_works(doc_commands.run("echo two; exit 3", timeout=10), r"^two$")
    with pytest.raises(AssertionError, match=r"\$ echo one"):
        doc_commands.assert_works(doc_commands.run("echo one", timeout=10), r"^two$")
