"""Where a process finds one of its secrets: the variable's value when set (compose, production),
else the first line of its file under .stack/secrets/ (generated once by `make up`)."""

from pathlib import Path

from pydantic import SecretStr


def given_or_file(given: str | None, file: Path) -> str:
    """`given` when non-empty, else `file`'s stripped text; "" when neither holds one."""
    if given:
        return given
    try:
        return file.read_text().strip()
    except FileNotFoundError:
        return ""


def required(
    given: SecretStr | None, file: Path, *, what: str, variable: str, missing: type[Exception]
) -> str:
    """given_or_file, or `missing` saying how to set `what` when neither holds it."""
    text = given_or_file(given.get_secret_value() if given else None, file)
    if not text:
        raise missing(
            f"no {what}: set {variable} or write it to {file} "
            "(`make up` generates it for the local stack)"
        )
    return text
