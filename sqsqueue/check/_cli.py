"""``sqsqueue check [options] -- COMMAND [ARG...]`` (:mod:`sqsqueue.check`).

Exit status: 0 when every run met every expectation, 1 when a violation was
found (its report printed, and written with ``--report``), 2 for a usage
error, said in one line without a traceback. Cost: the runs'
(:mod:`sqsqueue.check`); parsing the command line is O(arguments).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

__all__ = ["add_command", "run"]


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"sqsqueue check: {message}\n")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def add_command(commands: Any) -> None:
    """Add ``check`` to the ``sqsqueue`` command's subcommands."""
    cmd = commands.add_parser(
        "check",
        help="test a consumer program against SQS's faults, judged by its effects",
        description="Run COMMAND (any language) as an SQS consumer against a served broker, "
        "with seeded faults, and judge it by its effects: for each message it processes it "
        "sends one message to $SQSQUEUE_EFFECTS_URL whose body is the processed body "
        "(docs/check.md).",
        usage="sqsqueue check [options] -- COMMAND [ARG...]",
        epilog="Exit status: 0 when every run met every expectation, 1 when a violation was "
        "found, 2 for a usage error.",
    )
    cmd.__class__ = _OneLineParser  # its errors: one line, exit 2
    cmd.set_defaults(run=run)
    cmd.add_argument("command", nargs="*", help="the consumer's command line, after --")
    cmd.add_argument("--messages", type=_int, default=20, metavar="N", help="input messages (20)")
    cmd.add_argument("--fifo", action="store_true", help="a FIFO queue")
    cmd.add_argument("--groups", type=_int, default=1, metavar="G", help="FIFO message groups (1)")
    cmd.add_argument(
        "--faults",
        default="",
        metavar="LIST",
        help="comma-separated: duplicate=RATE, reorder, partial, kill=K, slow=MS, throttle=RATE",
    )
    cmd.add_argument("--seed", type=_int, help="the first run's seed (default: random, printed)")
    cmd.add_argument(
        "--visibility-timeout",
        type=_float,
        default=2.0,
        metavar="SECONDS",
        help="the queue's visibility timeout (2)",
    )
    cmd.add_argument(
        "--expect",
        action="append",
        choices=["at-least-once", "exactly-once", "fifo-order"],
        help="an expectation (repeatable; default at-least-once)",
    )
    cmd.add_argument("--runs", type=_int, default=1, metavar="R", help="seeded runs (1)")
    cmd.add_argument(
        "--timeout", type=_float, default=60.0, metavar="SECONDS", help="a run's limit (60)"
    )
    cmd.add_argument(
        "--max-receive-count",
        type=_int,
        metavar="N",
        help="give the queue a dead-letter queue with this maxReceiveCount",
    )
    cmd.add_argument(
        "--allow-dead-letters",
        action="store_true",
        help="dead letters count as processed for at-least-once",
    )
    cmd.add_argument("--report", metavar="FILE", help="write a Markdown report (and FILE's .svg)")
    cmd.add_argument(
        "--log", metavar="FILE", help="the consumer's stdout and stderr (default: this terminal)"
    )
    cmd.add_argument("--no-shrink", action="store_true", help="report a failure as found")


def run(args: argparse.Namespace) -> int:
    """Run ``sqsqueue check`` with parsed arguments; the exit status."""
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        print("sqsqueue check: needs uvicorn: pip install 'sqsqueue[server]'", file=sys.stderr)
        return 2
    from sqsqueue.check import UsageError, check, explain

    log = None
    try:
        if not args.command:
            raise UsageError("no consumer command: give it after --, e.g. -- python worker.py")
        if args.log:
            log = open(args.log, "ab")  # noqa: SIM115 - closed below
        result = check(
            args.command,
            messages=args.messages,
            fifo=args.fifo,
            groups=args.groups,
            faults=args.faults,
            seed=args.seed,
            visibility_timeout=args.visibility_timeout,
            expect=args.expect,
            timeout=args.timeout,
            runs=args.runs,
            max_receive_count=args.max_receive_count,
            allow_dead_letters=args.allow_dead_letters,
            shrink=not args.no_shrink,
            report=args.report,
            output=log,
            progress=lambda line: print(line, flush=True),
        )
    except (UsageError, OSError) as exc:
        print(f"sqsqueue check: {exc}", file=sys.stderr)
        return 2
    finally:
        if log is not None:
            log.close()
    try:
        if result.ok:
            print(f"ok: every run met {', '.join(result.runs[0].record.schedule.expect)}")
        else:
            print()
            print(explain(result))
        if result.report_path:
            print(f"report: {result.report_path}")
    except BrokenPipeError:  # the reader left (| head): the verdict is the status
        # Python's documented recipe: no second BrokenPipeError when stdout is flushed at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return result.exit_status
