"""The benchmark harness: what every ``benchmarks/bench_*.py`` script shares.

Nothing here measures sqsqueue; it is the machinery around the measurements:

* reporting: ``Table`` (a section of RESULTS.md) with its ``Plot``, ``Verdict``
  (a target and whether a run met it), ``Report`` (a run's tables and verdicts),
  progress lines (``progress``, ``Ticker``) and the figure formats (``rate``,
  ``us``, ``dur``, ``share``, ``pct``, ``status``);
* measuring throughput fairly: ``Workload`` and ``best_rates`` (workloads take
  turns, the best of the repeats counts); ``best_of`` (one workload's best time);
* the machine: ``machine`` (CPU, cores, memory, versions, load), ``loadavg``;
* moto as a peer: ``fake_aws_credentials`` (the environment moto and boto3 run on);
* plots: ``draw_plots`` (log-log latency curves, PNG files beside RESULTS.md);
* RESULTS.md: ``render`` (the whole file, from ``bench_core.py``),
  ``write_section`` and ``merge_targets`` (one script's section and Targets rows,
  from the other scripts), ``command`` and ``section_args`` (their command line).

The scripts import it by name (``from _harness import Table, ...``): Python
puts the directory of the script it runs first on ``sys.path``. Its name does
not start with ``bench_``, so ``python3 benchmarks`` does not run it.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import sqsqueue

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: Headings of bench_core.py's numbered sections of RESULTS.md ("## 4. ...").
NUMBERED = re.compile(r"## \d+[a-z]?\. ")
perf = time.perf_counter
#: What a script says about its sizes (``bench_core.Sizes``, ...).
S = TypeVar("S")


# -- moto as a peer -----------------------------------------------------------------

#: Never real credentials: boto3 signs requests with these, moto accepts them.
FAKE_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def fake_aws_credentials() -> None:
    """Put :data:`FAKE_AWS_ENV` in this process's environment (before boto3 or
    moto is imported), so no real credentials are ever read or sent, and drop
    ``MOTO_ACCOUNT_ID`` so moto answers as its default account 123456789012,
    which the scripts' brokers use too."""
    os.environ.update(FAKE_AWS_ENV)
    os.environ.pop("MOTO_ACCOUNT_ID", None)


# -- reporting ----------------------------------------------------------------------


@dataclass
class Plot:
    """A log-log plot of latency curves, drawn into ``filename`` beside RESULTS.md."""

    filename: str
    title: str
    xlabel: str
    curves: dict[str, dict[int, float]]  # label -> x -> seconds
    #: Points drawn apart from the curves (label -> (x, seconds, annotation)), each
    #: joined by a dotted line to the end of the curve ``marks_follow`` names.
    marks: dict[str, tuple[int, float, str]] = field(default_factory=dict)
    marks_follow: str | None = None
    #: A horizontal line: (seconds, label).
    limit: tuple[float, str] | None = None
    ylabel: str = "median latency"


@dataclass
class Table:
    """One section of RESULTS.md."""

    title: str
    intro: str
    columns: Sequence[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plot: Plot | None = None
    image: str | None = None  # set once ``plot`` is drawn

    def markdown(self, level: int = 2) -> str:
        lines = [f"{'#' * level} {self.title}", "", self.intro, ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        lines.extend("| " + " | ".join(row) + " |" for row in self.rows)
        if self.notes:
            lines.append("")
            lines.extend(f"- {note}" for note in self.notes)
        if self.image and self.plot is not None:
            lines.extend(["", f"![{self.plot.title}]({self.image})"])
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Verdict:
    """A target and whether this run met it."""

    target: str
    source: str
    figure: str
    met: bool
    where: str = ""  # the section of RESULTS.md that measures it
    note: str = ""  # why, with numbers, when it was missed

    def row(self) -> str:
        cells = (self.target, self.source, self.figure, status(self.met), self.where, self.note)
        return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"


TARGETS_HEADER = (
    "| target | from | this run | result | section | where missed: why |\n|---|---|---|---|---|---|"
)


class Ticker:
    """Progress of a long loop: a line every ``every`` seconds with the count done
    and an estimate of the time left (call it with the count done so far)."""

    def __init__(self, section: str, what: str, total: int, every: float = 10.0) -> None:
        self.section, self.what, self.total, self.every = section, what, total, every
        self.t0 = self.last = perf()

    def __call__(self, done: int) -> None:
        now = perf()
        if now - self.last < self.every or not 0 < done < self.total:
            return
        self.last = now
        left = (now - self.t0) / done * (self.total - done)
        print(
            f"[bench]  ...    {self.section:<8} {self.what}: {done:,} of {self.total:,}, "
            f"about {left:.0f} s left",
            flush=True,
        )


_T0 = perf()


def progress(section: str, what: str, figure: str) -> None:
    """One line per result, with the time since the script started."""
    print(f"[bench] {perf() - _T0:5.0f}s {section:<8} {what:<58} {figure}", flush=True)


@dataclass
class Report(Generic[S]):
    """A run of a script's sections: the tables they wrote, their verdicts on the
    targets, and figures one section leaves for another. ``sizes`` is the
    script's own record of how much work each section does."""

    sizes: S
    tables: list[Table] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)

    def progress(self, section: str, what: str, figure: str) -> None:
        progress(section, what, figure)

    def judge(
        self, target: str, source: str, figure: str, met: bool, where: str = "", note: str = ""
    ) -> str:
        self.verdicts.append(Verdict(target, source, figure, met, where, "" if met else note))
        return status(met)


def status(met: bool) -> str:
    return "MET" if met else "MISSED"


def rate(x: float) -> str:
    return f"{x:,.0f}"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs"


def dur(seconds: float) -> str:
    """A duration in the unit that keeps it readable (µs, ms or s)."""
    if seconds < 1e-3:
        return us(seconds)
    if seconds < 1:
        return f"{seconds * 1e3:,.1f} ms"
    return f"{seconds:,.2f} s"


def share(x: float) -> str:
    """A ratio below 1 as ``1/N`` (what the issues' targets are written as)."""
    return f"1/{1 / x:.1f}" if 0 < x < 1 else f"{x:.2f}x"


def pct(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@dataclass(frozen=True)
class Workload:
    """``run()`` handles ``items`` items; ``what`` names it in progress lines."""

    what: str
    items: int
    run: Callable[[], None]


def best_of(run: Callable[[], object], repeats: int) -> float:
    """The fewest seconds ``run()`` took in ``repeats`` calls, each after a
    garbage collection."""
    best = math.inf
    for _ in range(repeats):
        gc.collect()
        t0 = perf()
        run()
        best = min(best, perf() - t0)
    return best


def best_rates(
    report: Report[Any], section: str, workloads: Sequence[Workload], repeats: int
) -> list[float]:
    """Items per second of each workload, best of ``repeats`` repeats.

    The workloads take turns within each repeat, so a peer and the code measured
    against it see the same machine: a burst of load from another process slows
    both, and the best of the repeats is taken from the quiet moments.
    """
    best = [math.inf] * len(workloads)
    for _ in range(repeats):
        for i, w in enumerate(workloads):
            gc.collect()
            t0 = perf()
            w.run()
            best[i] = min(best[i], perf() - t0)
    rates = [w.items / t for w, t in zip(workloads, best, strict=True)]
    for w, r in zip(workloads, rates, strict=True):
        report.progress(section, w.what, f"{rate(r)} /s")
    return rates


# -- the machine --------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_revision() -> str:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{rev}{' + uncommitted changes' if dirty else ''}"


def machine() -> list[tuple[str, str]]:
    import psutil

    physical = psutil.cpu_count(logical=False)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        ("CPU", cpu_model()),
        ("cores", f"{os.cpu_count()} logical, {physical} physical"),
        ("memory", f"{psutil.virtual_memory().total / 2**30:.1f} GiB"),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("Python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("sqsqueue", f"{sqsqueue.__version__} (git {git_revision()})"),
        *(
            [("load average when `python3 benchmarks` started (1, 5, 15 min)", suite)]
            if (suite := os.environ.get("SQSQUEUE_BENCH_SUITE_LOAD"))
            else []
        ),
        ("load average at the start of this script (1, 5, 15 min)", load),
        ("date (UTC)", time.strftime("%Y-%m-%d %H:%M", time.gmtime())),
    ]


def loadavg() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


# -- plots ----------------------------------------------------------------------------


def tick(micros: float) -> str:
    """An axis label for a latency in µs: 10 µs, 1 ms, 10 s."""
    if micros >= 1e6:
        return f"{micros / 1e6:g} s"
    if micros >= 1e3:
        return f"{micros / 1e3:g} ms"
    return f"{micros:g} µs"


def draw(plot: Plot, path: Path) -> bool:
    """Draw ``plot`` (log-log) into ``path``; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("[bench] no plot: matplotlib is not installed (pip install 'sqsqueue[bench]')")
        return False
    fig, ax = plt.subplots(figsize=(8, 4.8))
    colors: dict[str, Any] = {}
    for label, points in plot.curves.items():
        xs = sorted(points)
        [line] = ax.plot(xs, [points[x] * 1e6 for x in xs], marker="o", label=label)
        colors[label] = line.get_color()
    for label, (x, y, text) in plot.marks.items():
        color = colors.get(plot.marks_follow or "")
        if plot.marks_follow in plot.curves:
            last = max(plot.curves[plot.marks_follow])
            ax.plot(
                [last, x],
                [plot.curves[plot.marks_follow][last] * 1e6, y * 1e6],
                linestyle=":",
                color=color,
            )
        ax.plot(
            [x], [y * 1e6], marker="X", markersize=10, linestyle="none", label=label, color=color
        )
        ax.annotate(
            text,
            (x, y * 1e6),
            xytext=(8, -6),
            textcoords="offset points",
            ha="left",
            va="top",
            fontsize=8,
        )
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ys = [y * 1e6 for c in plot.curves.values() for y in c.values()]
    ys += [y * 1e6 for _, y, _ in plot.marks.values()]
    if plot.limit is not None:
        ax.axhline(plot.limit[0] * 1e6, linestyle="--", linewidth=0.8, color="grey")
        ax.annotate(
            plot.limit[1],
            (0.01, plot.limit[0] * 1e6),
            xycoords=("axes fraction", "data"),
            xytext=(0, 3),
            textcoords="offset points",
            fontsize=8,
            color="grey",
        )
    ax.set_ylim(min(ys) / 2, max(ys) * 2)  # flat curves look flat, not magnified noise
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    if max(ys) / min(ys) < 1e3:  # few decades: label 1, 2 and 5 of each
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: tick(v)))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(plot.xlabel)
    ax.set_ylabel(plot.ylabel)
    ax.set_title(plot.title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def draw_plots(tables: Sequence[Table], directory: Path) -> list[str]:
    """Draw every table's plot into ``directory``; returns the files written."""
    written = []
    for table in tables:
        plot = table.plot
        if (
            plot is not None
            and all(len(c) >= 2 for c in plot.curves.values())
            and draw(plot, directory / plot.filename)
        ):
            table.image = plot.filename
            written.append(plot.filename)
    return written


# -- RESULTS.md -------------------------------------------------------------------------


def command(script: str, quick: bool) -> str:
    """How this run was started: ``python3 benchmarks ...`` (the runner says so in
    SQSQUEUE_BENCH_COMMAND) or the script itself."""
    started = os.environ.get("SQSQUEUE_BENCH_COMMAND")
    if started:
        return started
    return f".venv/bin/python {script}" + (" --quick" if quick else "")


def render(
    report: Report[Any],
    header: list[tuple[str, str]],
    command: str,
    elapsed: float,
    kept_targets: Sequence[str] = (),
) -> str:
    lines = [
        "# sqsqueue benchmark results",
        "",
        f"Generated by `{command}` ({elapsed:.0f} s for `bench_core.py`; the other "
        "scripts' sections below say their own); rerun it rather than editing this "
        "file. Figures are from one run on the machine below; other processes on it "
        "add noise, so compare ratios measured in the same run rather than absolute "
        "figures across machines.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in header),
        f"| load average at the end of bench_core.py | {loadavg()} |",
        "",
        "## Targets",
        "",
        "Every target of the issues, measured in this run; `section` points to the "
        "table below that measures it. A MISSED row says why, with numbers.",
        "",
        TARGETS_HEADER,
        *(v.row() for v in report.verdicts),
        *kept_targets,
        "",
    ]
    lines.extend(table.markdown() for table in report.tables)
    return "\n".join(lines)


def split_sections(text: str) -> dict[str, str]:
    """The ``## `` sections of a markdown file, by heading line."""
    sections: dict[str, str] = {}
    heading = ""
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            heading = line.strip()
            sections[heading] = ""
        if heading:
            sections[heading] += line
    return sections


def foreign_sections(path: Path, ours: str) -> str:
    """Sections another benchmark script wrote into ``path`` (kept when we rewrite it)."""
    if not path.exists():
        return ""
    mine = split_sections(ours)
    kept = [t for h, t in split_sections(path.read_text()).items() if h not in mine]
    kept = [t for t in kept if not NUMBERED.match(t)]
    return "".join("\n" + t.rstrip("\n") + "\n" for t in kept)


def target_rows(text: str) -> list[str]:
    """The rows of the Targets table in a RESULTS.md text."""
    section = split_sections(text).get("## Targets", "")
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return rows[1:]  # the first is the header


def row_cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split(" | ")]


def foreign_targets(path: Path) -> list[str]:
    """Targets rows that another script (bench_boto3, ...) merged into ``path``:
    their section column names that script's section (``boto3 §1``), where this
    script's say ``§2``."""
    if not path.exists():
        return []
    rows = target_rows(path.read_text())
    return [
        r
        for r in rows
        if len(row_cells(r)) >= 5 and row_cells(r)[4] and not row_cells(r)[4].startswith("§")
    ]


def merge_targets(path: Path, verdicts: Sequence[Verdict]) -> None:
    """Put ``verdicts`` into the Targets table of ``path`` (replacing rows with the
    same target). Used by the other bench_*.py scripts after bench_core.py."""
    if not path.exists():
        return
    text = path.read_text()
    if TARGETS_HEADER not in text:
        print(f"[bench] {path} has no Targets table to merge into; run bench_core.py first")
        return
    old = target_rows(text)
    names = {v.target for v in verdicts}
    rows = [r for r in old if row_cells(r)[0] not in names] + [v.row() for v in verdicts]
    start = text.index(TARGETS_HEADER)
    end = start + len(TARGETS_HEADER)
    for row in old:
        end = text.index(row, end) + len(row)
    path.write_text(text[:start] + TARGETS_HEADER + "\n" + "\n".join(rows) + text[end:])


def publish(output: Path | None, heading: str, text: str) -> None:
    """Print a script's section, and write it as the ``## {heading}`` section
    of ``output`` (RESULTS.md) unless there is none (``--quick``)."""
    print()
    print(text)
    if output is not None:
        write_section(output, heading, text)
        print(f"[bench] wrote the section {heading!r} of {output}")


def write_section(path: Path, heading: str, text: str) -> None:
    """Replace the ``## {heading}`` section of ``path`` (or append it)."""
    old = path.read_text() if path.exists() else ""
    marker = f"## {heading}\n"
    start = old.find(marker)
    if start < 0:
        new = old.rstrip("\n") + ("\n\n" if old else "") + text
    else:
        end = old.find("\n## ", start + len(marker))
        rest = old[end + 1 :] if end >= 0 else ""
        new = old[:start] + text.rstrip("\n") + "\n" + ("\n" + rest if rest else "")
    path.write_text(new.rstrip("\n") + "\n")


def section_args(prog: str, argv: list[str] | None, profile_help: str) -> argparse.Namespace:
    """Command line of a benchmark module that writes one section of RESULTS.md:
    ``--quick``, ``--output``, ``--profile``; ``args.output`` defaults to
    RESULTS.md on a full run and to nothing with ``--quick``."""
    parser = argparse.ArgumentParser(prog=prog, description=f"{prog}: one section of RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument(
        "--output",
        type=Path,
        help="results file whose section to replace (default: benchmarks/RESULTS.md on a "
        "full run; nothing with --quick)",
    )
    parser.add_argument("--profile", action="store_true", help=profile_help)
    args = parser.parse_args(argv)
    if args.output is None and not args.quick:
        args.output = Path(__file__).resolve().parent / "RESULTS.md"
    return args
