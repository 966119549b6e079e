"""moto's services read and write sqsqueue's queues (extra ``sqsqueue[moto]``).

moto's SNS, S3, EventBridge, Lambda, CloudFormation, resource-tagging code
(and SES and Textract, through SNS) reach SQS by looking up moto's own SQS
backend, ``sqs_backends[account][region]``, and calling its methods. While a
*provider* of brokers is active (a :func:`~sqsqueue.testing.mock_sqs`, or
``sqsqueue serve --with-moto``), that lookup answers with
:class:`~sqsqueue.moto._backend.BrokerBackend`: the provider's broker for that
account and region, presented with the methods moto's services call. A
message SNS publishes, S3 notifies or EventBridge routes is sent through
sqsqueue's client, with SQS's rules, and received by the test's SQS client;
a queue moto's CloudFormation creates is a sqsqueue queue. A lookup of a
queue the broker does not have raises moto's own ``QueueDoesNotExist`` (or
what moto raises for the error sqsqueue found), so moto fails where it would
have failed. While no provider is active, moto's backend answers as always.

moto has no extension point for another SQS backend, so the adapter is
narrow and explicit (:mod:`._backend`, :mod:`._delivery`, :mod:`._lambda`):

* the class of moto's ``sqs_backends`` object is swapped, once, for a subclass
  whose lookups ask the active provider first (every moto module holds that
  one object, however it imported it);
* SNS subscriptions to queues get what AWS gives and moto's backend did not:
  the deduplication id a content-based FIFO topic computes, and delivery to
  the subscription's dead-letter queue when its queue is gone;
* EventBridge targets on queues get the body AWS sends for ``Input``,
  ``InputPath`` and ``InputTransformer`` (moto sends the whole event for
  some of them);
* a Lambda event source mapping on a queue runs its function after each send
  to that queue, as moto's own queue does.

Patching happens when moto's modules are imported (an import hook waits for
them if a provider starts first), and only if moto is installed; importing
this package imports no moto. Supported: moto 5.0 to 5.2 (tested at both
ends). Cost: a lookup is O(1); each call costs what the sqsqueue operation
behind it costs.
"""

from __future__ import annotations

import sys

# client() and seen() run on every mock_sqs request: their modules are
# imported here, once, not in them.
from sqsqueue.aws._client import BrokerAPI, Client
from sqsqueue.moto import _lambda
from sqsqueue.moto._imports import patched
from sqsqueue.moto._providers import Provider, current, deactivate, push

__all__ = ["Provider", "activate", "current", "deactivate"]


def activate(provider: Provider) -> None:
    """Serve moto's SQS lookups from ``provider`` until :func:`deactivate`
    (innermost wins); patches moto now, or when it is imported."""
    push(provider)
    _install()


def client(broker: BrokerAPI, *, endpoint_url: str | None = None) -> Client:
    """The client an SQS request to ``broker`` is answered by: one that runs
    the Lambda event source mappings of a queue after a send to it, when any
    is registered, else a plain :class:`~sqsqueue.aws._client.Client`."""
    return _lambda.client(broker, endpoint_url=endpoint_url)


def seen(account: str) -> None:
    """Tell moto that SQS holds resources in ``account``: its resource groups
    tagging API walks only backend dicts holding an account, which moto adds
    at each of its own lookups, and requests answered by sqsqueue make none.
    Nothing when moto's SQS is not imported. O(accounts)."""
    if "moto.sqs.models" not in patched:
        return
    models = sys.modules.get("moto.sqs.models")
    if models is not None:
        models.sqs_backends._create_account_specific_backend(account)


# -- patching moto when it is imported ---------------------------------------------


def _install() -> None:
    """Patch the moto modules already imported; watch for the others."""
    from sqsqueue.moto import _imports

    _imports.install()
