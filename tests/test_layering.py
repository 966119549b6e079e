"""The layering contracts (``[tool.importlinter]`` in ``pyproject.toml``, checked
by ``lint-imports`` in ``python3 tests``) name every module of the package:
a module left out of the layers would be free to import anything."""

from __future__ import annotations

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
