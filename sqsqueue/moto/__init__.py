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

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from sqsqueue.aws._client import BrokerAPI, Client
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
    from sqsqueue.moto import _lambda

    return _lambda.client(broker, endpoint_url=endpoint_url)


def seen(account: str) -> None:
    """Tell moto that SQS holds resources in ``account``: its resource groups
    tagging API walks only backend dicts holding an account, which moto adds
    at each of its own lookups, and requests answered by sqsqueue make none.
    Nothing when moto's SQS is not imported. O(accounts)."""
    if "moto.sqs.models" not in _patched:
        return
    models = sys.modules.get("moto.sqs.models")
    if models is not None:
        models.sqs_backends._create_account_specific_backend(account)


# -- patching moto when it is imported ---------------------------------------------


def _patches() -> dict[str, Callable[[ModuleType], None]]:
    from sqsqueue.moto import _backend, _delivery

    return {
        "moto.sqs.models": _backend.route,
        "moto.sns.models": _delivery.patch_sns,
        "moto.events.models": _delivery.patch_events,
    }


_patched: set[str] = set()
_lock = threading.Lock()


def _apply(name: str, module: ModuleType) -> None:
    with _lock:
        if name in _patched:
            return
        _patched.add(name)
    _patches()[name](module)


def _install() -> None:
    """Patch the moto modules already imported; watch for the others."""
    names = list(_patches())
    for name in names:
        module = sys.modules.get(name)
        if module is not None and name not in _patched:
            _apply(name, module)
    with _lock:
        waiting = [n for n in names if n not in _patched]
        if waiting and not any(isinstance(f, _Watcher) for f in sys.meta_path):
            sys.meta_path.insert(0, _Watcher())


class _Loader(importlib.abc.Loader):
    """moto's own loader, then the patch, once the module has run."""

    def __init__(self, name: str, inner: Any) -> None:
        self.name = name
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.inner.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        _apply(self.name, module)


class _Watcher(importlib.abc.MetaPathFinder):
    """An import hook that patches moto's SQS, SNS and EventBridge models as
    they are imported, for a provider started before moto was. It answers for
    those module names only (O(1) per import) and only until they are patched."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("moto.") or fullname in _patched:
            return None
        if fullname not in ("moto.sqs.models", "moto.sns.models", "moto.events.models"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(fullname, spec.loader)
        return spec
