"""The commands a Markdown document shows, as a reader pastes them, and running them.

A document's runnable commands are the lines of its ```sh blocks: a line ending in `\\` goes on
on the next one, blank lines and comment lines are skipped, and a trailing `  # comment` is the
shell's own. The prose names commands in inline code spans.
"""

import re
import subprocess
from dataclasses import dataclass

from onceflow import paths

_HEADING = re.compile(r"^(#+) (.+)$", re.MULTILINE)
_SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_FENCED = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`([^`]+)`")
_TRAILING_COMMENT = re.compile(r"\s+#\s.*$")
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")


@dataclass(frozen=True)
class Section:
    title: str
    text: str


def sections(markdown: str, level: int, within: str | None = None) -> list[Section]:
    """The sections of this heading level (their text up to the next heading of that level or
    above), only those under the heading `within` (one level up) when given."""
    if within is not None:
        markdown = section(markdown, within, level - 1).text
    found = []
    # A heading is not in a fenced block (where `# ...` is a shell comment): find them in a copy
    # with the blocks blanked, every offset kept.
    prose = _FENCED.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), markdown)
    headings = [m for m in _HEADING.finditer(prose) if len(m.group(1)) <= level]
    for this, following in zip(headings, [*headings[1:], None], strict=True):
        if len(this.group(1)) != level:
            continue
        end = following.start() if following else len(markdown)
        found.append(Section(this.group(2).strip(), markdown[this.end() : end]))
    return found


def section(markdown: str, title: str, level: int) -> Section:
    """The one section with this title and heading level."""
    matching = [s for s in sections(markdown, level) if s.title == title]
    if len(matching) != 1:
        raise LookupError(f"{len(matching)} sections titled {title!r} at level {level}")
    return matching[0]


def commands(text: str) -> list[str]:
    """Every command of the ```sh blocks, in order, each as one line (continuations joined)."""
    found = []
    for block in _SH_BLOCK.findall(text):
        pending = ""
        for line in block.splitlines():
            if line.endswith("\\"):
                pending += line[:-1].strip() + " "
                continue
            command = (pending + line.strip()).strip()
            pending = ""
            if command and not command.startswith("#"):
                found.append(command)
    return found


def without_comment(command: str) -> str:
    """The command without its trailing `  # comment`."""
    return _TRAILING_COMMENT.sub("", command)


def inline_spans(text: str) -> list[str]:
    """The inline code spans of the prose (outside fenced blocks), each on one line."""
    return [" ".join(span.split()) for span in _INLINE.findall(_FENCED.sub("", text))]


def names(span: str, command: str) -> bool:
    """True when the inline span names this command: its words, in order, are among the
    command's (a word in capitals, e.g. NAME, stands for any; a program matches its path)."""
    wanted, words = span.split(), iter(without_comment(command).split())
    return all(any(_same_word(want, word) for word in words) for want in wanted)


def _same_word(want: str, word: str) -> bool:
    return bool(_PLACEHOLDER.match(want)) or word == want or word.endswith("/" + want)


@dataclass(frozen=True)
class Ran:
    command: str
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"$ {self.command}\nexit {self.returncode}\n{self.stdout}\n{self.stderr}"


def run(command: str, *, timeout: float) -> Ran:
    """Run the command as pasted into bash at the repository root."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Ran(command, done.returncode, done.stdout, done.stderr)


def assert_works(result: Ran, expect: str) -> None:
    """The command exited 0 and printed what `expect` matches (a MULTILINE regex)."""
    assert result.returncode == 0, str(result)
    assert re.search(expect, result.stdout, re.MULTILINE), str(result)
