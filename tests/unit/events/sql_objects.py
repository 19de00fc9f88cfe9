"""The JSON objects a .sql file builds: each `jsonb_build_object(...)` call's keys and values."""

import re

CALL = "jsonb_build_object("
KEY = re.compile(r"'(\w+)'")


def arguments(sql: str, start: int) -> list[str]:
    """The top-level arguments of the call whose `(` ends just before `start`."""
    args, depth, quoted, current = [], 0, False, start
    for i in range(start, len(sql)):
        char = sql[i]
        if char == "'":
            quoted = not quoted  # '' inside a literal toggles twice
        elif quoted:
            continue
        elif char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif char in ",)" and not depth:
            args.append(" ".join(sql[current:i].split()))
            if char == ")":
                return args
            current = i + 1
    raise ValueError(f"{CALL} at {start} is not closed")


def built_objects(sql: str) -> list[dict[str, str]]:
    """Each jsonb_build_object call in `sql`: its keys (string literals) and their values."""
    code = "\n".join(line.partition("--")[0] for line in sql.splitlines())
    objects = []
    for match in re.finditer(re.escape(CALL), code):
        args = arguments(code, match.end())
        keys = [KEY.fullmatch(arg) for arg in args[::2]]
        if not all(keys) or len(args) % 2:
            raise ValueError(f"{CALL} with a key that is not a literal: {args}")
        objects.append({k[1]: v for k, v in zip(keys, args[1::2], strict=True) if k})
    return objects
