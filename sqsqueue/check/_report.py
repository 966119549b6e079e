"""The verdict in words (the terminal's text, ``--report``'s Markdown) and
the run's timeline as an SVG picture: messages against time, each receive
coloured by the consumer incarnation that made it, deletes, effects, dead
letters, and the kills as vertical lines. Plain text and SVG, no plotting
library. Cost: O(events) for each.
"""

from __future__ import annotations

import shlex
from html import escape
from pathlib import Path

from sqsqueue.check._judge import CheckResult, RunResult, Violation
from sqsqueue.check._run import RunRecord
from sqsqueue.check._served import Event
from sqsqueue.check._spec import count_messages

__all__ = ["svg_timeline", "text_report", "write_markdown"]

#: Violations shown in full (the others are counted).
SHOWN = 3


def describe(event: Event, record: RunRecord) -> str:
    """One history line's words, e.g. ``received by pid 812 (incarnation 1)``."""
    who = ""
    if event.incarnation is not None:
        who = f" by pid {record.pid(event.incarnation)} (incarnation {event.incarnation})"
    kind = event.kind
    if kind == "sent":
        return "sent by the checker" + (f" (group {event.detail})" if event.detail else "")
    if kind == "visibility":
        return f"visibility timeout changed to {event.detail.strip(' ?')}{who}"
    if kind == "effect":
        return f"effect reported{who}"
    if kind == "killed":
        return (
            f"consumer pid {record.pid(event.incarnation)} (incarnation {event.incarnation}) killed"
        )
    if kind == "throttled":
        return f"{event.detail.strip(' ?')}{who} answered RequestThrottled"
    if kind == "deleted" and event.detail:
        return f"deleted{who}: {event.detail}"
    if kind == "dead_lettered":
        return "moved to the dead-letter queue"
    return f"{kind}{who}"


def _history_lines(violation: Violation, record: RunRecord) -> list[tuple[str, str]]:
    return [(f"+{e.time - record.started:.3f} s", describe(e, record)) for e in violation.history]


def text_report(result: CheckResult, original: RunResult | None = None) -> str:
    """The failure's report as the command prints it ("" when all passed)."""
    failure = result.failure
    if failure is None:
        return ""
    record = failure.record
    schedule = record.schedule
    lines: list[str] = []
    shrunk = ""
    if original is not None and original is not failure:
        o = original.record.schedule
        shrunk = (
            f" (shrunk from {count_messages(o.messages)}, faults {o.faults.text() or 'none'}, "
            f"to {count_messages(schedule.messages)}, faults {schedule.faults.text() or 'none'})"
        )
    lines.append(f"VIOLATION in the run with seed {schedule.seed}{shrunk}: {failure.summary()}")
    for violation in failure.violations[:SHOWN]:
        m = violation.message
        group = f", group {m.group}" if m.group else ""
        lines.append("")
        lines.append(
            f"expectation {violation.expectation}: message {m.body} (id {m.message_id}{group})"
        )
        lines.append(f"  {violation.reason}")
        lines.append("  its history as the broker saw it:")
        lines.extend(f"    {at:>10}  {what}" for at, what in _history_lines(violation, record))
    rest = len(failure.violations) - SHOWN
    if rest > 0:
        by: dict[str, int] = {}
        for v in failure.violations[SHOWN:]:
            by[v.expectation] = by.get(v.expectation, 0) + 1
        counted = ", ".join(f"{n} of {e}" for e, n in by.items())
        lines.append(f"\n... and {rest} more violation(s): {counted}")
    unknown = [e for e in record.events if e.kind == "effect" and e.message_id is None]
    if unknown:
        lines.append(
            f"\n{len(unknown)} effect(s) named no message sent (first body: {unknown[0].detail!r})"
        )
    lines.append("")
    lines.append(f"reproduce: {schedule.command_line()}")
    return "\n".join(lines)


_LEGEND = "".join(
    (
        '<text x="10" y="36">legend:</text>',
        '<circle cx="70" cy="32" r="4" fill="#1f77b4"/>',
        '<text x="78" y="36">receive (colour: incarnation)</text>',
        '<rect x="250" y="27" width="2" height="10" fill="black"/>',
        '<text x="256" y="36">delete</text>',
        '<rect x="305" y="28" width="8" height="8" fill="#2ca02c"/>',
        '<text x="318" y="36">effect</text>',
        '<text x="365" y="36" fill="#6a3d9a" font-weight="bold">×</text>',
        '<text x="376" y="36">dead letter</text>',
        '<line x1="450" y1="27" x2="450" y2="37" stroke="red" stroke-dasharray="3,2"/>',
        '<text x="456" y="36">kill</text>',
    )
)
_PALETTE = ("#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f")


def svg_timeline(record: RunRecord, violated: set[str] | None = None) -> str:
    """The run's timeline as an SVG document (module docstring)."""
    violated = violated or set()
    n = len(record.messages)
    row = max(2.0, min(14.0, 520.0 / max(n, 1)))
    left, top, width = 110.0, 76.0, 760.0
    height = top + row * n + 30
    span = max(record.duration, 1e-3)

    def x(t: float) -> float:
        return left + width * min(max(t - record.started, 0.0), span) / span

    rows = {m.message_id: i for i, m in enumerate(record.messages)}
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20:.0f}" '
        f'height="{height:.0f}" font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{left}" y="16" font-size="13">sqsqueue check, seed {record.schedule.seed}: '
        f"{n} messages over {record.duration:.2f} s</text>",
        _LEGEND,
    ]
    for m in record.messages:
        y = top + row * rows[m.message_id] + row / 2
        colour = "red" if m.message_id in violated else "#333"
        if row >= 8:
            out.append(
                f'<text x="{left - 6}" y="{y + 3.5:.1f}" text-anchor="end" fill="{colour}">'
                f"{escape(m.body)}</text>"
            )
        elif m.message_id in violated:
            out.append(
                f'<rect x="{left - 8}" y="{y - row / 2:.1f}" width="5" '
                f'height="{row:.1f}" fill="red"/>'
            )
    last: dict[str, float] = {}
    first: dict[str, float] = {}
    for e in record.events:
        if e.message_id in rows:
            first.setdefault(e.message_id, e.time)
            last[e.message_id] = e.time
    for mid, t0 in first.items():
        y = top + row * rows[mid] + row / 2
        out.append(
            f'<line x1="{x(t0):.1f}" y1="{y:.1f}" x2="{x(last[mid]):.1f}" y2="{y:.1f}" '
            'stroke="#ccc"/>'
        )
    r = max(1.0, min(4.0, row / 2.5))
    kills = 0
    for e in record.events:
        if e.kind == "killed":
            label_y = top - 6 - 12 * (kills % 2)  # alternate rows: close kills stay readable
            kills += 1
            out.append(
                f'<line x1="{x(e.time):.1f}" y1="{label_y + 2}" x2="{x(e.time):.1f}" '
                f'y2="{top + row * n:.1f}" stroke="red" stroke-dasharray="3,2"/>'
                f'<text x="{x(e.time) + 2:.1f}" y="{label_y}" fill="red">kill pid '
                f"{record.pid(e.incarnation)}</text>"
            )
            continue
        if e.message_id not in rows:
            continue
        y = top + row * rows[e.message_id] + row / 2
        if e.kind == "received":
            colour = _PALETTE[(e.incarnation or 0) % len(_PALETTE)]
            out.append(f'<circle cx="{x(e.time):.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{colour}"/>')
        elif e.kind == "deleted":
            out.append(
                f'<rect x="{x(e.time) - 0.75:.1f}" y="{y - row / 2.2:.1f}" width="1.5" '
                f'height="{row / 1.1:.1f}" fill="black"/>'
            )
        elif e.kind == "effect":
            out.append(
                f'<rect x="{x(e.time) - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" '
                f'height="{2 * r:.1f}" fill="#2ca02c" fill-opacity="0.8"/>'
            )
        elif e.kind == "dead_lettered":
            out.append(
                f'<text x="{x(e.time):.1f}" y="{y + 4:.1f}" fill="#6a3d9a" '
                'font-weight="bold" text-anchor="middle">×</text>'
            )
    axis_y = top + row * n + 14
    for i in range(6):
        t = span * i / 5
        out.append(
            f'<text x="{left + width * i / 5:.1f}" y="{axis_y:.1f}" text-anchor="middle">'
            f"{t:.2f} s</text>"
        )
    out.append("</svg>")
    return "\n".join(out)


def write_markdown(path: str, result: CheckResult, original: RunResult | None = None) -> Path:
    """Write the Markdown report to ``path`` and its timeline beside it
    (``<stem>.svg``); the SVG's path."""
    target = Path(path)
    picture = target.with_suffix(".svg")
    shown = result.failure if result.failure is not None else result.runs[-1]
    violated = {v.message.message_id for v in shown.violations}
    picture.write_text(svg_timeline(shown.record, violated), encoding="utf-8")
    schedule = shown.record.schedule
    lines = [
        "# sqsqueue check",
        "",
        f"Consumer: `{shlex.join(schedule.command)}`",
        "",
        f"Verdict: **{'pass' if result.ok else 'violation found'}**",
        "",
        "| run | seed | result |",
        "|---|---|---|",
    ]
    lines += [f"| {i + 1} | {r.seed} | {r.summary()} |" for i, r in enumerate(result.runs)]
    if result.failure is not None:
        failure = result.failure
        lines += ["", "## The violation", ""]
        if original is not None and original is not failure:
            o = original.record.schedule
            lines.append(
                f"Found with {count_messages(o.messages)} "
                f"and faults `{o.faults.text() or 'none'}`; "
                f"shrunk to {count_messages(schedule.messages)} and faults "
                f"`{schedule.faults.text() or 'none'}`, which still fails: {failure.summary()}."
            )
            lines.append("")
        for v in failure.violations[:SHOWN]:
            m = v.message
            lines += [
                f"### {v.expectation}: message `{m.body}`",
                "",
                f"Id `{m.message_id}`{f', group `{m.group}`' if m.group else ''}: {v.reason}.",
                "",
                "| time | what the broker saw |",
                "|---|---|",
            ]
            lines += [f"| {at} | {what} |" for at, what in _history_lines(v, failure.record)]
            lines.append("")
        rest = len(failure.violations) - SHOWN
        if rest > 0:
            lines += [f"... and {rest} more violation(s).", ""]
        lines += ["Reproduce:", "", "```sh", schedule.command_line(), "```"]
    lines += [
        "",
        "## Timeline",
        "",
        f"Run with seed {schedule.seed}: one row per message (red: violated), time left to "
        "right; receives coloured by consumer incarnation, deletes as black ticks, effects "
        "as green squares, kills as red dashed lines.",
        "",
        f"![timeline]({picture.name})",
        "",
    ]
    target.write_text("\n".join(lines), encoding="utf-8")
    return picture
