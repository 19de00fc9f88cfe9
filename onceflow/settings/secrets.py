"""Where a process finds one of its secrets: the variable's value when set (compose, production),
else the first line of its file under .stack/secrets/ (generated once by `make up`)."""

from pathlib import Path


def given_or_file(given: str | None, file: Path) -> str:
    """`given` when non-empty, else `file`'s stripped text; "" when neither holds one."""
    if given:
        return given
    try:
        return file.read_text().strip()
    except FileNotFoundError:
        return ""
