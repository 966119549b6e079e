"""Running an :class:`~sqsqueue.server._app.Endpoint`: uvicorn on a background
thread with the hardened HTTP protocol of :mod:`._http`, the listening socket,
the refusal to serve a non-loopback address anonymously, and the handle
``Broker.serve()`` returns. uvicorn is imported when a server is built, so
importing this module needs nothing beyond the engine."""

from __future__ import annotations

import contextlib
import logging
import math
import socket
import threading
from types import TracebackType
from typing import Any, cast

from sqsqueue._ports import ServedEndpoint
from sqsqueue.aws._client import BrokerAPI
from sqsqueue.console import CONSOLE_PATH, Console
from sqsqueue.console._broker import ConsoleBroker
from sqsqueue.server._app import MAX_HEADER_BYTES, Endpoint, is_loopback
from sqsqueue.server._credentials import Credentials
from sqsqueue.server._moto import MotoRouter, check_moto, provider

__all__ = [
    "HTTP_PARSER",
    "IDLE_TIMEOUT",
    "SHUTDOWN_GRACE",
    "EndpointHandle",
    "attach_console",
    "check_serve_options",
    "http_parser",
    "serve",
]

logger = logging.getLogger("sqsqueue.server")

#: Seconds a connection may take to send a request's head (or stay idle between
#: requests), then as long again for its body (:mod:`sqsqueue.server._http`).
IDLE_TIMEOUT = 30
#: Seconds open requests are given to finish when the server stops.
SHUTDOWN_GRACE = 3


#: What serving without the ``server`` extra says.
NEEDS_EXTRA = "serving needs uvicorn: pip install 'sqsqueue[server]'"


#: The HTTP parser a server is built with: None is the fastest installed
#: (httptools, which the ``server`` extra brings, else h11); "h11" or
#: "httptools" names one (the tests run the hardening against each).
HTTP_PARSER: str | None = None


def http_parser() -> str:
    """The parser :func:`uvicorn_server` uses: :data:`HTTP_PARSER`, or
    httptools where it is installed and h11 where it is not."""
    if HTTP_PARSER is not None:
        return HTTP_PARSER
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return "httptools"


def http_protocol(idle_timeout: float, endpoint: Endpoint | None = None) -> type[Any]:
    """The hardened protocol class of :func:`http_parser`'s parser
    (:mod:`._httptools` or :mod:`._http`), its read deadline set; on
    httptools, ``endpoint``'s SQS requests are answered without an ASGI cycle."""
    if http_parser() == "httptools":
        from sqsqueue.server import _httptools

        return _httptools.protocol_class(idle_timeout, 2 * MAX_HEADER_BYTES, endpoint)
    from sqsqueue.server import _http

    return _http.protocol_class(idle_timeout)


def uvicorn_server(endpoint: Endpoint | MotoRouter, idle_timeout: float) -> Any:
    """uvicorn's server for ``endpoint``; ImportError naming the extra when
    uvicorn is not installed."""
    try:
        import uvicorn

        protocol = http_protocol(idle_timeout, endpoint if isinstance(endpoint, Endpoint) else None)
    except ImportError as exc:
        raise ImportError(NEEDS_EXTRA) from exc

    class _Server(uvicorn.Server):
        """uvicorn's server, answering open long polls first when it stops."""

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            endpoint.close_polls()
            await super().shutdown(sockets)

    config = uvicorn.Config(
        endpoint,
        lifespan="off",
        # httptools or h11, each with a read deadline, a bound on a head's
        # bytes and AWS-shaped 400s (sqsqueue.server._httptools, ._http).
        http=protocol,
        # asyncio's own loop whatever else is installed: the protocols and
        # the long polls are tested on it.
        loop="asyncio",
        ws="none",
        log_config=None,  # leave the application's logging alone
        access_log=False,
        timeout_keep_alive=max(1, math.ceil(idle_timeout)),  # the read deadline comes first
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
        h11_max_incomplete_event_size=2 * MAX_HEADER_BYTES,
        server_header=False,
        proxy_headers=False,
    )
    return _Server(config)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not the default 0: accepted sockets inherit the listener's
    # proto, and asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # sockets whose proto says TCP. With it on, a response written as headers
    # then body waits for the client's delayed ACK: about 40 ms per request.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def refuse_open(
    host: str, credentials: object, allow_anonymous: bool, with_moto: bool = False
) -> None:
    if with_moto and not allow_anonymous and not is_loopback(host):
        raise PermissionError(
            f"refusing to serve moto's services on {host}: moto checks no credentials, so "
            "anyone who can reach that address could use them; serve on a loopback "
            "address, or --allow-anonymous (allow_anonymous=True) if the network is yours."
        )
    if credentials is None and not allow_anonymous and not is_loopback(host):
        raise PermissionError(
            f"refusing to serve on {host} without credentials: anyone who can reach that "
            "address could read, send and delete messages. Give credentials "
            "(--credentials FILE, or serve(credentials={key: secret})) to require signed "
            "requests, or --allow-anonymous (allow_anonymous=True) if the network is yours."
        )


def attach_console(
    endpoint: Endpoint,
    host: str,
    *,
    console: bool | None,
    allow_anonymous: bool,
    allow_reset: bool,
) -> None:
    """Give ``endpoint`` its operational paths (``sqsqueue.console``). The web
    console and its actions are on by default where the endpoint needs
    credentials or binds a loopback address; asked for on another address
    without credentials, they are refused as the endpoint is (unless
    ``allow_anonymous``)."""
    credentials = endpoint.credentials
    if console is None:
        ui = credentials is not None or is_loopback(host)
    else:
        ui = console
        if ui and credentials is None and not allow_anonymous and not is_loopback(host):
            raise PermissionError(
                f"refusing the console on {host} without credentials: anyone who can reach "
                "that address could read and delete messages. Give credentials, or "
                "--allow-anonymous (allow_anonymous=True) if the network is yours."
            )
    from sqsqueue.console._broker import ConsoleBrokers

    broker: ConsoleBroker = endpoint.broker  # type: ignore[assignment]
    # sqsqueue serve: every account and region's broker (the default first).
    # The endpoint types them by what it needs (AccountsAPI); sqsqueue serve's
    # Accounts is also what the console needs.
    brokers = cast("ConsoleBrokers | None", endpoint.accounts)
    endpoint.console = Console(
        broker, credentials=credentials, ui=ui, allow_reset=allow_reset, brokers=brokers
    )


class EndpointHandle(ServedEndpoint):
    """A running endpoint: ``.endpoint_url``, ``.close()``, a context manager."""

    def __init__(
        self, server: Any, endpoint: Endpoint | MotoRouter, sock: socket.socket, host: str
    ) -> None:
        self._server = server
        self.endpoint = endpoint
        #: Run once the server stopped (serving with moto ends the bridge).
        self.on_close: list[Any] = []
        self._socket = sock
        port = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        #: ``http://<host>:<port>``: give it to any SQS client as its endpoint URL.
        self.endpoint_url = f"http://{shown}:{port}"
        self.port: int = port
        #: The web console's page (when the endpoint serves it).
        self.console_url: str = f"{self.endpoint_url}{CONSOLE_PATH}"
        endpoint.default_endpoint_url = self.endpoint_url
        sqs = endpoint.endpoint if isinstance(endpoint, MotoRouter) else endpoint
        if sqs.console is not None:
            sqs.console.endpoint_url = self.endpoint_url
        self._thread = threading.Thread(
            target=self._run, name=f"sqsqueue-endpoint-{port}", daemon=True
        )
        self._failed: BaseException | None = None

    def _run(self) -> None:
        try:
            self._server.run(sockets=[self._socket])
        except BaseException as exc:  # reported by start()
            self._failed = exc
            logger.exception("the endpoint stopped on an error")

    def start(self, timeout: float = 10.0) -> EndpointHandle:
        """Start the server thread; return once it accepts connections."""
        self._thread.start()
        tick = threading.Event()
        for _ in range(int(timeout / 0.005)):
            if self._server.started or not self._thread.is_alive():
                break
            tick.wait(0.005)
        if not self._server.started:
            self.close()
            raise RuntimeError(f"the endpoint did not start: {self._failed!r}")
        return self

    def close(self, timeout: float = 10.0) -> None:
        """Stop serving: open long polls are answered (empty), connections closed,
        the thread joined. Returns within ``SHUTDOWN_GRACE`` seconds or so."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout)
        with contextlib.suppress(OSError):
            self._socket.close()
        while self.on_close:
            self.on_close.pop()()

    def __enter__(self) -> EndpointHandle:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"EndpointHandle({self.endpoint_url!r})"


def check_serve_options(port: object, idle_timeout: object) -> None:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"port must be 0 (any free port) to 65535, not {port!r}")
    if (
        isinstance(idle_timeout, bool)
        or not isinstance(idle_timeout, int | float)
        or not (idle_timeout > 0 and math.isfinite(idle_timeout))
    ):
        raise ValueError(f"idle_timeout must be a number of seconds > 0, not {idle_timeout!r}")


def serve(
    broker: BrokerAPI,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    credentials: Credentials | None = None,
    allow_anonymous: bool = False,
    idle_timeout: float = IDLE_TIMEOUT,
    with_moto: bool = False,
    console: bool | None = None,
    allow_reset: bool = False,
) -> EndpointHandle:
    """Serve ``broker`` over HTTP from a background thread; see :meth:`Broker.serve`.

    Beside SQS it serves ``/_sqsqueue/health``, ``POST /_sqsqueue/reset``
    (a durable broker only with ``allow_reset``), LocalStack's
    ``/_aws/sqs/messages`` peek, ``/metrics`` and, with ``console`` (by
    default on a loopback address or with credentials), the web console at
    ``handle.console_url`` (``docs/console.md``).

    ``with_moto`` serves every other AWS service on the same port through
    moto's server, its services delivering into ``broker``
    (:mod:`sqsqueue.server._moto`; needs ``moto[server]``, loopback only unless
    ``allow_anonymous``). Raises ``PermissionError`` for a non-loopback
    ``host`` without ``credentials`` (unless ``allow_anonymous``),
    ``ValueError`` for a port outside 0..65535 or an ``idle_timeout`` not
    above 0, ``ImportError`` naming the extras when ``with_moto`` lacks moto,
    and ``OSError`` when the address cannot be bound.
    """
    check_serve_options(port, idle_timeout)
    refuse_open(host, credentials, allow_anonymous, with_moto)
    if with_moto:
        check_moto()
    endpoint = Endpoint(broker, credentials=credentials)
    attach_console(
        endpoint,
        host,
        console=console,
        allow_anonymous=allow_anonymous,
        allow_reset=allow_reset,
    )
    sock = bind(host, port)
    if not with_moto:
        return EndpointHandle(uvicorn_server(endpoint, idle_timeout), endpoint, sock, host).start()
    return serve_with_moto(broker, endpoint, sock, host, idle_timeout).start()


def serve_with_moto(
    broker: BrokerAPI, endpoint: Endpoint, sock: socket.socket, host: str, idle_timeout: float
) -> EndpointHandle:
    """The handle of ``endpoint`` behind a :class:`MotoRouter`, the moto bridge
    serving ``broker`` until the handle closes."""
    from sqsqueue import moto as bridge

    router = MotoRouter(endpoint)
    handle = EndpointHandle(uvicorn_server(router, idle_timeout), router, sock, host)
    served = provider(broker, endpoint.accounts)
    bridge.activate(served)
    handle.on_close.append(lambda: bridge.deactivate(served))
    return handle
