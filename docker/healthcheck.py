"""The image's HEALTHCHECK: GET /_sqsqueue/health on the server's own port.

The image has no curl; its Python has urllib. The port is the one the server
was started with: ``--port`` among the arguments of PID 1 (the server, or
``docker run --init``'s init, whose arguments end with the server's), else
``SQSQUEUE_PORT``, else 9324. Exit 0 on a 200, 1 otherwise, as Docker expects.
"""

from __future__ import annotations

import os
import sys
import urllib.request


def _option(argv: list[str], name: str) -> str | None:
    """The last value of ``--name VALUE`` or ``--name=VALUE`` in ``argv``."""
    found = None
    for i, arg in enumerate(argv):
        if arg == name and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith(name + "="):
            found = arg.split("=", 1)[1]
    return found


def main() -> int:
    try:
        with open("/proc/1/cmdline", "rb") as f:
            argv = f.read().decode("utf-8", "replace").split("\0")
    except OSError:
        argv = []
    port = _option(argv, "--port") or os.environ.get("SQSQUEUE_PORT") or "9324"
    host = _option(argv, "--host") or os.environ.get("SQSQUEUE_HOST") or "127.0.0.1"
    if host in ("0.0.0.0", "", "::", "[::]"):  # noqa: S104 (a wildcard bind: ask loopback)
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/_sqsqueue/health", timeout=3) as reply:
            return 0 if reply.status == 200 else 1
    except Exception as exc:  # any failure is "unhealthy"
        print(f"unhealthy: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
