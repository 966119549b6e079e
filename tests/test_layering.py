"""The layering contract (``[tool.importlinter]`` in ``pyproject.toml``, checked
by ``lint-imports`` in ``python3 tests``) names every module of the package:
a module left out of the layers would be free to import anything."""

from __future__ import annotations

import tomllib
from pathlib import Path

import sqsqueue

ROOT = Path(__file__).resolve().parent.parent


def test_every_module_is_in_a_layer() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [contract] = [c for c in config["contracts"] if c["type"] == "layers"]
    layered = {m.strip() for layer in contract["layers"] for m in layer.split("|")}
    package = Path(sqsqueue.__file__).parent
    modules = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if len(parts) == 2:  # a top-level module, or a subpackage (its layer covers it)
            modules.add(".".join(parts))
    modules.discard("sqsqueue.__init__")
    assert modules - layered == set(), "modules outside every layer"
    assert layered - modules == set(), "layers naming no module"
