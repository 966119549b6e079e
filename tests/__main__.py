"""Run the whole test suite: ``python3 tests`` from the repository root.

Creates ``.venv`` once, installs sqsqueue with its development extras, then
runs ruff, ``mypy --strict``, import-linter (the layering contract in
``pyproject.toml``, see ``docs/architecture.md``) and pytest. Extra arguments go to pytest
(``python3 tests -k fifo -x``). ``SQSQUEUE_LONG=1`` runs the model checks at
depth (see README).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / ".ci"))
from bootstrap import ensure_chromium, ensure_clients, ensure_venv, run


def main() -> int:
    python = str(ensure_venv("dev,server,spark,testing"))
    ensure_clients()
    ensure_chromium()
    for step in (
        [python, "-m", "ruff", "check", "."],
        [python, "-m", "mypy"],
        [str(Path(python).parent / "lint-imports")],
        [python, "-m", "pytest", *sys.argv[1:]],
    ):
        code = run(step)
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
