"""The ``sqsqueue`` command (``python -m sqsqueue``): ``sqsqueue serve`` serves a
fresh broker until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import gc
import logging
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from sqsqueue import _config, _validate
from sqsqueue._broker import Broker, rehearse_config
from sqsqueue._lenient import LENIENCIES, parse_lenient, summary
from sqsqueue.errors import SQSError
from sqsqueue.server._accounts import Accounts
from sqsqueue.server._app import DEFAULT_PORT, Endpoint, is_loopback
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


class _Usage(Exception):
    """A bad option value, from the command line or the environment: one line,
    exit status 2."""


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


def _account(text: str) -> str:
    """``--account-id``: 12 digits, as AWS's account ids (the engine's rule)."""
    try:
        return _validate.account_id(text)
    except SQSError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an account id: use 12 digits") from None


def _region(text: str) -> str:
    """``--region``: lower-case letters, digits and dashes (the engine's rule:
    ``us-east-1``, or ElasticMQ's ``elasticmq``)."""
    try:
        return _validate.region(text)
    except SQSError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a region: use lower-case letters, digits and dashes (us-east-1)"
        ) from None


def _leniencies(text: str) -> frozenset[str]:
    """``--lenient``: comma-separated leniency names (``sqsqueue._lenient``)."""
    try:
        return parse_lenient(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_TRUE = ("1", "true", "yes")
_FALSE = ("0", "false", "no")


def _boolean(text: str) -> bool:
    """A boolean from the environment: 1/true/yes or 0/false/no, any case."""
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean: use 1/true/yes or 0/false/no")


@attrs.frozen
class _Option:
    """One ``serve`` option: its default, and how its environment variable's
    text (``SQSQUEUE_<DEST>``) becomes a value."""

    default: Any
    convert: Callable[[str], Any] = str
    choices: tuple[str, ...] | None = None


#: Every ``serve`` option by its argparse ``dest``. The parser leaves an option
#: out of its namespace when the command line does not give it
#: (``argparse.SUPPRESS``); :func:`settings` then takes ``SQSQUEUE_<DEST>``,
#: then this default: the command line wins over the environment.
OPTIONS: dict[str, _Option] = {
    "host": _Option("127.0.0.1"),
    "port": _Option(DEFAULT_PORT, _port),
    "region": _Option("us-east-1", _region),
    "account_id": _Option(None, _account),
    "with_moto": _Option(False, _boolean),
    "credentials": _Option(None),
    "allow_anonymous": _Option(False, _boolean),
    "idle_timeout": _Option(float(IDLE_TIMEOUT), _seconds),
    "data_dir": _Option(None),
    "durability": _Option("process", choices=("process", "machine")),
    "config": _Option(None),
    "console": _Option(None, _boolean),
    "allow_reset": _Option(False, _boolean),
    "log_level": _Option("WARNING", str.upper, ("DEBUG", "INFO", "WARNING", "ERROR")),
    "lenient": _Option(frozenset(), _leniencies),
}


def env_name(dest: str) -> str:
    """The environment variable of an option: ``SQSQUEUE_`` and its name in
    upper case, dashes as underscores (``--data-dir``: ``SQSQUEUE_DATA_DIR``)."""
    return f"SQSQUEUE_{dest.upper()}"


def settings(args: argparse.Namespace, environ: Mapping[str, str]) -> argparse.Namespace:
    """Every ``serve`` option's value: from the command line (``args``), else
    from ``environ``'s ``SQSQUEUE_<OPTION>``, else its default. A bad value
    from the environment raises :class:`_Usage` naming the variable. O(options)."""
    values = dict(vars(args))
    for dest, option in OPTIONS.items():
        if dest in values:
            continue
        name = env_name(dest)
        text = environ.get(name)
        if text is None or text == "":
            values[dest] = option.default
            continue
        try:
            value = option.convert(text)
        except argparse.ArgumentTypeError as exc:
            raise _Usage(f"{name}: {exc}") from None
        if option.choices is not None and value not in option.choices:
            raise _Usage(f"{name}: {text!r} is not one of {', '.join(option.choices)}")
        values[dest] = value
    return argparse.Namespace(**values)


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
    ``add_subparsers()`` result); its arguments' ``run`` is :func:`run`. Every
    option can also come from the environment (:func:`settings`)."""
    serve_cmd = commands.add_parser(
        "serve",
        help="serve an SQS endpoint over HTTP",
        description="Serve an SQS endpoint over HTTP. Every option can also be set in the "
        "environment as SQSQUEUE_<OPTION> (SQSQUEUE_PORT, SQSQUEUE_DATA_DIR, ...; booleans "
        "1/true/yes or 0/false/no); the command line wins.",
        argument_default=argparse.SUPPRESS,
    )
    serve_cmd.set_defaults(run=run)
    serve_cmd.add_argument("--host", help="address to bind (127.0.0.1)")
    serve_cmd.add_argument("--port", type=_port, help="port (9324; 0: any)")
    serve_cmd.add_argument("--region", type=_region, help="the default region (us-east-1)")
    serve_cmd.add_argument(
        "--account-id",
        type=_account,
        help="the default account id, 12 digits (000000000000; with --with-moto, moto's: "
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
        choices=OPTIONS["durability"].choices,
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
        "--lenient",
        metavar="NAME[,NAME...]",
        type=_leniencies,
        help=f"relax these AWS rules, counting each request AWS would refuse (known: "
        f"{', '.join(sorted(LENIENCIES))}; see docs/serving.md)",
    )
    serve_cmd.add_argument(
        "--log-level",
        type=str.upper,
        choices=OPTIONS["log_level"].choices,
        help="logging level (WARNING); INFO logs every request (action, queue, status, duration)",
    )


def _check_data_dir(path: str) -> None:
    """Refuse, in one line, a data directory this process cannot write: the
    usual mistake is a bind mount owned by another uid (in a container, the
    image runs as a user that is not root)."""
    existing = Path(path)
    try:
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent  # the directory will be made in the nearest one
        if existing.exists() and not existing.is_dir():
            raise _Usage(f"data directory {path}: {existing} is not a directory")
        usable = os.access(existing, os.W_OK | os.X_OK)
    except OSError:  # a parent this user may not even look into
        usable = False
    if not usable:
        uid, gid = os.getuid(), os.getgid()
        raise _Usage(
            f"data directory {path} is not writable by uid {uid} (gid {gid}): give that user "
            f"the directory (chown -R {uid}:{gid} on the host, or a fresh named volume), "
            "or choose another with --data-dir"
        )


def freeze_startup() -> None:
    """Leave what the server made while starting out of every later
    collection: ``sqsqueue serve`` owns its process, so once it listens (a
    request that came in meanwhile is frozen with it) it collects once (the
    records a data directory restored are untracked by it) and moves every
    object still tracked to the collector's permanent generation
    (``gc.freeze()``): the modules, the event loop, the broker's structures.
    A full collection then walks only what came after, not the tens of
    thousands of objects imports make (``docs/serving.md``, "Depth and the
    garbage collector"). The library itself never does this: an application
    that embeds a queue or calls ``Broker.serve()`` keeps its own settings."""
    gc.collect()
    gc.freeze()


def main(argv: Sequence[str] | None = None) -> int:
    """``sqsqueue serve``: serve a fresh broker until SIGINT or SIGTERM."""
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Run ``sqsqueue serve`` with parsed arguments (options the command line
    left out come from the environment, :func:`settings`); the exit status."""
    try:
        args = settings(args, os.environ)
        if args.data_dir:
            _check_data_dir(args.data_dir)
    except _Usage as exc:
        print(f"sqsqueue serve: {exc}", file=sys.stderr)
        return 2
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
        lenient: frozenset[str] = args.lenient
        groups = {}
        if args.config:
            config = _config.load(args.config)
            lenient |= config.lenient
            groups = _config.split(config, account, args.region)
            # Every table checked on a scratch broker before any real one is touched.
            for (table_account, table_region), plan in groups.items():
                rehearse_config(plan, table_account, table_region, lenient=lenient)
        broker = Broker(
            region=args.region,
            account_id=account,
            data_dir=args.data_dir,
            durability=args.durability,
            lenient=lenient,
        )
        accounts = Accounts(broker, durability=args.durability)
        for (table_account, table_region), plan in groups.items():
            accounts.broker_for(table_account, table_region)._configure(plan)
        endpoint = Endpoint(broker, credentials=credentials, accounts=accounts)
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
    freeze_startup()
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
    if credentials is None and not is_loopback(args.host):
        print(
            f"sqsqueue: anonymous access on {args.host}: no request is authenticated, so "
            "whoever can reach this port can use every queue (--credentials or "
            "SQSQUEUE_CREDENTIALS requires Signature V4)",
            flush=True,
        )
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
        print(f"sqsqueue: {summary(accounts.lenient_counts())}", flush=True)
    print("sqsqueue: stopped", flush=True)
    return 0
