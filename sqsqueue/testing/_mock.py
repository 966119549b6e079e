"""``mock_sqs``: real boto3 and aiobotocore code talks to a Broker, in process.

How requests reach the broker (botocore's handlers) is :mod:`sqsqueue.testing._hooks`;
how moto's other services reach it is :mod:`sqsqueue.moto`; this module is the
mock object users hold, used in every form moto's ``mock_aws`` is:

* a decorator, bare (``@mock_sqs``) or called (``@mock_sqs()``,
  ``@mock_sqs(broker)``), on functions, coroutine functions, generator
  functions (pytest fixtures), methods and classes;
* a context manager (``with mock_sqs() as mock``: the mock, as ``mock_aws``
  gives), or ``start()``/``stop()``.

**State.** A mock made without a broker starts from nothing at every start:
each decorated call, each ``with``, each outermost ``start()`` gets fresh
brokers (one per account and region asked for, on one clock); ``reset()``
empties them mid-test. A start while the same mock is already active joins
the active state (a decorated helper called from a decorated test, a test
method called inside ``setUp``'s mock). A mock given a broker always serves
that broker.

**Classes**, as moto's class decorator: every ``test*`` method is wrapped. A
``unittest.TestCase`` runs each test (``setUp``, the test, ``tearDown``, its
cleanups) inside one fresh state, by wrapping ``run``, which both unittest and
pytest call; a plain pytest class gets the same from ``setup_method`` to
``teardown_method`` (added when the class has none). ``setUpClass`` /
``tearDownClass`` and ``setup_class`` / ``teardown_class`` run inside the mock
too, on a state of their own that lasts from the first to the second: a test
never sees it. A failing test method stays a failing test (nothing is swallowed
and the class stays a class).

**Leniencies.** ``mock_sqs(lenient="purge-interval")`` gives every broker the
mock makes (every account and region, every fresh state, after ``reset()``)
those leniencies; ``mock.lenient_counts()`` sums what they let through over
every broker the mock has made or served. A mock given a broker uses that
broker's own leniencies (``Broker(lenient=...)``), and refuses ``lenient=``
besides.

**Account.** A mock's own brokers are in the default account
(``MOTO_ACCOUNT_ID`` when set, else moto's 123456789012), read at each request
as moto reads it, so a test that switches ``MOTO_ACCOUNT_ID`` switches
accounts; a mock given a broker answers as that broker's account.
"""

from __future__ import annotations

import functools
import inspect
import threading
import unittest
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any, TypeVar

from sqsqueue import _validate
from sqsqueue import moto as bridge
from sqsqueue._broker import Broker
from sqsqueue._lenient import Leniency, parse_lenient
from sqsqueue.aws._client import Client
from sqsqueue.testing import _hooks

__all__ = ["MockAWS", "MockSQS", "mock_aws", "mock_sqs"]

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class _State:
    """One state of a mock: its brokers by (account, region), on one clock."""

    def __init__(self, main: Broker[Any], follows_env: bool, tally: Leniency) -> None:
        self.main = main
        #: Whether requests go to the account MOTO_ACCOUNT_ID names at the time.
        self.follows_env = follows_env
        #: The mock's count of what leniencies let through, over its brokers.
        self.tally = tally
        self._brokers: dict[tuple[str, str], Broker[Any]] = {(main.account_id, main.region): main}
        self._lock = threading.Lock()

    def broker_for(self, account: str, region: str) -> Broker[Any]:
        """The broker of ``account`` in ``region``, made on first use (same
        clock, history setting and leniencies as the main one; closed with it).
        O(1)."""
        key = (account, region)
        broker = self._brokers.get(key)  # made once, then only read: no lock
        if broker is not None:
            return broker
        with self._lock:
            broker = self._brokers.get(key)
            if broker is None:
                broker = self._brokers[key] = Broker(
                    clock=self.main.clock,
                    region=region,
                    account_id=account,
                    keep_history=self.main.keep_history,
                    lenient=self.main.lenient,
                )
                broker._tally_into(self.tally)
                # Closing the mock's broker closes the brokers of every region.
                self.main._close_with(broker)
        return broker

    def account(self) -> str:
        return _validate.default_account_id() if self.follows_env else self.main.account_id


class MockSQS:
    """Serve SQS requests from a :class:`~sqsqueue.Broker` while active (see
    the module docstring for every form and for its state)."""

    def __init__(
        self, broker: Broker[Any] | None = None, *, lenient: str | Iterable[str] | None = None
    ) -> None:
        if broker is not None and not isinstance(broker, Broker):
            raise TypeError(f"mock_sqs takes a Broker, not {type(broker).__name__}")
        if broker is not None and lenient is not None:
            raise TypeError(
                "mock_sqs(broker, lenient=...): a mock given a broker serves it with the "
                "broker's own leniencies; make it with Broker(lenient=...) instead"
            )
        names = parse_lenient(lenient) if broker is None else broker.lenient
        #: The leniencies of the brokers this mock makes.
        self._lenient = names
        #: What they let through, over every broker the mock made (not a given one).
        self._tally = Leniency(names)
        self._given = broker
        self._lock = threading.RLock()
        self._depth = 0
        self._state: _State | None = None  # the last test-level state
        self._state_used = False
        #: The state requests are served from now (a class hook's, or the test's).
        self._serving: _State | None = None

    # -- state ------------------------------------------------------------------

    def _new_state(self) -> _State:
        if self._given is not None:
            return _State(self._given, follows_env=False, tally=self._tally)
        return self._fresh(None)

    def _fresh(self, clock: Any) -> _State:
        """A state of the mock's own: a new broker with its leniencies."""
        broker: Broker[Any] = Broker(clock=clock, lenient=self._lenient)
        broker._tally_into(self._tally)
        return _State(broker, follows_env=True, tally=self._tally)

    def _current(self) -> _State:
        serving = self._serving  # while active (every request): no lock
        if serving is not None:
            return serving
        with self._lock:
            if self._serving is not None:
                return self._serving
            if self._state is None:
                self._state = self._new_state()
            return self._state

    @property
    def broker(self) -> Broker[Any]:
        """The broker being served (the given one, or this state's broker of the
        default account and region); after ``stop()``, the last one served."""
        return self._current().main

    def broker_for(self, account: str, region: str) -> Broker[Any]:
        """The broker serving ``account`` in ``region`` in the current state
        (moto's other services deliver there); made on first use."""
        return self._current().broker_for(account, region)

    @property
    def lenient(self) -> frozenset[str]:
        """The leniencies of the brokers served (``mock_sqs(lenient=...)``, or
        the given broker's own)."""
        return self._lenient

    def lenient_counts(self) -> dict[str, int]:
        """For each leniency on, the requests it let through that AWS would
        have refused, summed over every broker this mock has made (every
        state, account and region, before and after ``reset()``) and the broker
        it was given; ``{}`` when it is strict. O(number of leniencies)."""
        counts = self._tally.counts()
        if self._given is not None:
            for name, count in self._given.lenient_counts().items():
                counts[name] += count
        return counts

    def client_for(self, region: str | None) -> Client:
        """The dict-level client a request to ``region`` is answered by."""
        state = self._current()
        account = state.account()
        bridge.seen(account)
        return bridge.client(state.broker_for(account, region or state.main.region))

    def reset(self) -> None:
        """Forget every queue: this mock's state starts again from nothing (its
        brokers are replaced by fresh ones on the same clock, with the same
        leniencies; their counts so far stay in :meth:`lenient_counts`). A mock given a
        broker cannot: it raises :class:`RuntimeError` (make a new Broker)."""
        if self._given is not None:
            raise RuntimeError(
                "reset() replaces a mock's own brokers; this mock serves the broker it "
                "was given (mock_sqs(broker)): create a new Broker instead"
            )
        with self._lock:
            current = self._current()
            fresh = self._fresh(current.main.clock)
            if current is self._state:
                self._state = fresh
            if self._serving is current:
                self._serving = fresh

    # -- activation -------------------------------------------------------------

    def start(self) -> MockSQS:
        """Serve until :meth:`stop`: the outermost start begins a fresh state
        (for a mock of its own brokers), a nested one joins it. Returns the mock."""
        with self._lock:
            self._depth += 1
            if self._depth > 1:
                return self
            if self._state is None or (self._state_used and self._given is None):
                self._state = self._new_state()
            self._state_used = True
            self._serving = self._state
        self._activate()
        return self

    def stop(self) -> None:
        """End one :meth:`start`; the last one stops serving (the state is kept
        for inspection until the next start). Stopping a mock not started does
        nothing."""
        with self._lock:
            if self._depth == 0:
                return
            self._depth -= 1
            if self._depth:
                return
            self._serving = None
        self._deactivate()

    def _activate(self) -> None:
        _hooks.activate(self)
        bridge.activate(self)

    def _deactivate(self) -> None:
        bridge.deactivate(self)
        _hooks.deactivate(self)

    def __enter__(self) -> MockSQS:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- decorating -------------------------------------------------------------

    def __call__(self, target: F) -> F:
        if inspect.isclass(target):
            return self._decorate_class(target)  # type: ignore[return-value]
        return self._decorate_callable(target)

    def _decorate_callable(self, func: F) -> F:
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return await func(*args, **kwargs)

            return async_wrapper  # type: ignore[return-value]

        if inspect.isasyncgenfunction(func):

            @functools.wraps(func)
            async def async_gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                with self:
                    async for item in func(*args, **kwargs):
                        yield item

            return async_gen_wrapper  # type: ignore[return-value]

        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return (yield from func(*args, **kwargs))

            return gen_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _decorate_class(self, klass: type[T]) -> type[T]:
        is_case = issubclass(klass, unittest.TestCase)
        for name in dir(klass):
            if not name.startswith("test"):
                continue
            raw = inspect.getattr_static(klass, name)
            if isinstance(raw, staticmethod):
                setattr(klass, name, staticmethod(self._decorate_callable(raw.__func__)))
            elif inspect.isfunction(raw):
                setattr(klass, name, self._decorate_callable(raw))
        if is_case:
            # unittest and pytest both run a TestCase through run(): setUp, the
            # test, tearDown and cleanups in one state.
            for name in ("run", "debug"):
                setattr(klass, name, self._decorate_callable(getattr(klass, name)))
            class_hooks = ("setUpClass", "tearDownClass")
        else:
            self._wrap_method_hooks(klass)
            class_hooks = ("setup_class", "teardown_class")
        self._wrap_class_hooks(klass, *class_hooks)
        return klass

    def _wrap_method_hooks(self, klass: type) -> None:
        """pytest's ``setup_method`` starts the test's state, ``teardown_method``
        (pytest calls it whenever setup_method succeeded) stops it."""
        setup = getattr(klass, "setup_method", None)
        teardown = getattr(klass, "teardown_method", None)

        def setup_method(instance: Any, method: Any = None) -> None:
            self.start()
            try:
                if setup is not None:
                    _call_optional(setup, instance, method)
            except BaseException:
                self.stop()
                raise

        def teardown_method(instance: Any, method: Any = None) -> None:
            try:
                if teardown is not None:
                    _call_optional(teardown, instance, method)
            finally:
                self.stop()

        for name, hook, original in (
            ("setup_method", setup_method, setup),
            ("teardown_method", teardown_method, teardown),
        ):
            if original is not None:
                functools.update_wrapper(hook, original)
            setattr(klass, name, hook)

    def _wrap_class_hooks(self, klass: type, first: str, last: str) -> None:
        """Run the class hooks inside the mock, on a state of their own kept from
        the first to the last."""
        states: list[_State] = []

        def wrap(name: str, ends: bool) -> None:
            raw = inspect.getattr_static(klass, name, None)
            if raw is None:
                return
            is_classmethod = isinstance(raw, classmethod)
            func = raw.__func__ if is_classmethod else raw

            def hook(cls: Any, *args: Any, **kwargs: Any) -> Any:
                with self._lock:
                    if not states:
                        states.append(self._new_state())
                    saved, self._serving = self._serving, states[0]
                self._activate()
                try:
                    return func(cls, *args, **kwargs)
                finally:
                    self._deactivate()
                    with self._lock:
                        self._serving = saved
                    if ends:
                        states.clear()

            functools.update_wrapper(hook, func)
            setattr(klass, name, classmethod(hook) if is_classmethod else hook)

        wrap(first, ends=False)
        wrap(last, ends=True)


class MockAWS(MockSQS):
    """moto's ``mock_aws`` with sqsqueue's SQS: every form of :class:`MockSQS`,
    and while active moto's ``mock_aws`` too, so every other AWS service is
    moto's and delivers into sqsqueue's queues (:mod:`sqsqueue.moto`). A moto
    test module moves over by changing its import, ``from moto import
    mock_aws`` to ``from sqsqueue.testing import mock_aws``. ``config`` is
    moto's. Needs moto (``sqsqueue[moto]``)."""

    def __init__(
        self,
        broker: Broker[Any] | None = None,
        config: Any = None,
        *,
        lenient: str | Iterable[str] | None = None,
    ) -> None:
        try:
            import moto
        except ImportError as exc:
            raise ImportError(
                "sqsqueue.testing.mock_aws needs moto: pip install 'sqsqueue[moto]'"
            ) from exc
        if not hasattr(moto, "mock_aws"):  # moto 4: per-service mocks only
            raise RuntimeError(_hooks.unsupported_moto(active=False))
        super().__init__(broker, lenient=lenient)
        self._moto = moto.mock_aws(config=config) if config is not None else moto.mock_aws()

    def _activate(self) -> None:
        self._moto.start()
        super()._activate()

    def _deactivate(self) -> None:
        super()._deactivate()
        self._moto.stop()


def mock_aws(
    target: Any = None,
    *,
    config: Any = None,
    broker: Broker[Any] | None = None,
    lenient: str | Iterable[str] | None = None,
) -> Any:
    """:func:`sqsqueue.testing.mock_aws`: bare (``@mock_aws``) or called."""
    if target is None or isinstance(target, Broker):
        return MockAWS(target if target is not None else broker, config=config, lenient=lenient)
    if callable(target):
        return MockAWS(broker, config=config, lenient=lenient)(target)
    raise TypeError(f"mock_aws takes a function or a class, not {target!r}")


def _call_optional(func: Callable[..., Any], instance: Any, arg: Any) -> None:
    """Call a pytest xunit hook as pytest does: with the argument only if the
    hook takes one (besides ``self``)."""
    code = getattr(func, "__code__", None)
    count = code.co_argcount if code is not None else 1
    if inspect.ismethod(func):
        count -= 1
        func(arg) if count else func()
    else:
        func(instance, arg) if count > 1 else func(instance)


def mock_sqs(broker: Any = None, *, lenient: str | Iterable[str] | None = None) -> Any:
    """:func:`sqsqueue.testing.mock_sqs`."""
    if broker is None or isinstance(broker, Broker):
        return MockSQS(broker, lenient=lenient)
    if callable(broker):  # the bare decorator: @mock_sqs
        return MockSQS(lenient=lenient)(broker)
    raise TypeError(f"mock_sqs takes a Broker, a function or a class, not {broker!r}")
