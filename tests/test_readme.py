"""The README's Python examples run as written (in order, in one namespace, the
way a reader pastes them), so the documentation cannot drift from the code.
The Spark example needs a DataFrame and a stream and is run by the examples'
own tests instead (tests/test_examples.py)."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[str]:
    return [
        b for b in BLOCK.findall(README.read_text(encoding="utf-8")) if "sqsqueue.spark" not in b
    ]


def test_readme_examples_run() -> None:
    """Every Python block but the Spark one runs; the clock-rule examples end
    without leaving a thread behind."""
    found = blocks()
    assert len(found) >= 6
    namespace: dict[str, Any] = {"__name__": "readme"}
    before = threading.active_count()
    for code in found:
        exec(compile(code, str(README), "exec"), namespace)
    assert threading.active_count() == before
    assert namespace["done"] == ["resize image 17"]
