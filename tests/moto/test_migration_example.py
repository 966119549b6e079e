"""The migration example (``examples/moto_migration/test_orders.py``): a moto
test module that passes under moto alone and, with its one import line
changed, under sqsqueue; both runs in a separate pytest, as a user runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "moto_migration" / "test_orders.py"
AFTER = "from sqsqueue.testing import mock_aws"
BEFORE = "from moto import mock_aws"


@pytest.mark.parametrize("import_line", [BEFORE, AFTER], ids=["moto", "sqsqueue"])
def test_the_example_passes_before_and_after_its_one_line_change(
    pytester: pytest.Pytester, import_line: str
) -> None:
    source = EXAMPLE.read_text(encoding="utf-8")
    lines = source.splitlines()
    assert lines.count(AFTER) == 1, "the example's import line changed"
    # The only import of mock_aws in code (the docstring shows both lines indented).
    assert (
        sum(1 for line in lines if line.startswith(("from ", "import ")) and "mock_aws" in line)
        == 1
    )
    pytester.makepyfile(test_orders=source.replace(f"\n{AFTER}\n", f"\n{import_line}\n"))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=3)
