"""The ``sqsqueue`` command (``python -m sqsqueue``): ``sqsqueue serve`` serves a
fresh broker until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import logging
import math
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from sqsqueue import _validate
from sqsqueue._broker import Broker
from sqsqueue._lenient import summary
from sqsqueue.errors import SQSError
from sqsqueue.server._app import DEFAULT_PORT, Endpoint
from sqsqueue.server._credentials import load_credentials
from sqsqueue.server._moto import check_moto
from sqsqueue.server._run import (
    IDLE_TIMEOUT,
    EndpointHandle,
    attach_console,
    bind,
    refuse_open,
    serve_with_moto,
    uvicorn_server,
)

__all__ = ["add_command", "main", "run"]


def _port(text: str) -> int:
    """``--port``: 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: use 0 (any) to 65535")
    return port


def _seconds(text: str) -> float:
    """``--idle-timeout``: a number of seconds greater than 0."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(f"{text} seconds: the timeout must be greater than 0")
    return seconds


def _parser() -> argparse.ArgumentParser:
    """The ``sqsqueue`` command with ``serve`` alone (:func:`main`); the full
    command is :func:`sqsqueue.cli.main`."""
    parser = argparse.ArgumentParser(
        prog="sqsqueue", description="sqsqueue: Amazon SQS semantics, in process."
    )
    add_command(parser.add_subparsers(dest="command", required=True))
    return parser


def add_command(commands: Any) -> None:
    """Add ``serve`` to the ``sqsqueue`` command's subcommands (an argparse
    ``add_subparsers()`` result); its arguments' ``run`` is :func:`run`."""
    serve_cmd = commands.add_parser("serve", help="serve an SQS endpoint over HTTP")
    serve_cmd.set_defaults(run=run)
    serve_cmd.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    serve_cmd.add_argument("--port", type=_port, default=DEFAULT_PORT, help="port (9324; 0: any)")
    serve_cmd.add_argument("--region", default="us-east-1", help="the broker's region")
    serve_cmd.add_argument(
        "--account-id",
        help="the broker's account id, 12 digits (000000000000; with --with-moto, moto's: "
        "MOTO_ACCOUNT_ID, else 123456789012)",
    )
    serve_cmd.add_argument(
        "--with-moto",
        action="store_true",
        help="also serve every other AWS service on the same port through moto's server, "
        "its SNS, S3, EventBridge... delivering into these queues (needs moto[server])",
    )
    serve_cmd.add_argument(
        "--credentials",
        metavar="FILE",
        help='JSON {"<access key id>": "<secret>", ...}: require Signature V4 requests',
    )
    serve_cmd.add_argument(
        "--allow-anonymous",
        action="store_true",
        help="serve a non-loopback address without credentials",
    )
    serve_cmd.add_argument(
        "--idle-timeout",
        type=_seconds,
        default=IDLE_TIMEOUT,
        help="seconds a connection may take to send a request's head, then its body, "
        "or stay idle (30)",
    )
    serve_cmd.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep queues and messages in DIR and restore them on the next start (SQLite)",
    )
    serve_cmd.add_argument(
        "--durability",
        choices=("process", "machine"),
        default="process",
        help="with --data-dir: a returned call survives a crash of the process (default) "
        "or also power loss (fsync per call); see docs/guarantees.md",
    )
    serve_cmd.add_argument(
        "--config",
        metavar="FILE",
        help="TOML file of [[queue]] tables: create those queues at start (check them when "
        "they exist); see docs/console.md",
    )
    serve_cmd.add_argument(
        "--console",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="serve the web console at /_sqsqueue/console/ (default: on for a loopback "
        "address or with credentials)",
    )
    serve_cmd.add_argument(
        "--allow-reset",
        action="store_true",
        help="with --data-dir: let POST /_sqsqueue/reset erase the queues (always allowed "
        "in memory)",
    )
    serve_cmd.add_argument(
        "--log-level",
        type=str.upper,
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        default="WARNING",
        help="logging level; INFO logs every request (action, queue, status, duration)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``sqsqueue serve``: serve a fresh broker until SIGINT or SIGTERM."""
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Run ``sqsqueue serve`` with parsed arguments; the exit status."""
    try:
        import uvicorn  # noqa: F401
    except ImportError:
        print("sqsqueue serve needs uvicorn: pip install 'sqsqueue[server]'", file=sys.stderr)
        return 2
    if args.with_moto:
        try:
            check_moto()
        except ImportError as exc:
            print(f"sqsqueue serve: {exc}", file=sys.stderr)
            return 2
    try:
        credentials = load_credentials(args.credentials) if args.credentials else None
        account = args.account_id
        if account is None:
            # LocalStack's and ElasticMQ's account; with moto, moto's (its other
            # services answer in it).
            account = _validate.default_account_id() if args.with_moto else "000000000000"
        refuse_open(args.host, credentials, args.allow_anonymous, args.with_moto)
        options: dict[str, Any] = {
            "region": args.region,
            "account_id": account,
            "data_dir": args.data_dir,
            "durability": args.durability,
        }
        broker = Broker.from_config(args.config, **options) if args.config else Broker(**options)
        endpoint = Endpoint(broker, credentials=credentials)
        attach_console(
            endpoint,
            args.host,
            console=args.console,
            allow_anonymous=args.allow_anonymous,
            allow_reset=args.allow_reset,
        )
        sock = bind(args.host, args.port)
    except (OSError, ValueError, SQSError) as exc:
        print(f"sqsqueue serve: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=args.log_level, format="%(levelname)s %(name)s: %(message)s")
    if args.with_moto:
        # moto's own clients (Step Functions' SQS tasks, ...) call moto's port.
        os.environ["MOTO_PORT"] = str(sock.getsockname()[1])
        handle = serve_with_moto(broker, endpoint, sock, args.host, args.idle_timeout)
    else:
        handle = EndpointHandle(
            uvicorn_server(endpoint, args.idle_timeout), endpoint, sock, args.host
        )
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    handle.start()
    auth = "Signature V4 required" if credentials else "no authentication"
    kept = f"kept in {broker.data_dir}" if broker.data_dir else "in memory"
    what = "SQS, and every other AWS service through moto," if args.with_moto else "SQS"
    print(
        f"sqsqueue: serving {what} at {handle.endpoint_url} (region {broker.region}, "
        f"account {broker.account_id}, {auth}, {kept}); Ctrl-C stops",
        flush=True,
    )
    if endpoint.console is not None and endpoint.console.ui:
        print(f"sqsqueue: console at {handle.console_url}", flush=True)
    if broker.lenient:
        print(
            f"sqsqueue: lenient: {', '.join(sorted(broker.lenient))} (what AWS would refuse "
            "is let through and counted: /_sqsqueue/health)",
            flush=True,
        )
    while not stop.wait(0.5):
        if not handle._thread.is_alive():
            return 1
    handle.close()
    broker.close()
    if broker.lenient:
        print(f"sqsqueue: {summary(broker.lenient_counts())}", flush=True)
    print("sqsqueue: stopped", flush=True)
    return 0
