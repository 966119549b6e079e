"""Patching moto's modules as they are imported (see :mod:`sqsqueue.moto`).

A provider may start before moto is imported (``mock_sqs`` first, then
``import moto``): an import hook on ``sys.meta_path`` then waits for moto's
SQS, SNS and EventBridge models and S3's notifications, and patches each
right after it runs. It answers for those four module names only, loads them with moto's own loader
from moto's own files, and never sees user data.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable, Sequence
from types import ModuleType

__all__ = ["install", "patched"]

#: The moto modules patched so far.
patched: set[str] = set()
_lock = threading.Lock()
_WATCHED = (
    "moto.sqs.models",
    "moto.sns.models",
    "moto.events.models",
    "moto.s3.notifications",
)


def _patches() -> dict[str, Callable[[ModuleType], None]]:
    from sqsqueue.moto import _backend, _delivery

    return {
        "moto.sqs.models": _backend.route,
        "moto.sns.models": _delivery.patch_sns,
        "moto.events.models": _delivery.patch_events,
        "moto.s3.notifications": _delivery.patch_s3,
    }


def _apply(name: str, module: ModuleType) -> None:
    with _lock:
        if name in patched:
            return
        patched.add(name)
    _patches()[name](module)


def install() -> None:
    """Patch the watched moto modules already imported; watch for the others.
    O(1) once everything is patched."""
    for name in _WATCHED:
        module = sys.modules.get(name)
        if module is not None and name not in patched:
            _apply(name, module)
    with _lock:
        waiting = [n for n in _WATCHED if n not in patched]
        if waiting and not any(isinstance(f, _Watcher) for f in sys.meta_path):
            sys.meta_path.insert(0, _Watcher())


class _Loader(importlib.abc.Loader):
    """moto's own loader, then the patch, once the module has run."""

    def __init__(self, name: str, inner: importlib.abc.Loader) -> None:
        self.name = name
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        _apply(self.name, module)


class _Watcher(importlib.abc.MetaPathFinder):
    """The import hook: O(1) per import, and only until every watched module
    is patched."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _WATCHED or fullname in patched:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(fullname, spec.loader)
        return spec
