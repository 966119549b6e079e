"""docs/container.md cannot drift from the command and the Dockerfile (no
Docker needed): every ``serve`` option has its ``SQSQUEUE_*`` row in the
environment table and every row names an option; the Dockerfile's defaults
are the table's image defaults; the guide says every budget with its
limit."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from sqsqueue.server import _cli

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "container.md"


def serve_options() -> dict[str, list[str]]:
    """``serve``'s options by dest: their option strings."""
    parser = _cli._parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    serve = commands.choices["serve"]
    return {
        a.dest: list(a.option_strings)
        for a in serve._actions
        if a.option_strings and a.dest != "help"
    }


def table() -> dict[str, tuple[str, str]]:
    """The environment table: variable -> (option cell, image default cell)."""
    rows: dict[str, tuple[str, str]] = {}
    for line in GUIDE.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(SQSQUEUE_[A-Z_]+)` \| ([^|]*) \| ([^|]*) \|", line)
        if m:
            rows[m.group(1)] = (m.group(2).strip(), m.group(3).strip())
    return rows


def test_every_serve_option_has_its_variable_documented() -> None:
    rows = table()
    for dest, strings in serve_options().items():
        variable = f"SQSQUEUE_{dest.upper()}"
        assert variable in rows, f"docs/container.md has no row for {variable}"
        assert f"`{strings[0]}`" in rows[variable][0], (variable, rows[variable])


def test_every_documented_variable_is_an_option() -> None:
    options = {f"SQSQUEUE_{dest.upper()}" for dest in serve_options()}
    assert set(table()) <= options, set(table()) - options


def test_the_dockerfiles_defaults_are_the_documented_ones() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    instructions = "\n".join(
        line for line in dockerfile.splitlines() if not line.lstrip().startswith("#")
    )
    rows = table()
    found = re.findall(r"(SQSQUEUE_[A-Z_]+)=(\S+)", instructions)
    assert {"SQSQUEUE_HOST", "SQSQUEUE_PORT", "SQSQUEUE_ALLOW_ANONYMOUS"} <= dict(found).keys()
    for variable, value in found:
        assert f"`{value}`" in rows[variable][1], (variable, value, rows[variable])
    assert "EXPOSE 9324" in dockerfile


def test_the_guide_states_each_budget() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    for limit in ("< 2 s", "≤ 80 MB", "≤ 60 MB", "< 5 s"):
        assert limit in text, limit


def test_the_sdist_can_build_the_images(tmp_path: Path) -> None:
    """An unpacked sdist is a working tree for tests/container too: it holds
    the Dockerfile and every file the Dockerfile copies."""
    import subprocess
    import sys
    import tarfile

    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--outdir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    [sdist] = tmp_path.glob("sqsqueue-*.tar.gz")
    with tarfile.open(sdist) as archive:
        top = archive.getnames()[0].split("/")[0]
        names = {n.removeprefix(f"{top}/") for n in archive.getnames()}
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    copied = {
        word.rstrip("/")
        for line in dockerfile.splitlines()
        if line.startswith("COPY ") and "--from=" not in line
        for word in line.split()[1:-1]
    }
    assert copied == {"pyproject.toml", "README.md", "LICENSE", "sqsqueue", "docker/healthcheck.py"}
    for path in [*copied, "Dockerfile", ".dockerignore"]:
        assert path in names or any(n.startswith(f"{path}/") for n in names), path
