"""The Broker: one account's queues in one region, as SQS sees them.

A :class:`Broker` owns the queue namespace (names, URLs, ARNs), hands messages
between queues through redrive policies and message move tasks, and applies
the account-level rules of ``docs/aws-behaviour.md`` §§2, 3, 5, 10 and 11:
idempotent CreateQueue, the 60-second re-create window, ListQueues paging,
ListDeadLetterSourceQueues, move tasks.

All queues of a broker share one re-entrant lock, so a dead-letter move from
one queue into another is atomic and lock order can never deadlock. Move
tasks, like every other deadline, advance lazily: each operation on any queue
of the broker first moves what the task's rate allows by ``now``. No threads.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import random as _random
import re
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Generic, Self, TypedDict, TypeVar, Unpack, overload

import attrs
from sortedcontainers import SortedDict

from sqsqueue import _attributes, _config, _lenient, _validate
from sqsqueue._admin import validate_tags
from sqsqueue._clock import Clock, ManualClock, SystemClock
from sqsqueue._deadletter import MoveTask, MoveTasks, parse_task_handle
from sqsqueue._durable import DurableLock, Store, check_durability
from sqsqueue._faults import Faults
from sqsqueue._fifo import FifoQueue
from sqsqueue._lenient import STRICT, Leniency, parse_lenient
from sqsqueue._limits import LIST_RESULTS_MAX, RECREATE_INTERVAL, US
from sqsqueue._metrics import QueueMetrics
from sqsqueue._operations import _BaseQueue
from sqsqueue._ports import ServedEndpoint, SQSClient
from sqsqueue._settings import attribute_map
from sqsqueue._standard import Queue
from sqsqueue._validate import show
from sqsqueue.errors import (
    InvalidParameterValue,
    QueueDeletedRecently,
    QueueDoesNotExist,
    QueueNameExists,
    ServiceClosed,
    SQSError,
    StorageError,
)

__all__ = ["Broker", "ListQueuesResult", "MoveTask"]

#: The type of a broker's clock, so ``broker.clock.advance(5)`` type-checks
#: for a ``Broker(clock=ManualClock())``.
C = TypeVar("C", bound=Clock)
#: How many queue references a broker keeps parsed (``Broker._names``).
_NAMES_KEPT = 1024
_ARN = re.compile(r"arn:aws[a-zA-Z-]*:sqs:([a-z0-9-]+):([0-9]{12}):(.+)")
#: The host of an AWS queue URL and the region it names: sqs.<region>.amazonaws.com
#: (also sqs-fips., .amazonaws.com.cn), the legacy <region>.queue.amazonaws.com,
#: and sqs.amazonaws.com / queue.amazonaws.com for us-east-1.
_AWS_HOST = re.compile(
    r"https?://(?:sqs(?:-fips)?\.([a-z0-9-]+)|([a-z0-9-]+)\.queue|(sqs|queue))"
    r"\.amazonaws\.com(?:\.cn)?(?::[0-9]+)?/",
    re.IGNORECASE,
)


def _url_region(url: str) -> str | None:
    """The region an AWS queue URL's host names; None for any other host (an
    endpoint's own URLs, a VPC endpoint). O(1)."""
    match = _AWS_HOST.match(url)
    if match is None:
        return None
    if match.group(3):
        return "us-east-1"
    return (match.group(1) or match.group(2)).lower()


class BrokerOptions(TypedDict, total=False):
    """The keywords of ``Broker(...)`` besides ``clock`` (see ``Broker.__init__``)."""

    region: str
    account_id: str | None
    random: _random.Random | None
    faults: Faults | None
    keep_history: bool
    data_dir: str | os.PathLike[str] | None
    durability: str
    lenient: str | Iterable[str] | None


@attrs.frozen
class ListQueuesResult:
    """A page of queue URLs; ``next_token`` is set when more remain."""

    queue_urls: tuple[str, ...]
    next_token: str | None = None


def rehearse_config(
    plan: _config.Config, account_id: str, region: str, *, lenient: Iterable[str] = ()
) -> None:
    """Apply a configuration to a scratch broker in memory (with the
    leniencies the real one will have), so an attribute AWS would refuse
    raises :class:`~sqsqueue.ConfigError` before a real broker (perhaps a
    durable one) is touched. O(queues)."""
    scratch: Broker[ManualClock] = Broker(
        clock=ManualClock(), region=region, account_id=account_id, lenient=frozenset(lenient)
    )
    with scratch:
        _config.apply(scratch, plan)


class Broker(Generic[C]):
    """Queues of one AWS account in one region.

    Generic over its clock: ``Broker(clock=ManualClock())`` is a
    ``Broker[ManualClock]``, ``Broker()`` a ``Broker[SystemClock]`` (annotate
    with ``Broker[Any]`` where any clock will do).

    >>> from sqsqueue import ManualClock
    >>> broker = Broker(clock=ManualClock(start=1_700_000_000.0), account_id="123456789012")
    >>> q = broker.create_queue("jobs", visibility_timeout=60)
    >>> q.url
    'https://sqs.us-east-1.amazonaws.com/123456789012/jobs'
    >>> broker.get_queue(q.url) is q
    True
    """

    # The two signatures differ in the clock alone, which gives the broker its
    # type; the other keywords are BrokerOptions (mypy refuses one that the
    # implementation below does not take).
    @overload
    def __init__(
        self: Broker[SystemClock], *, clock: None = None, **options: Unpack[BrokerOptions]
    ) -> None: ...

    @overload
    def __init__(self, *, clock: C, **options: Unpack[BrokerOptions]) -> None: ...

    def __init__(
        self,
        *,
        clock: C | None = None,
        region: str = "us-east-1",
        account_id: str | None = None,
        random: _random.Random | None = None,
        faults: Faults | None = None,
        keep_history: bool = False,
        data_dir: str | os.PathLike[str] | None = None,
        durability: str = "process",
        lenient: str | Iterable[str] | None = None,
    ) -> None:
        """``account_id`` defaults to the environment variable ``MOTO_ACCOUNT_ID``
        when set, else 123456789012 (moto's default account, so ARNs written for
        moto name this broker's queues). ``data_dir`` makes the broker durable:
        its queues, messages and move tasks are kept in that directory (SQLite)
        and restored when a broker opens it again; ``durability`` is
        ``"process"`` (a returned call survives SIGKILL) or ``"machine"`` (it
        also survives power loss). See ``docs/guarantees.md``. Opening costs
        O(n log n) for n stored messages.

        ``lenient`` names AWS rules to relax (``"purge-interval"``, a
        comma-separated string or an iterable of names; see :attr:`lenient`):
        a setting of this broker in this process, never stored, so a data
        directory opens the same with or without it. An unknown name raises
        InvalidParameterValue (a ValueError) listing the known ones."""
        names = _lenient_names(lenient)  # first: a bad name changes nothing
        _validate.instance("clock", clock, Clock, "a Clock")
        if account_id is None:  # MOTO_ACCOUNT_ID, else moto's 123456789012
            account_id = _validate.default_account_id()
        _validate.account_id(account_id)
        _validate.region(region)
        _validate.instance("random", random, _random.Random, "a random.Random")
        _validate.instance("faults", faults, Faults, "a Faults")
        #: The clock every queue of this broker runs on.
        self.clock: C = clock if clock is not None else SystemClock()  # type: ignore[assignment]
        self.region = region
        self.account_id = account_id
        self._random = random
        self._rng = random if random is not None else _random.Random()
        self._queues: SortedDict = SortedDict()  # name -> queue
        #: Queue names of the URLs and ARNs get_queue was given (a client
        #: names its queue by the same URL in every request): each is parsed
        #: once. A name depends only on the reference, the region and the
        #: account, which are fixed. At most _NAMES_KEPT, then emptied.
        self._names: dict[str, str] = {}
        self._deleted_at: dict[str, int] = {}
        self._closed = False
        #: Brokers that close when this one does (mock_sqs's brokers of other regions).
        self._followers: list[Broker[Any]] = []
        #: Faults given to every standard queue this broker creates.
        self.faults = faults
        #: Whether queues this broker creates record message histories.
        self.keep_history = keep_history
        #: The AWS rules relaxed, shared by every queue of the broker.
        self._leniency = Leniency(names) if names else STRICT
        self._store: Store | None = None
        #: The configuration this broker was made from (``from_config``), which
        #: ``reset`` makes again.
        self._config: _config.Config | None = None
        check_durability(durability)
        if data_dir is None:
            self._lock: threading.RLock = threading.RLock()
            self._moves = MoveTasks(self._by_arn, self._sources_of, self._rng, self._lock)
            return
        _validate.instance("data_dir", data_dir, (str, os.PathLike), "a path")
        _open(self, Store(data_dir, durability))

    @classmethod
    def from_config(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any],
        *,
        clock: Clock | None = None,
        **options: Unpack[BrokerOptions],
    ) -> Broker[Any]:
        """A broker with the queues a configuration declares: a TOML file's
        path (``[[queue]]`` tables of ``create_queue``'s keywords, see
        ``docs/console.md``) or the mapping its text parses to.

        Missing queues are created, dead-letter queues first; queues that
        exist (a durable ``data_dir`` opened again) are checked, and one that
        differs in an attribute, its FIFO flag or a tag raises
        :class:`~sqsqueue.ConfigError` naming it, with nothing changed. Every
        error names the file, the line and the reason, and is raised before the
        broker is returned (the file is first applied to a scratch broker in
        memory, so an attribute AWS would refuse never reaches a durable one).
        ``options`` are the constructor's; the leniencies on are those of
        ``lenient`` and of the file's ``lenient = [...]`` together. O(size of
        the file + queues).
        """
        return _from_config(config, clock, options)

    def _configure(self, plan: _config.Config) -> None:
        """Make a checked configuration's queues here (``from_config``'s second
        step, after :func:`rehearse_config`); remembered for :meth:`reset`.
        A failure closes the broker. An internal interface: ``sqsqueue serve``
        configures the broker of each account and region with it. O(queues)."""
        try:
            _config.apply(self, plan)
        except BaseException:
            self.close()
            raise
        self._config = plan

    def reset(self) -> None:
        """Forget every queue and move task, as a fresh broker would hold
        (a test run's clean slate), then make the queues of the configuration
        the broker was made from again (``from_config``), empty. Deleted names
        can be used again at once. The leniencies stay on and keep their
        counts. On a durable broker the deletions are stored too. O(q) for q
        queues (their messages are freed afterwards)."""
        with self._lock:
            self._check_open()
            now = self._now_us()
            for name, queue in list(self._queues.items()):
                del self._queues[name]
                queue._retire(now)
                if self._store is not None:
                    self._store.queue_deleted(name, now)
            self._deleted_at.clear()
            on_change = self._store.tasks_changed if self._store is not None else None
            self._moves = MoveTasks(
                self._by_arn, self._sources_of, self._rng, self._lock, on_change=on_change
            )
            self._moves._changed()
            if self._config is not None:
                _config.apply(self, self._config)

    @property
    def lenient(self) -> frozenset[str]:
        """The names of the AWS rules this broker relaxes (``Broker(lenient=...)``;
        empty: strict, the default). The queues it makes share them; a
        standalone ``Queue`` is always strict. ``docs/serving.md`` lists them."""
        return self._leniency.names

    def lenient_counts(self) -> dict[str, int]:
        """For each leniency on, how many requests it let through that AWS
        would have refused (0 until one did; ``{}`` for a strict broker). Counts
        belong to this broker in this process: ``reset`` keeps them, a data
        directory does not store them. O(number of leniencies)."""
        return self._leniency.counts()

    def _tally_into(self, tally: Leniency) -> None:
        """Count every request this broker's leniencies let through into
        ``tally`` too (which has the same names). An internal interface:
        ``mock_sqs`` sums the brokers it makes. O(1)."""
        if self._leniency is not STRICT:
            self._leniency.also = tally

    def metrics(self) -> dict[str, QueueMetrics]:
        """Every queue's CloudWatch metrics now, by queue name (see
        :class:`~sqsqueue.QueueMetrics`): counters since the queue was made in
        this process, exact gauges. O(q log n)."""
        with self._lock:
            self._check_open()
            return {name: queue.metrics() for name, queue in self._queues.items()}

    @property
    def data_dir(self) -> Path | None:
        """The directory a durable broker keeps its state in (None: in memory)."""
        return None if self._store is None else self._store.path

    def backup(self, destination: str | os.PathLike[str]) -> Path:
        """Back up a durable broker while it runs: ``destination`` (a new or
        empty directory) becomes a data directory holding the state after the
        last call that returned, which ``Broker(data_dir=destination)`` opens.

        It copies with SQLite's online backup under the broker's lock, so no
        call is half in the copy; calls wait while it copies (O(size of the
        store): about a second for a million messages). Raises
        :class:`~sqsqueue.errors.StorageError` for a broker in memory, a
        destination that is not empty or cannot be written.
        """
        _validate.instance("destination", destination, (str, os.PathLike), "a path")
        with self._lock:
            self._check_open()
            if self._store is None:
                raise StorageError(
                    "this broker keeps its state in memory (no data_dir): there is nothing "
                    "to back up"
                )
            return self._store.backup(destination)

    def __repr__(self) -> str:
        return f"Broker(region={self.region!r}, account_id={self.account_id!r})"

    def _now_us(self) -> int:
        return round(self.clock.now() * US)

    # -- shutdown -------------------------------------------------------------------

    def close(self) -> None:
        """Close the broker and every queue in it: blocked long polls return
        ``[]`` at once, and later calls (on the broker or any of its queues)
        raise :class:`~sqsqueue.errors.ServiceClosed` (a ServiceUnavailable,
        answered with a 400 that SDKs do not retry) instead of blocking.
        Idempotent; safe from any thread. O(q + w) for q queues and w polls.
        """
        lock = self._lock
        closer = threading.get_ident()
        if isinstance(lock, DurableLock):
            lock.closers.add(closer)  # closing runs even after a failed write stopped it
        try:
            self._close()
        finally:
            if isinstance(lock, DurableLock):
                lock.closers.discard(closer)

    def _close_with(self, other: Broker[Any]) -> None:
        """Close ``other`` when this broker closes (at once if it is closed
        already). An internal interface: ``mock_sqs`` ties the brokers it makes
        for other regions to the one it was given. O(1)."""
        with self._lock:
            closed = self._closed
            if not closed:
                self._followers.append(other)
        if closed:
            other.close()

    def _close(self) -> None:
        with self._lock:
            already = self._closed
            self._closed = True
            queues = list(self._queues.values())
        for queue in queues:
            queue.close()
        for follower in self._followers:
            follower.close()
        if self._store is not None and not already:
            with self._lock:
                store, self._store = self._store, None
                assert isinstance(self._lock, DurableLock)
                self._lock.store = None
                if store.dirty and store.failed is None:
                    store.commit()
                store.close()

    # closed, __enter__ and __exit__ as a queue has them: three lines each, not worth a base.
    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ServiceClosed("The broker is closed.")

    # -- naming -------------------------------------------------------------------

    def _by_arn(self, arn: str) -> _BaseQueue | None:
        match = _ARN.fullmatch(arn) if isinstance(arn, str) else None
        if match is None:
            return None
        region, account, name = match.groups()
        if region != self.region or account != self.account_id:
            return None
        queue: _BaseQueue | None = self._queues.get(name)
        return queue

    def _name_from(self, ref: object) -> str:
        """The queue name in a URL, ARN or bare name."""
        if not isinstance(ref, str) or not ref:
            raise QueueDoesNotExist()
        match = _ARN.fullmatch(ref)
        if match:
            region, account, name = match.groups()
            if region != self.region or account != self.account_id:
                raise QueueDoesNotExist()
            return name
        if "/" in ref:
            parts = ref.rstrip("/").split("/")
            if len(parts) < 2 or parts[-2] != self.account_id:
                raise QueueDoesNotExist()
            # AWS routes a request by the endpoint it reaches: a queue URL of
            # another region names no queue here, as an ARN of one does not.
            region = _url_region(ref)
            if region is not None and region != self.region:
                raise QueueDoesNotExist()
            return parts[-1]
        return ref  # a bare name (accepted by AWS, section 2.1; UNCONFIRMED)

    def get_queue(self, ref: str) -> Queue | FifoQueue:
        """The queue named by a URL, an ARN or a name. O(log q)."""
        self._check_open()
        name = self._names.get(ref) if type(ref) is str else None
        if name is None:
            name = self._name_from(ref)
            if len(self._names) >= _NAMES_KEPT:
                self._names.clear()
            self._names[ref] = name  # a str: _name_from refuses anything else
        with self._lock:
            queue = self._queues.get(name)
            if queue is None:
                raise QueueDoesNotExist()
            if self._moves._running:  # drive()'s own first test: no clock read for none
                self._drive(self._now_us())
            assert isinstance(queue, Queue | FifoQueue)
            return queue

    queue_for_url = get_queue

    def get_queue_url(
        self,
        name: str,
        *,
        queue_owner_account_id: str | None = None,
        principal: str | None = None,
    ) -> str:
        """GetQueueUrl. A queue of another account does not exist here. O(log q)."""
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,80}", name):
            raise QueueDoesNotExist()
        if queue_owner_account_id is not None and queue_owner_account_id != self.account_id:
            raise QueueDoesNotExist()
        queue = self.get_queue(name)
        queue._authorize(principal, "GetQueueUrl")
        return queue.url

    # -- create and delete ----------------------------------------------------------

    def create_queue(
        self,
        name: str,
        *,
        attributes: Mapping[str, object] | None = None,
        tags: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> Queue | FifoQueue:
        """CreateQueue: a :class:`Queue`, or a :class:`FifoQueue` when
        ``fifo_queue=True`` (or ``FifoQueue: "true"``) and the name ends ``.fifo``.

        Idempotent: with a name in use, returns the existing queue if every
        attribute given equals its current value, else raises QueueNameExists
        naming the first that differs (section 2.1). A name deleted less than 60
        seconds ago raises QueueDeletedRecently. O(log q).
        """
        requested: dict[str, object] = attribute_map(attributes)
        for key, value in kwargs.items():
            if value is not None:
                requested[key] = value
        fifo_raw = None
        for key in ("FifoQueue", "fifo_queue"):
            if key in requested:
                fifo_raw = requested[key]
        fifo = (
            fifo_raw is not None
            and _attributes.ATTRIBUTES["FifoQueue"].parse("FifoQueue", fifo_raw) is True
        )
        # The leniencies this request needs (each counted once it succeeds).
        relaxed: list[str] = []
        if fifo or (fifo_raw is not None and self._leniency.allows(_lenient.FIFO_QUEUE_FALSE)):
            # Otherwise FifoQueue=false stays in the request: a standard queue
            # refuses it with AWS's "Unknown Attribute FifoQueue." (section 2.1).
            requested = {k: v for k, v in requested.items() if k not in ("FifoQueue", "fifo_queue")}
            if not fifo:
                relaxed.append(_lenient.FIFO_QUEUE_FALSE)
        clean_tags = validate_tags(tags) if tags is not None else {}
        _validate.queue_name(name, fifo=fifo)
        with self._lock:  # a durable broker has stored the call when this returns
            queue = self._create(name, fifo, fifo_raw is not None, requested, clean_tags, relaxed)
        # Counted once the request succeeded: one that raised counts nothing.
        for relaxed_name in relaxed:
            self._leniency.count(relaxed_name)
        return queue

    def _create(
        self,
        name: str,
        fifo: bool,
        fifo_given: bool,
        requested: dict[str, object],
        tags: dict[str, str],
        relaxed: list[str],
    ) -> Queue | FifoQueue:
        """CreateQueue under the lock: the existing queue, or a new one.
        Appends to ``relaxed`` the leniencies the request needs."""
        self._check_open()
        now = self._now_us()
        self._drive(now)
        existing = self._queues.get(name)
        if existing is not None:
            self._check_same(existing, requested, fifo, fifo_given)
            assert isinstance(existing, Queue | FifoQueue)
            return existing
        deleted = self._deleted_at.get(name)
        if deleted is not None and now < deleted + RECREATE_INTERVAL * US:
            if not self._leniency.allows(_lenient.RECREATE_INTERVAL):
                raise QueueDeletedRecently()
            relaxed.append(_lenient.RECREATE_INTERVAL)
        queue = self._new_queue(name, fifo, requested)
        if tags:
            queue._set_tags(tags)
        self._queues[name] = queue
        self._deleted_at.pop(name, None)
        if self._store is not None:
            self._store.observe(queue)
            queue._queue_changed("settings")
        return queue

    def _new_queue(self, name: str, fifo: bool, requested: dict[str, object]) -> Queue | FifoQueue:
        cls: type[Queue] | type[FifoQueue] = FifoQueue if fifo else Queue
        queue = cls(
            name,
            clock=self.clock,
            attributes=requested,
            random=self._random,
            region=self.region,
            account_id=self.account_id,
            _lock=self._lock,
            _resolver=self._by_arn,
        )
        queue._tick = self._drive
        queue._next_tick = self._next_move
        queue._leniency = self._leniency
        queue.keep_history = self.keep_history
        if isinstance(queue, Queue) and self.faults is not None:
            queue.faults = self.faults
        return queue

    def _check_same(
        self, queue: _BaseQueue, requested: dict[str, object], fifo: bool, fifo_given: bool
    ) -> None:
        if fifo_given and fifo != queue.FIFO:
            raise QueueNameExists(
                "A queue already exists with the same name and a different value for "
                "attribute FifoQueue"
            )
        parsed = _attributes.parse(requested, fifo=queue.FIFO, creating=True, current=queue._values)
        # Compare what the request would make of the queue, SSE switches applied:
        # KmsMasterKeyId "" means "no KMS key", which a queue created with it has.
        effective = {**queue._values, **parsed}
        _attributes.apply_sse(effective, parsed)
        for attr_name in parsed:
            if queue._values.get(attr_name) != effective.get(attr_name):
                raise QueueNameExists(
                    "A queue already exists with the same name and a different value "
                    f"for attribute {attr_name}"
                )

    def delete_queue(self, ref: str, *, principal: str | None = None) -> None:
        """DeleteQueue: the queue and its messages go at once; the name can be
        reused after 60 seconds. Old references raise QueueDoesNotExist. O(log q).
        """
        queue = self.get_queue(ref)
        queue._authorize(principal, "DeleteQueue")
        with self._lock:
            now = self._now_us()
            del self._queues[queue.name]
            self._deleted_at[queue.name] = now
            queue._retire(now)
            if self._store is not None:
                self._store.queue_deleted(queue.name, now)

    # -- listing --------------------------------------------------------------------

    def list_queues(
        self,
        prefix: str | None = None,
        *,
        max_results: int | None = None,
        next_token: str | None = None,
    ) -> ListQueuesResult:
        """ListQueues: URLs in name order, optionally by prefix (case-sensitive).

        Without ``max_results`` at most 1,000 URLs and no token; with it, a page
        of 1..1000 and a ``next_token`` when more remain (section 2.1).
        O(log q + page).
        """
        if prefix is not None and not isinstance(prefix, str):
            raise InvalidParameterValue(
                f"Value {show(prefix)} for parameter QueueNamePrefix is invalid. "
                "Reason: must be a string."
            )
        with self._lock:
            self._check_open()
            self._drive(self._now_us())
            if next_token is not None:
                after = _decode_token(next_token)
                names = self._queues.irange(minimum=after, inclusive=(False, True))
            else:
                names = self._queues.irange(minimum=prefix or None)
            return _page(names, prefix, max_results, lambda n: self._queues[n].url)

    def list_dead_letter_source_queues(
        self,
        ref: str,
        *,
        max_results: int | None = None,
        next_token: str | None = None,
        principal: str | None = None,
    ) -> ListQueuesResult:
        """ListDeadLetterSourceQueues: queues whose RedrivePolicy targets ``ref``.

        O(q) in the number of queues (never in messages).
        """
        target = self.get_queue(ref)
        target._authorize(principal, "ListDeadLetterSourceQueues")
        with self._lock:
            sources = self._sources_of(target.arn)
            start = _decode_token(next_token) if next_token is not None else None
            names = (n for n in sources if start is None or n > start)
            return _page(names, None, max_results, lambda n: self._queues[n].url)

    def _sources_of(self, arn: str) -> list[str]:
        out = []
        for name, queue in self._queues.items():
            policy = queue._values.get("RedrivePolicy")
            if isinstance(policy, dict) and policy["deadLetterTargetArn"] == arn:
                out.append(name)
        return out

    # -- tags and permissions (delegated to the queue) -------------------------------

    def tag_queue(self, ref: str, tags: Mapping[str, str], *, principal: str | None = None) -> None:
        """TagQueue."""
        self.get_queue(ref).tag(tags, principal=principal)

    def untag_queue(self, ref: str, keys: list[str], *, principal: str | None = None) -> None:
        """UntagQueue."""
        self.get_queue(ref).untag(keys, principal=principal)

    def list_queue_tags(self, ref: str, *, principal: str | None = None) -> dict[str, str]:
        """ListQueueTags."""
        return self.get_queue(ref).list_tags(principal=principal)

    def add_permission(
        self,
        ref: str,
        label: str,
        account_ids: list[str],
        actions: list[str],
        *,
        principal: str | None = None,
    ) -> None:
        """AddPermission."""
        self.get_queue(ref).add_permission(label, account_ids, actions, principal=principal)

    def remove_permission(self, ref: str, label: str, *, principal: str | None = None) -> None:
        """RemovePermission."""
        self.get_queue(ref).remove_permission(label, principal=principal)

    # -- message move tasks (section 11) ---------------------------------------------

    def _authorize_source(self, source_arn: object, principal: str | None, action: str) -> None:
        """A move-task action on another account's behalf needs the source
        queue's policy to grant it; an unknown source is left to the task
        rules (ResourceNotFoundException). Call without the lock held."""
        if principal is None or not isinstance(source_arn, str):
            return
        with self._lock:
            source = self._by_arn(source_arn)
        if source is not None:
            source._authorize(principal, action)

    def start_message_move_task(
        self,
        source_arn: str,
        *,
        destination_arn: str | None = None,
        max_number_of_messages_per_second: int | None = None,
        principal: str | None = None,
    ) -> str:
        """StartMessageMoveTask: move a DLQ's messages back to their source
        queues (or to ``destination_arn``), optionally at most ``rate`` per second
        of the broker's clock. Returns the task handle.

        Moved messages are new messages: new id, new enqueue time. O(log q);
        the moving itself happens lazily, O(k log n) for k messages moved
        (``_deadletter.MoveTasks``). ``principal`` (an account id) other than
        the broker's needs the source queue's policy to allow the action.
        """
        self._authorize_source(source_arn, principal, "StartMessageMoveTask")
        with self._lock:
            self._check_open()
            now = self._now_us()
            self._drive(now)
            return self._moves.start(
                now, source_arn, destination_arn, max_number_of_messages_per_second
            )

    def list_message_move_tasks(
        self, source_arn: str, *, max_results: int | None = None, principal: str | None = None
    ) -> list[dict[str, object]]:
        """ListMessageMoveTasks: the most recent tasks first, 1..10 (default 1)."""
        self._authorize_source(source_arn, principal, "ListMessageMoveTasks")
        with self._lock:
            self._check_open()
            self._drive(self._now_us())
            return self._moves.list(source_arn, max_results)

    def cancel_message_move_task(self, task_handle: str, *, principal: str | None = None) -> int:
        """CancelMessageMoveTask: stop a running task; moved messages stay moved.
        Returns the number of messages moved."""
        task_id, source_arn = parse_task_handle(task_handle)
        self._authorize_source(source_arn, principal, "CancelMessageMoveTask")
        with self._lock:
            self._check_open()
            self._drive(self._now_us())
            return self._moves.cancel(task_id, source_arn)

    def _drive(self, now: int) -> None:
        """Advance every running move task to ``now`` (called by every operation)."""
        self._moves.drive(now)

    def _next_move(self, now: int) -> int | None:
        return self._moves.next_move(now)

    def client(self, *, principal: str | None = None, endpoint_url: str | None = None) -> SQSClient:
        """A boto3-shaped client over this broker that needs no boto3: same
        method names, parameters and response dicts, raising
        :mod:`sqsqueue.errors` exceptions. ``endpoint_url`` makes the queue
        URLs it answers with point at an HTTP endpoint serving this broker."""
        # A documented lazy import: the client is an adapter above the broker
        # (docs/architecture.md); importing it here would make a cycle.
        from sqsqueue.aws._client import Client

        return Client(self, principal=principal, endpoint_url=endpoint_url)

    def serve(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        credentials: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> ServedEndpoint:
        """Serve this broker as an SQS endpoint over HTTP from a background thread.

        Needs the ``sqsqueue[server]`` extra (uvicorn). Returns a handle with
        ``.endpoint_url`` (``http://127.0.0.1:<port>``; port 0 picks a free one)
        and ``.close()``, usable as a context manager; the process keeps using
        the broker natively meanwhile. ``credentials`` (``{access_key_id:
        secret}``) turns on Signature V4 verification; a non-loopback ``host``
        is refused without them unless ``allow_anonymous=True``. Beside SQS it
        serves health, reset (``allow_reset`` for a durable broker), LocalStack's
        peek, ``/metrics`` and the web console (``console``; on by default for
        a loopback address, at ``handle.console_url``: ``docs/console.md``).
        Other options are those of :func:`sqsqueue.server.serve`. Starting costs one thread
        and one listening socket; each request costs what its operation costs.
        """
        self._check_open()  # a closed broker would answer every request ServiceClosed
        # A documented lazy import, as in client(): the server is an adapter
        # and an optional extra.
        from sqsqueue.server._run import serve

        return serve(self, host=host, port=port, credentials=credentials, **options)

    def __contains__(self, ref: object) -> bool:
        try:
            name = self._name_from(ref)
        except QueueDoesNotExist:
            return False
        with self._lock:
            return name in self._queues

    def __iter__(self) -> Any:
        with self._lock:
            return iter(list(self._queues.values()))

    def __len__(self) -> int:
        with self._lock:
            return len(self._queues)


def _open(broker: Broker[Any], store: Store) -> None:
    """Make a broker being made durable: its lock, its move tasks and its
    queues restored from ``store`` (writing nothing); a store that cannot be
    read is closed and the error raised, with nothing changed."""
    lock = DurableLock()
    broker._lock = lock
    broker._moves = MoveTasks(
        broker._by_arn, broker._sources_of, broker._rng, lock, on_change=store.tasks_changed
    )
    try:
        store.check_identity(broker.account_id, broker.region)
        now = broker._now_us()
        broker._deleted_at = store.load_deleted()
        for name, fifo, state in store.load_queues():
            queue = broker._new_queue(name, fifo, {})
            store.restore(queue, state, now)
            broker._queues[name] = queue
            store.observe(queue)
        broker._moves.restore(store.load_tasks())
        store.prune(now)  # only once everything read back: a refused file stays as it was
    except SQSError:
        store.close()
        raise
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        # A row this code cannot have written (edited by hand, or damaged in a
        # way SQLite's check does not see): refuse, name the file, change nothing.
        store.close()
        raise StorageError(
            f"{store.file} holds data this sqsqueue cannot read ({type(exc).__name__}: "
            f"{exc}); nothing was changed"
        ) from None
    except BaseException:
        store.close()
        raise
    broker._store = store
    store.now = broker._now_us
    store.pruned_at = broker._now_us()  # opening pruned
    lock.store = store


def _from_config(
    config: str | os.PathLike[str] | Mapping[str, Any],
    clock: Clock | None,
    options: BrokerOptions,
) -> Broker[Any]:
    """:meth:`Broker.from_config`: the file checked on a scratch broker, then
    applied to the broker made."""
    names = _lenient_names(options.pop("lenient", None))
    plan = _config.load(config)
    names |= plan.lenient
    region = options.get("region", "us-east-1")
    account = options.get("account_id") or _validate.default_account_id()
    groups = _config.split(plan, account, region)
    for (other_account, other_region), other in groups.items():
        if other.queues and (other_account, other_region) != (account, region):
            raise _config.ConfigError(
                f"{plan.where(other.queues[0])}: queue {other.queues[0].name!r} is in "
                f"account {other_account}, region {other_region}: a Broker holds one "
                f"account and region ({account}, {region}); sqsqueue serve holds every one"
            )
    own = groups[(account, region)]
    rehearse_config(own, account, region, lenient=names)
    options["lenient"] = names
    broker: Broker[Any] = Broker(clock=clock, **options)
    broker._configure(own)
    return broker


def _lenient_names(value: object) -> frozenset[str]:
    """``Broker(lenient=...)`` checked: the names, or InvalidParameterValue (a
    ValueError) saying why not, as for the constructor's other keywords."""
    try:
        return parse_lenient(value)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise InvalidParameterValue(
            f"Value {show(value)} for parameter lenient is invalid. Reason: {exc}."
        ) from None


def _decode_token(token: object) -> str:
    # No asserts here: ``python -O`` strips them, and this is input validation.
    try:
        if not isinstance(token, str):
            raise TypeError
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
        after = decoded["after"]
        if not isinstance(after, str):
            raise TypeError
        return after
    except (ValueError, KeyError, TypeError, binascii.Error, RecursionError):
        raise InvalidParameterValue("Invalid NextToken value.") from None


def _encode_token(name: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": name}).encode()).decode()


def _page(names: Any, prefix: str | None, max_results: object, url: Any) -> ListQueuesResult:
    if max_results is not None:
        limit = _validate.integer(
            "MaxResults",
            max_results,
            1,
            LIST_RESULTS_MAX,
            f"MaxResults must be an integer between 1 and {LIST_RESULTS_MAX}.",
        )
    else:
        limit = LIST_RESULTS_MAX
    urls: list[str] = []
    last = None
    more = False
    for name in names:
        if prefix and not name.startswith(prefix):
            break
        if len(urls) == limit:
            more = True
            break
        urls.append(url(name))
        last = name
    token = _encode_token(last) if more and max_results is not None and last else None
    return ListQueuesResult(tuple(urls), token)
