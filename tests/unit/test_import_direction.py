"""Imports go one way (docs/architecture.md): `onceflow/` knows no stage, the stack runs the
product through `onceflow/` and imports no service, no service imports another's entrypoints
(its HTTP or command-line surface), and nothing of the product imports the tests or the
benchmarks (they use the product, never the reverse)."""

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
        if any(module == r or module.startswith(r + ".") for r in refused)
    ]


@pytest.mark.parametrize("package", ["onceflow", "stack"])
def test_the_shared_layer_and_the_stack_import_no_service(package: str) -> None:
    assert _modules(package)
    assert _refused(package, ("services", "spark_jobs")) == []


@pytest.mark.parametrize("package", ["onceflow", "stack", "services", "spark_jobs", "migrations"])
def test_the_product_imports_no_test_or_benchmark(package: str) -> None:
    assert _refused(package, ("tests", "bench")) == []


def _surfaces(service: str) -> tuple[str, ...]:
    """A service's HTTP or command-line surface: its entrypoints package, its __main__, its
    app and routers, its command line (cli.py, *_cli.py)."""
    folder = paths.ROOT / "services" / service
    names = ["entrypoints", "__main__", "app", "routers", "cli"]
    names += [p.stem for p in folder.glob("*_cli.py")]
    return tuple(f"services.{service}.{name}" for name in names)


def test_no_service_imports_anothers_entrypoints() -> None:
    services = sorted(
        p.name for p in (paths.ROOT / "services").iterdir() if (p / "__init__.py").exists()
    )
    assert "orders" in services
    assert "services.ops.clients_cli" in _surfaces("ops")
    found = []
    for service in services:
        others = tuple(s for o in services if o != service for s in _surfaces(o))
        found += _refused(f"services/{service}", others)
    assert found == []
