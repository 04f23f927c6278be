"""The harness's layers (docs/design.md): lab < generated < load < analysis < output < pipeline <
modes. A module imports from its own layer and those below, never from one above (every import
counts, those under TYPE_CHECKING and inside functions too), so each layer can be read without
the next. And a mode imports no other mode: what two modes share lives a layer down, or at
modes/ level (the registry, the run skeleton, the shared options), which is not a mode."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "loadtest"
LAYERS = ("lab", "generated", "load", "analysis", "output", "pipeline", "modes")


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}: the harness imports absolutely"
            modules.add(node.module)
            # A name may be a module: `from loadtest import modes`, `from loadtest.modes import
            # sweep` (a name that is not one only adds a longer name in the same package).
            modules |= {f"{node.module}.{alias.name}" for alias in node.names}
    return modules


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "loadtest" and parts[1] in LAYERS else None


def test_every_package_of_the_harness_is_a_layer() -> None:
    packages = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert packages == set(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_nothing_from_the_layers_above(layer: str) -> None:
    above = set(LAYERS[LAYERS.index(layer) + 1 :])
    found = [
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for module in sorted(imported_modules(path))
        if layer_of(module) in above
    ]
    assert not found, found


def test_the_check_sees_an_import_that_runs_back_up(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from loadtest.modes.session import RunSession\n"
    )
    assert {layer_of(name) for name in imported_modules(module)} == {None, "modes"}


def mode_of(module: str) -> str | None:
    """The mode a module belongs to: loadtest.modes.<mode>.…, where <mode> is a package (the
    modules at modes/ level, registry.py, session.py and options.py, belong to none)."""
    parts = module.split(".")
    if parts[:2] != ["loadtest", "modes"] or len(parts) < 3:
        return None
    return parts[2] if (PACKAGE / "modes" / parts[2] / "__init__.py").exists() else None


def modes_imported(path: Path) -> set[str]:
    return {mode for module in imported_modules(path) if (mode := mode_of(module))}


def test_a_mode_imports_no_other_mode() -> None:
    found = {
        (path.relative_to(PACKAGE / "modes").parts[0], mode)
        for path in sorted((PACKAGE / "modes").rglob("*.py"))
        if len(path.relative_to(PACKAGE / "modes").parts) > 1
        for mode in modes_imported(path)
        if mode != path.relative_to(PACKAGE / "modes").parts[0]
    }
    assert not found, sorted(found)  # (importer, imported)


def test_the_mode_check_sees_every_spelling(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text(
        "from loadtest.modes import sweep\n"
        "import loadtest.modes.scale.runner\n"
        "from loadtest.modes.session import open_session\n"
    )
    assert modes_imported(module) == {"sweep", "scale"}
