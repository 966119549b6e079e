"""``sqsqueue lambda``: run a Lambda handler against any SQS queue, as a worker.

    sqsqueue lambda app:handler --queue-url URL [--endpoint-url URL] [--batch-size N] ...

The queue is reached through boto3 (imported when the command runs: the
``lambda`` extra), so the same command serves a local ``sqsqueue serve`` and
AWS itself; credentials come from boto3's usual chain. SIGINT or SIGTERM
stops polling; the command returns once the invocations in flight finish.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import signal
import sys
import threading
from typing import Any

from sqsqueue.awslambda._mapping import EventSourceMapping
from sqsqueue.awslambda._settings import LambdaError

__all__ = ["add_command", "run"]

_REGION_IN_URL = re.compile(r"^https?://sqs\.([a-z0-9-]+)\.amazonaws\.com")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def add_command(commands: Any) -> None:
    """Add ``lambda`` to the ``sqsqueue`` command's subcommands."""
    cmd = commands.add_parser(
        "lambda",
        help="run a Lambda handler on an SQS queue, as an event source mapping does",
        description="Poll an SQS queue and invoke a Python Lambda handler with AWS's SQS "
        "events, deleting or returning messages by what it does (docs/lambda.md).",
    )
    cmd.set_defaults(run=run)
    cmd.add_argument("handler", help="the handler: module:function (or module.function)")
    cmd.add_argument("--queue-url", required=True, help="the queue's URL")
    cmd.add_argument("--endpoint-url", help="an SQS endpoint (default: AWS's)")
    cmd.add_argument("--region", help="the client's region (default: from the URL, or us-east-1)")
    cmd.add_argument("--batch-size", type=_int, default=10, help="BatchSize (10)")
    cmd.add_argument(
        "--maximum-batching-window",
        type=_int,
        default=None,
        metavar="SECONDS",
        help="MaximumBatchingWindowInSeconds (0)",
    )
    cmd.add_argument(
        "--report-batch-item-failures",
        action="store_true",
        help='FunctionResponseTypes ["ReportBatchItemFailures"]',
    )
    cmd.add_argument(
        "--maximum-concurrency", type=_int, help="ScalingConfig MaximumConcurrency (2-1000)"
    )
    cmd.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="PATTERN",
        help="a FilterCriteria pattern (JSON); repeat for up to 5",
    )
    cmd.add_argument("--function-timeout", type=_int, default=3, help="the function's Timeout (3)")
    cmd.add_argument("--function-name", default="function", help="the context's function_name")
    cmd.add_argument("--memory-size", type=_int, default=128, help="the context's memory (128)")
    cmd.add_argument("--ramp-up", action="store_true", help="AWS's gradual scale-up")


def _region(args: argparse.Namespace) -> str:
    if args.region:
        return str(args.region)
    found = _REGION_IN_URL.match(args.queue_url)
    return found.group(1) if found else os.environ.get("AWS_DEFAULT_REGION", "us-east-1")


def run(args: argparse.Namespace) -> int:
    """Run ``sqsqueue lambda`` with parsed arguments; the exit status."""
    try:
        import boto3
    except ImportError:
        print("sqsqueue lambda needs boto3: pip install 'sqsqueue[lambda]'", file=sys.stderr)
        return 2
    # As Lambda imports the handler from its task root, and `python -m` does:
    # the working directory is importable.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings: dict[str, Any] = {
        "batch_size": args.batch_size,
        "maximum_batching_window_in_seconds": args.maximum_batching_window,
        "function_response_types": (
            ["ReportBatchItemFailures"] if args.report_batch_item_failures else []
        ),
        "function_timeout": args.function_timeout,
        "function_name": args.function_name,
        "memory_size": args.memory_size,
    }
    if args.maximum_concurrency is not None:
        settings["scaling_config"] = {"MaximumConcurrency": args.maximum_concurrency}
    if args.filter:
        settings["filter_criteria"] = {"Filters": [{"Pattern": p} for p in args.filter]}
    try:
        client = boto3.client("sqs", endpoint_url=args.endpoint_url, region_name=_region(args))
        mapping = EventSourceMapping(
            args.queue_url,
            args.handler,
            client=client,
            ramp_up=args.ramp_up,
            keep_invocations=0,  # a worker keeps no history
            **settings,
        )
    except LambdaError as exc:
        print(f"sqsqueue lambda: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # boto3's errors: no queue, no credentials, no endpoint
        print(f"sqsqueue lambda: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    mapping.start()
    print(
        f"sqsqueue lambda: {args.handler} on {mapping.event_source_arn} "
        f"({json.dumps({k: v for k, v in settings.items() if v not in (None, [])})}); "
        "Ctrl-C stops",
        flush=True,
    )
    while not stop.wait(0.5):
        if not mapping.running:
            return 1
    print("sqsqueue lambda: stopping after the invocations in flight", flush=True)
    mapping.stop()
    print("sqsqueue lambda: stopped", flush=True)
    return 0
