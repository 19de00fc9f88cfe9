"""Imports go one way (docs/architecture.md): `onceflow/` knows no stage, the stack runs the
product through `onceflow/` and imports no service, and no service imports another's
entrypoints (its HTTP or command-line surface)."""

import ast
from pathlib import Path

import pytest

from onceflow import paths


def _imported(path: Path) -> set[str]:
    """Every module (or name of a module) `path` imports; relative imports stay inside its
    package."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from services.orders import entrypoints` imports services.orders.entrypoints
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _modules(package: str) -> list[Path]:
    return sorted((paths.ROOT / package).rglob("*.py"))


def _refused(package: str, refused: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(paths.ROOT)} imports {module}"
        for path in _modules(package)
        if "node_modules" not in path.parts
        for module in sorted(_imported(path))
        if module.startswith(refused)
    ]


@pytest.mark.parametrize("package", ["onceflow", "stack"])
def test_the_shared_layer_and_the_stack_import_no_service(package: str) -> None:
    assert _modules(package)
    assert _refused(package, ("services", "spark_jobs")) == []


def test_no_service_imports_anothers_entrypoints() -> None:
    services = sorted(
        p.name for p in (paths.ROOT / "services").iterdir() if (p / "__init__.py").exists()
    )
    assert "orders" in services
    found = []
    for service in services:
        others = tuple(f"services.{o}.entrypoints" for o in services if o != service)
        found += _refused(f"services/{service}", others)
    assert found == []
