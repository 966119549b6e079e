"""The ``sqsqueue`` command (``python -m sqsqueue``): one subcommand per adapter.

* ``sqsqueue serve``: an SQS endpoint over HTTP (:mod:`sqsqueue.server._cli`).
* ``sqsqueue lambda``: a Lambda handler polling a queue (:mod:`sqsqueue.awslambda._cli`).
* ``sqsqueue check``: a consumer program checked against SQS's faults (:mod:`sqsqueue.check._cli`).

Each adapter adds its subcommand with an ``add_command(subparsers)`` that sets
the ``run`` its arguments are given to; the adapter's optional libraries are
imported when its command runs, so ``sqsqueue --help`` works on the core
install and a command without its extra says which one to install.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from sqsqueue.awslambda import _cli as lambda_cli
from sqsqueue.check import _cli as check_cli
from sqsqueue.server import _cli as serve_cli

__all__ = ["main"]


def parser() -> argparse.ArgumentParser:
    """The whole command line."""
    top = argparse.ArgumentParser(
        prog="sqsqueue", description="sqsqueue: Amazon SQS semantics, in process."
    )
    commands = top.add_subparsers(dest="command", required=True)
    serve_cli.add_command(commands)
    lambda_cli.add_command(commands)
    check_cli.add_command(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``sqsqueue`` command; the process's exit status."""
    args = parser().parse_args(argv)
    status: int = args.run(args)
    return status
