"""The operational side of a served broker (no extra of its own: it needs only
the engine, and ``sqsqueue.aws`` to check signatures and write SQS answers).

* :mod:`._app`: :class:`Console`, the ASGI application the endpoint hands
  every path under :data:`PREFIXES` to (``sqsqueue.server`` imports this
  package; this package never imports the server).
* :mod:`._api`: the JSON API of ``/_sqsqueue/``: health, reset, queues,
  messages read without receiving, actions.
* :mod:`._peek`: LocalStack's ``/_aws/sqs/messages``.
* :mod:`._prometheus`: ``GET /metrics`` in Prometheus's text format.
* ``static/``: the web console (HTML, CSS and one script; no build step).

The guide is ``docs/console.md``.
"""

from sqsqueue.console._app import CONSOLE_PATH, PREFIXES, Console, handles

__all__ = ["CONSOLE_PATH", "PREFIXES", "Console", "handles"]
