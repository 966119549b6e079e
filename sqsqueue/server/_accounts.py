"""Every account and region in one served endpoint (``sqsqueue serve``).

LocalStack's convention, which stacks that test cross-account delivery or
several regions rely on: a request's **account** is its access key id when
that is 12 digits (with ``--credentials``, the account the file names for the
key), otherwise the server's default account; its **region** is the one its
Signature V4 credential scope names, otherwise the server's default region.
Each (account, region) has its own :class:`~sqsqueue.Broker`, as each has its
own queues on AWS, made by the first CreateQueue there (a lookup never makes
one: a request naming an account nobody created queues in finds none).

**Queue URLs.** The default region's queues keep the URL they always had,
``http://<host>/<account>/<name>``; another region's say which:
``http://<host>/queue/<region>/<account>/<name>`` (LocalStack's path form). A
request reaches the queue a URL or ARN names: a URL without a region names
the request's region, as an AWS URL is answered by the regional endpoint the
request reached; AWS-style URLs (``sqs.<region>.amazonaws.com``) and ARNs name
theirs. So every URL handed out keeps working, and a single-region server
answers exactly as before.

**Cross-account.** A call on another account's queue reaches that account's
broker with the caller's account as principal: the queue's policy decides
(AddPermission, a ``Policy`` attribute), ``AccessDenied`` otherwise.
Account-level actions (CreateQueue, ListQueues) act in the caller's own
account. A redrive policy or a move task naming a queue of another account
is refused as AWS refuses it (the engine finds no such queue in the
source's account).

**Durability.** With a data directory the default (account, region) keeps the
directory itself, so a directory written by a single-account server opens
unchanged; every other one is kept in ``<data dir>/accounts/<account>/<region>``
and reopened at start.

Cost: routing a queue reference is O(len(ref)) string work and one dict
look-up; while a single (account, region) exists it is skipped entirely.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sqsqueue._broker import Broker, ListQueuesResult, _url_region
from sqsqueue._deadletter import parse_task_handle
from sqsqueue._fifo import FifoQueue
from sqsqueue._standard import Queue
from sqsqueue.errors import QueueDoesNotExist
from sqsqueue.server._app import caller_scope, credential_of

__all__ = ["ACCOUNTS_DIR", "Accounts", "Caller"]

#: The callers (account, region pairs) whose broker interface is kept made.
MAX_CALLERS = 10_000
#: The queue references whose broker is remembered (:meth:`Accounts.route`).
MAX_ROUTES = 10_000
#: Where a durable server keeps the (account, region)s other than its default.
ACCOUNTS_DIR = "accounts"

_ACCOUNT = re.compile(r"[0-9]{12}")
_REGION = re.compile(r"[a-z0-9-]{1,32}")


class Accounts:
    """The brokers of one served endpoint, one per (account, region), made on
    first use like ``default`` (its clock, history setting, leniencies, and
    data directory layout: see the module docstring). Thread-safe."""

    def __init__(self, default: Broker[Any], *, durability: str = "process") -> None:
        self.default = default
        self.durability = durability
        self._brokers: dict[tuple[str, str], Broker[Any]] = {
            (default.account_id, default.region): default
        }
        self._callers: dict[tuple[str, str], Caller] = {}
        #: What Accounts.anonymous found per credential text, with the number of
        #: brokers it was found with (a new broker may change the answer).
        self._anonymous: dict[str, tuple[int, tuple[Caller, str | None, str]]] = {}
        #: The broker each (queue reference, request region) was routed to.
        self._routes: dict[tuple[str, str], Broker[Any]] = {}
        self._lock = threading.Lock()
        data_dir = default.data_dir
        if data_dir is not None:
            root = Path(data_dir) / ACCOUNTS_DIR
            for path in sorted(root.glob("*/*")) if root.is_dir() else ():
                account, region = path.parent.name, path.name
                if _ACCOUNT.fullmatch(account) and _REGION.fullmatch(region):
                    self.broker_for(account, region)

    @property
    def single(self) -> bool:
        """Whether only the default (account, region) exists. O(1)."""
        return len(self._brokers) == 1

    def get(self, account: str, region: str) -> Broker[Any] | None:
        """The broker of ``account`` in ``region``, None if none was made. O(1)."""
        return self._brokers.get((account, region))

    def broker_for(self, account: str, region: str) -> Broker[Any]:
        """The broker of ``account`` in ``region``, made on first use. O(1),
        plus opening its data directory the first time."""
        # Near-copy of mock_sqs's _State.broker_for on purpose: a mock's brokers
        # have no data directory and follow MOTO_ACCOUNT_ID; these keep the layout.
        key = (account, region)
        broker = self._brokers.get(key)  # made once, then only read: no lock
        if broker is not None:
            return broker
        with self._lock:
            broker = self._brokers.get(key)
            if broker is None:
                default = self.default
                data_dir = default.data_dir
                broker = Broker(
                    clock=default.clock,
                    region=region,
                    account_id=account,
                    keep_history=default.keep_history,
                    data_dir=None
                    if data_dir is None
                    else Path(data_dir) / ACCOUNTS_DIR / account / region,
                    durability=self.durability,
                    lenient=default.lenient,
                )
                default._close_with(broker)
                self._brokers = {**self._brokers, key: broker}  # readers never lock
        return broker

    def __iter__(self) -> Iterator[Broker[Any]]:
        """Every broker, the default first, then by (account, region)."""
        brokers = self._brokers
        yield self.default
        for key in sorted(brokers):
            if brokers[key] is not self.default:
                yield brokers[key]

    def lenient_counts(self) -> dict[str, int]:
        """The requests each leniency let through, over every account and
        region (``Broker.lenient_counts``). O(brokers)."""
        total: dict[str, int] = {}
        for broker in self:
            for name, count in broker.lenient_counts().items():
                total[name] = total.get(name, 0) + count
        return total

    def anonymous(self, authorization: str | None) -> tuple[Caller, str | None, str]:
        """For a request without verified credentials: the broker interface of
        its caller, the principal its calls carry (None while the one broker
        is the caller's own) and its region, from its Authorization header
        (see the module docstring). Remembered per credential text until a
        broker is made (bounded). O(len(header))."""
        credential = credential_of(authorization)
        made = len(self._brokers)
        hit = self._anonymous.get(credential)
        if hit is not None and hit[0] == made:
            return hit[1]
        default = self.default
        account, region = default.account_id, default.region
        signed = caller_scope(authorization)
        if signed is not None:
            region = signed[1]
            if _ACCOUNT.fullmatch(signed[0]):
                account = signed[0]
        found = (*self.acting(account, region), region)
        if len(self._anonymous) >= MAX_CALLERS:
            self._anonymous.clear()
        self._anonymous[credential] = (made, found)
        return found

    def acting(self, account: str, region: str) -> tuple[Caller, str | None]:
        """The broker interface of a request by ``account`` in ``region`` and
        the principal its calls carry: None while the one broker is the
        caller's own (no policy to check), else the caller's account. O(1)."""
        default = self.default
        own = self.single and account == default.account_id and region == default.region
        return self.caller(account, region), None if own else account

    def caller(self, account: str, region: str) -> Caller:
        """The broker interface of a request by ``account`` in ``region``
        (cached: one per pair seen). O(1)."""
        key = (account, region)
        caller = self._callers.get(key)
        if caller is None:
            if len(self._callers) >= MAX_CALLERS:
                # Anonymous requests may name any 12-digit key: the cache stays bounded.
                self._callers.clear()
            caller = self._callers[key] = Caller(self, account, region)
        return caller

    def route(self, ref: object, region: str) -> Broker[Any]:
        """The broker holding the queue a URL or ARN names (a request in
        ``region``); raises QueueDoesNotExist when no broker holds that
        (account, region). A bare name is the caller's: routed by
        :class:`Caller`. O(len(ref))."""
        if not isinstance(ref, str) or not ref:
            raise QueueDoesNotExist()
        # Clients send the same queue URLs again and again: each is read once.
        routed = self._routes.get((ref, region))
        if routed is not None:
            return routed
        if ref.startswith("arn:"):
            parts = ref.split(":")
            if len(parts) != 6:
                raise QueueDoesNotExist()
            key = (parts[4], parts[3])
        else:
            parts = ref.rstrip("/").split("/")
            if len(parts) < 3:
                raise QueueDoesNotExist()
            if len(parts) >= 7 and parts[-4] == "queue":
                key = (parts[-2], parts[-3])  # <endpoint>/queue/<region>/<account>/<name>
            else:
                key = (parts[-2], _url_region(ref) or region)
        broker = self._brokers.get(key)
        if broker is None:
            raise QueueDoesNotExist()  # not remembered: the broker may be made later
        if len(self._routes) >= MAX_ROUTES:
            self._routes.clear()  # bounded: any client may send any URL
        self._routes[(ref, region)] = broker
        return broker


class Caller:
    """:class:`~sqsqueue.aws._client.BrokerAPI` for the requests of one
    (account, region): account-level actions in the caller's own broker,
    queue-level ones in the broker the queue URL or ARN names. The Client's
    principal (the caller's account) is what queue policies check."""

    __slots__ = ("_accounts", "account_id", "region")

    def __init__(self, accounts: Accounts, account_id: str, region: str) -> None:
        self._accounts = accounts
        self.account_id = account_id
        self.region = region

    def _own(self) -> Broker[Any] | None:
        return self._accounts.get(self.account_id, self.region)

    def _route(self, ref: str) -> Broker[Any]:
        accounts = self._accounts
        if accounts.single:
            return accounts.default  # the broker answers every reference itself
        if isinstance(ref, str) and "/" not in ref and not ref.startswith("arn:"):
            own = self._own()  # a bare queue name: the caller's own queue
            if own is None:
                raise QueueDoesNotExist()
            return own
        return accounts.route(ref, self.region)

    def get_queue(self, ref: str) -> Queue | FifoQueue:
        """The queue a URL, ARN or name refers to. O(len(ref)) + the broker's O(log q)."""
        accounts = self._accounts
        if len(accounts._brokers) == 1:  # the hot path of a single (account, region)
            return accounts.default.get_queue(ref)
        routed = accounts._routes.get((ref, self.region))  # a URL seen before
        if routed is not None:
            return routed.get_queue(ref)
        return self._route(ref).get_queue(ref)

    def get_queue_url(
        self,
        name: str,
        *,
        queue_owner_account_id: str | None = None,
        principal: str | None = None,
    ) -> str:
        """GetQueueUrl in the caller's region, of the owner's account when given."""
        owner = self.account_id if queue_owner_account_id is None else queue_owner_account_id
        broker = self._accounts.get(owner, self.region)
        if broker is None:
            raise QueueDoesNotExist()
        return broker.get_queue_url(
            name, queue_owner_account_id=queue_owner_account_id, principal=principal
        )

    def create_queue(
        self,
        name: str,
        *,
        attributes: Mapping[str, object] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> Queue | FifoQueue:
        """CreateQueue in the caller's own account and region (its broker made now)."""
        broker = self._accounts.broker_for(self.account_id, self.region)
        return broker.create_queue(name, attributes=attributes, tags=tags)

    def delete_queue(self, ref: str, *, principal: str | None = None) -> None:
        self._route(ref).delete_queue(ref, principal=principal)

    def list_queues(
        self,
        prefix: str | None = None,
        *,
        max_results: int | None = None,
        next_token: str | None = None,
    ) -> ListQueuesResult:
        """ListQueues of the caller's own account and region."""
        own = self._own()
        if own is None:
            # Validated as a broker would, by an empty one.
            own = _empty()
        return own.list_queues(prefix, max_results=max_results, next_token=next_token)

    def list_dead_letter_source_queues(
        self,
        ref: str,
        *,
        max_results: int | None = None,
        next_token: str | None = None,
        principal: str | None = None,
    ) -> ListQueuesResult:
        return self._route(ref).list_dead_letter_source_queues(
            ref, max_results=max_results, next_token=next_token, principal=principal
        )

    def start_message_move_task(
        self,
        source_arn: str,
        *,
        destination_arn: str | None = None,
        max_number_of_messages_per_second: int | None = None,
        principal: str | None = None,
    ) -> str:
        return self._route(source_arn).start_message_move_task(
            source_arn,
            destination_arn=destination_arn,
            max_number_of_messages_per_second=max_number_of_messages_per_second,
            principal=principal,
        )

    def list_message_move_tasks(
        self, source_arn: str, *, max_results: int | None = None, principal: str | None = None
    ) -> list[dict[str, object]]:
        return self._route(source_arn).list_message_move_tasks(
            source_arn, max_results=max_results, principal=principal
        )

    def cancel_message_move_task(self, task_handle: str, *, principal: str | None = None) -> int:
        _task_id, source_arn = parse_task_handle(task_handle)
        return self._route(source_arn).cancel_message_move_task(task_handle, principal=principal)


@functools.cache
def _empty() -> Broker[Any]:
    """ListQueues' answer in an (account, region) with no queues: a broker that
    is never written, so its validation of the parameters is the real one."""
    return Broker(account_id="000000000000")
