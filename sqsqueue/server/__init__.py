"""sqsqueue as an SQS endpoint over HTTP (extra ``sqsqueue[server]``).

* :mod:`._app`: :class:`Endpoint`, the ASGI application: reads a request, hands
  it to the wire codecs of :mod:`sqsqueue.aws`, calls the broker, writes the
  answer. No SQS rule lives here.
* :mod:`._httptools` and :mod:`._http`: uvicorn's HTTP/1.1 protocols on
  httptools (used where installed: the extra brings it) and on h11 (the
  fallback), each with read deadlines, a bound on a request's head and AWS's
  400 for bytes that are not HTTP.
* :mod:`._run`: :func:`serve` (what :meth:`Broker.serve <sqsqueue.Broker.serve>`
  calls) and :class:`EndpointHandle`: uvicorn on a background thread.
* :mod:`._credentials`: access keys for Signature V4 (:func:`load_credentials`).
* :mod:`._cli`: the ``sqsqueue serve`` command (:func:`main`).

Paths under ``/_sqsqueue/``, ``/_aws/sqs/messages`` and ``/metrics`` are handed
to :class:`sqsqueue.console.Console` (health, reset, the peek, metrics, the web
console) before any SQS decoding.

uvicorn is imported when a server starts, so this package imports with the
core install alone; ``sqsqueue serve`` without the extra says which to install.
"""

from sqsqueue.server._app import DEFAULT_PORT, Endpoint
from sqsqueue.server._cli import main
from sqsqueue.server._credentials import load_credentials
from sqsqueue.server._run import EndpointHandle, serve

__all__ = [
    "DEFAULT_PORT",
    "Endpoint",
    "EndpointHandle",
    "load_credentials",
    "main",
    "serve",
]
