"""The layering contracts (``[tool.importlinter]`` in ``pyproject.toml``, checked
by ``lint-imports`` in ``python3 tests``) name every module of the package:
a module left out of the layers would be free to import anything."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path
from typing import Any

import sqsqueue

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(sqsqueue.__file__).parent


def layers_contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return [c for c in config["contracts"] if c["type"] == "layers"]


def layered(contract: dict[str, Any]) -> set[str]:
    return {m.strip() for layer in contract["layers"] for m in layer.split("|")}


def test_every_module_is_in_a_layer() -> None:
    [contract] = [c for c in layers_contracts() if "containers" not in c]
    modules = set()
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if len(parts) == 2:  # a top-level module, or a subpackage (its layer covers it)
            modules.add(".".join(parts))
    modules.discard("sqsqueue.__init__")
    assert modules - layered(contract) == set(), "modules outside every layer"
    assert layered(contract) - modules == set(), "layers naming no module"


def test_every_module_of_a_layered_subpackage_is_in_a_layer() -> None:
    """A contract with ``containers`` layers the modules inside a subpackage
    (its ``__init__`` is the container itself, above them all)."""
    contracts = [c for c in layers_contracts() if "containers" in c]
    assert contracts, "the Spark package has a contract of its own"
    for contract in contracts:
        for container in contract["containers"]:
            folder = PACKAGE.parent.joinpath(*container.split("."))
            modules = {p.stem for p in folder.glob("*.py")} | {
                p.parent.name for p in folder.glob("*/__init__.py")
            }
            modules.discard("__init__")
            assert modules - layered(contract) == set(), f"{container}: modules outside layers"
            assert layered(contract) - modules == set(), f"{container}: layers naming no module"


def _cycle() -> list[str] | None:
    """One import cycle among sqsqueue's modules (type-only and function-level
    imports counted, as grimp reads every import statement), or None."""
    import grimp

    graph = grimp.build_graph("sqsqueue")
    modules = sorted(m for m in graph.modules if m.startswith("sqsqueue"))
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.find_modules_directly_imported_by(module)):
            if not target.startswith("sqsqueue"):
                continue
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        path.pop()
        state[module] = 2
        return None

    for module in modules:
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_no_import_cycle() -> None:
    """Imports form no cycle: the engine's two conveniences that build adapter
    objects (``Broker.client()``, ``Broker.serve()``) import modules that type
    the broker by a protocol, never by importing ``sqsqueue._broker``."""
    assert _cycle() is None


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path, monkeypatch: Any) -> None:
    """The check above can fail: a package whose two modules import each other
    (one only for typing) is reported."""
    package = tmp_path / "sqsqueue"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from sqsqueue import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sqsqueue import a\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "sqsqueue" or m.startswith("sqsqueue.")]:
        monkeypatch.delitem(sys.modules, name)
    assert _cycle() in (["sqsqueue.a", "sqsqueue.b", "sqsqueue.a"],)
