"""The Python examples of README.md and of the guides in docs/ run as written,
and their relative links lead somewhere, so the documentation cannot drift
from the code.

Each Python block runs on its own, in a fresh namespace (a reader copies one
block), and each page's blocks run again in order in one namespace (a reader
pastes a page). Functions a block defines named ``test_*`` are then called as
pytest would call them, with the fixtures their parameters name (the plugin's
``sqs_client``, ``sqs_endpoint_url``, ...). A block that cannot run here (it
needs Spark and Java, a network, a long run, or code the reader supplies) says
so in the Markdown, on the line right before its fence::

    <!-- not run: needs PySpark and Java -->
    ```python

Shell blocks (``sqsqueue serve``) are not run."""

from __future__ import annotations

import asyncio
import inspect
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON = {"python", "python3", "py"}
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")
MARKER = re.compile(r"^\s*<!--\s*not run\b(?P<rest>.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown page."""

    page: Path
    line: int  # the opening fence's, counting from 1
    language: str
    code: str
    not_run: str | None  # the marker's reason, when one sits right before the fence

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def runs(self) -> bool:
        return self.language in PYTHON and self.not_run is None

    def compiled(self) -> Any:
        """The code, compiled so that tracebacks name the page's own lines."""
        return compile("\n" * self.line + self.code, str(self.page), "exec")


def parse(page: Path) -> tuple[list[Block], list[int]]:
    """The fenced blocks of ``page``, and the line numbers of the not-run
    markers that sit right before no block."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    markers: list[int] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            if MARKER.match(lines[i]):
                markers.append(i + 1)
            i += 1
            continue
        fence = opening["fence"]
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not _closes(lines[j], fence):
            body.append(lines[j][len(opening["indent"]) :] if lines[j].strip() else "")
            j += 1
        marker = MARKER.match(lines[i - 1]) if i else None
        reason = marker["rest"].strip().lstrip(":").strip() if marker else None
        blocks.append(Block(page, i + 1, opening["info"].lower(), "\n".join(body) + "\n", reason))
        i = j + 1
    fences = {block.line for block in blocks}
    return blocks, [line for line in markers if line + 1 not in fences]


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


ALL_BLOCKS = [block for page in PAGES for block in parse(page)[0]]
RUNNABLE = [block for block in ALL_BLOCKS if block.runs]


def run_block(block: Block, namespace: dict[str, Any]) -> None:
    """Run one block in ``namespace``; it must leave no thread running."""
    before = set(threading.enumerate())
    exec(block.compiled(), namespace)
    left = [t for t in set(threading.enumerate()) - before if t.is_alive()]
    assert not left, f"{block.name} left threads running: {left}"


def defined_tests(namespace: dict[str, Any]) -> list[Callable[..., Any]]:
    """The ``test_*`` functions a block defined (its namespace was fresh)."""
    return [
        value
        for name, value in namespace.items()
        if name.startswith("test_") and inspect.isfunction(value)
    ]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("block", RUNNABLE, ids=lambda block: block.name)
def test_block_runs_on_its_own(block: Block, request: pytest.FixtureRequest) -> None:
    """The block runs in a fresh namespace: its own imports and definitions
    suffice. The tests it defines pass, given the fixtures they ask for."""
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    run_block(block, namespace)
    for test in defined_tests(namespace):
        fixtures = inspect.signature(test).parameters
        result = test(**{name: request.getfixturevalue(name) for name in fixtures})
        if inspect.isawaitable(result):
            asyncio.run(result)  # type: ignore[arg-type]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "page",
    [page for page in PAGES if any(block.page == page for block in RUNNABLE)],
    ids=lambda page: str(page.relative_to(ROOT)),
)
def test_page_runs_in_order(page: Path) -> None:
    """A page's blocks, pasted one after another, run in one namespace."""
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in RUNNABLE:
        if block.page == page:
            run_block(block, namespace)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_not_run_markers_say_why_and_sit_on_python_blocks(page: Path) -> None:
    """A marker skips exactly the Python block right after it, and gives a
    reason; one anywhere else would skip nothing and hide that."""
    blocks, stray = parse(page)
    assert not stray, f"{page.name}: markers on lines {stray} are not right before a block"
    for block in blocks:
        if block.not_run is not None:
            assert block.language in PYTHON, f"{block.name}: only Python blocks are run"
            assert block.not_run, f"{block.name}: say why: <!-- not run: reason -->"


def test_the_pages_hold_the_examples() -> None:
    """The parser finds the examples (a broken one would pass every test above
    by finding none): the README's, and each guide's."""
    per_page = {page.name: sum(block.page == page for block in RUNNABLE) for page in PAGES}
    assert per_page["README.md"] >= 4
    for guide in ("queues.md", "testing.md", "serving.md", "durability.md"):
        assert per_page[guide] >= 2, guide


def test_parse_markers_and_fences(tmp_path: Path) -> None:
    """The parser's rules, on a page written for them."""
    page = tmp_path / "page.md"
    page.write_text(
        "text\n"
        "```python\nx = 1\n```\n"
        "<!-- not run: needs a cluster -->\n"
        "```python\nspark.stop()\n```\n"
        "````markdown\n```python\nnested = True\n```\n````\n"
        "```bash\nsqsqueue serve\n```\n"
        "<!-- not run: nothing follows -->\n\nprose\n"
        "  ```python\n  indented = 2\n  ```\n",
        encoding="utf-8",
    )
    blocks, stray = parse(page)
    assert [(b.line, b.language, b.code, b.not_run) for b in blocks] == [
        (2, "python", "x = 1\n", None),
        (6, "python", "spark.stop()\n", "needs a cluster"),
        (9, "markdown", "```python\nnested = True\n```\n", None),
        (14, "bash", "sqsqueue serve\n", None),
        (20, "python", "indented = 2\n", None),
    ]
    assert stray == [17]
    assert [b.runs for b in blocks] == [True, False, False, False, True]


# -- links ---------------------------------------------------------------------------------

LINK = re.compile(
    r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?(?P<target>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(?P<target>\S+?)>?(?:\s.*)?$", re.MULTILINE)
CODE_SPAN = re.compile(r"(`+).*?\1", re.DOTALL)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")

#: Guides being written on other branches: a link to one is allowed while it
#: is missing. Once the file exists here, its entry must go (the test says so).
PENDING: set[str] = set()


def prose(page: Path, *, spans: bool = False) -> str:
    """The page without its code blocks, and without its code spans unless
    ``spans``: links there are not links."""
    lines = page.read_text(encoding="utf-8").splitlines()
    for block in parse(page)[0]:
        start = block.line - 1
        end = start + block.code.count("\n") + 1
        lines[start : end + 1] = [""] * (end + 1 - start)
    text = "\n".join(lines)
    return text if spans else CODE_SPAN.sub("", text)


def targets(page: Path) -> list[str]:
    text = prose(page)
    return [m["target"] for m in LINK.finditer(text)] + [
        m["target"] for m in REFERENCE.finditer(text)
    ]


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings."""
    seen: dict[str, int] = {}
    result: set[str] = set()
    for line in prose(page, spans=True).splitlines():
        heading = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading is None:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading[1]).replace("`", "").replace("*", "")
        slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def test_anchors_follow_github() -> None:
    """Headings get GitHub's anchors (the link test below relies on them)."""
    headings = ROOT / "docs" / "queues.md"
    found = anchors(headings)
    assert "virtual-time-with-threads-and-asyncio-the-clock-rule" in found
    assert "a-broker-many-queues-dead-letter-queues-move-tasks" in found


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_point_to_files(page: Path) -> None:
    """Every relative link names a file of the repository, and an anchor into
    a Markdown page names one of its headings."""
    broken = []
    for target in targets(page):
        if SCHEME.match(target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        relative = file.relative_to(ROOT).as_posix() if file.is_relative_to(ROOT) else str(file)
        if relative in PENDING and not file.exists():
            continue
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.name}: {broken}"


def test_pending_guides_are_still_missing() -> None:
    """A pending guide that has arrived leaves PENDING, so its links are
    checked like any other."""
    arrived = sorted(path for path in PENDING if (ROOT / path).exists())
    assert not arrived, f"{arrived} exist now: remove them from PENDING in {__file__}"
