"""The ``sqs`` data source's options: each one it reads, parsed and checked
once, on the driver, into picklable values the tasks get: :class:`Connection`
(where the queue is and how boto3 reaches it, with the check that it can),
:class:`WriteOptions` and :class:`ReadOptions`. A missing, unknown or wrong
option is an :class:`SqsOptionError` naming it; a queue that cannot be reached
an :class:`SqsConnectionError` saying why. The options are listed, with their
defaults, in ``docs/spark.md``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import boto3
import botocore.exceptions
from botocore.config import Config

from sqsqueue import _limits

__all__ = [
    "Connection",
    "ReadOptions",
    "SqsConnectionError",
    "SqsOptionError",
    "WriteOptions",
]

_REGION_IN_HOST = re.compile(r"^https?://sqs[.-]([a-z0-9-]+)\.amazonaws\.com", re.IGNORECASE)


class SqsOptionError(ValueError):
    """An option of the ``sqs`` data source is missing or wrong (the message names it)."""


class SqsConnectionError(RuntimeError):
    """The queue cannot be reached: endpoint, credentials, or the queue itself."""


def _int_option(
    options: Mapping[str, str], name: str, default: int, low: int, high: int, why: str = ""
) -> int:
    raw = options.get(name)
    if raw is None:
        return default
    try:
        value = int(str(raw))
    except ValueError:
        raise SqsOptionError(
            f"sqs data source: option {name} must be an integer, got {raw!r}"
        ) from None
    if not low <= value <= high:
        raise SqsOptionError(
            f"sqs data source: option {name} must be between {low} and {high}{why}, got {value}"
        )
    return value


def _bool_option(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = options.get(name)
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text not in ("true", "false"):
        raise SqsOptionError(f"sqs data source: option {name} must be true or false, got {raw!r}")
    return text == "true"


#: Every option the data source reads; anything else is refused (a typo must not
#: silently fall back to a default).
OPTIONS = (
    "queueUrl",
    "endpointUrl",
    "region",
    "accessKeyId",
    "secretAccessKey",
    "sessionToken",
    "profile",
    "maxAttempts",
    "writeId",
    "maxRetries",
    "strictGroupOrder",
    "maxMessagesPerBatch",
    "waitTimeSeconds",
    "receiveConcurrency",
    "visibilityTimeout",
    "numPartitions",
    "releaseOnRestart",
    "heartbeatSeconds",
)
#: What Spark passes along besides: ``DataFrameWriter.save(path)`` a path
#: (refused below when set), ``writeStream`` its checkpoint location.
_PASSED_BY_SPARK = ("path", "checkpointLocation")
_KNOWN = frozenset(name.lower() for name in (*OPTIONS, *_PASSED_BY_SPARK))


@dataclass(frozen=True)
class Connection:
    """How to reach the queue with boto3 (picklable; clients are made where used)."""

    queue_url: str
    endpoint_url: str | None
    region: str
    access_key_id: str | None
    secret_access_key: str | None
    session_token: str | None
    profile: str | None
    max_attempts: int

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> Connection:
        unknown = sorted(k for k in options if k.lower() not in _KNOWN)
        if unknown:
            raise SqsOptionError(
                f"sqs data source: unknown option(s) {', '.join(unknown)}; known options: "
                + ", ".join(OPTIONS)
            )
        if options.get("path"):
            raise SqsOptionError(
                "sqs data source: give the queue with option queueUrl, not as a path"
            )
        queue_url = options.get("queueUrl")
        if not queue_url:
            raise SqsOptionError("sqs data source: option queueUrl is required")
        if not re.match(r"^https?://[^/]+/.+", queue_url):
            raise SqsOptionError(
                f"sqs data source: option queueUrl must be a queue URL "
                f"(https://sqs.<region>.amazonaws.com/<account>/<name>), got {queue_url!r}"
            )
        endpoint_url = options.get("endpointUrl") or None
        if endpoint_url is not None and not re.match(r"^https?://[^/]+", endpoint_url):
            raise SqsOptionError(
                f"sqs data source: option endpointUrl must be an http(s) URL, got {endpoint_url!r}"
            )
        region = options.get("region") or _default_region(queue_url)
        if not region:
            raise SqsOptionError(
                "sqs data source: no region: set option region (or AWS_REGION / "
                f"AWS_DEFAULT_REGION); it cannot be read from queueUrl {queue_url!r}"
            )
        key, secret = options.get("accessKeyId"), options.get("secretAccessKey")
        if bool(key) != bool(secret):
            raise SqsOptionError(
                "sqs data source: options accessKeyId and secretAccessKey go together "
                "(or leave both out to use the default credential chain)"
            )
        return cls(
            queue_url=queue_url,
            endpoint_url=endpoint_url,
            region=region,
            access_key_id=key or None,
            secret_access_key=secret or None,
            session_token=options.get("sessionToken") or None,
            profile=options.get("profile") or None,
            max_attempts=_int_option(options, "maxAttempts", 5, 1, 20),
        )

    @property
    def fifo(self) -> bool:
        """FIFO queue names end in ``.fifo`` (docs/aws-behaviour.md §9)."""
        return self.queue_url.rstrip("/").endswith(".fifo")

    def client(self, *, read_timeout: int = 60, max_attempts: int | None = None) -> Any:
        session = boto3.session.Session(
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            aws_session_token=self.session_token,
            region_name=self.region,
            profile_name=self.profile,
        )
        config = Config(
            connect_timeout=5,
            read_timeout=read_timeout,
            retries={"mode": "standard", "max_attempts": max_attempts or self.max_attempts},
        )
        return session.client("sqs", endpoint_url=self.endpoint_url, config=config)

    def where(self) -> str:
        at = f" at endpointUrl {self.endpoint_url!r}" if self.endpoint_url else ""
        return f"queueUrl {self.queue_url!r}{at}"

    def check(self) -> dict[str, str]:
        """Ask for the queue's attributes once, turning failures into clear errors.

        Runs on the driver before any task, so a wrong URL or missing
        credentials fail the query at once with a sentence, not in every task.
        """
        try:
            client = self.client(max_attempts=2)
            answer = client.get_queue_attributes(
                QueueUrl=self.queue_url, AttributeNames=["VisibilityTimeout"]
            )
        except botocore.exceptions.NoCredentialsError:
            raise SqsConnectionError(
                f"sqs data source: no AWS credentials for {self.where()}: set options "
                "accessKeyId and secretAccessKey (or profile), or configure the default "
                "credential chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, ~/.aws, an "
                "instance role)"
            ) from None
        except botocore.exceptions.ProfileNotFound as exc:
            raise SqsConnectionError(f"sqs data source: option profile: {exc}") from None
        except (
            botocore.exceptions.EndpointConnectionError,
            botocore.exceptions.ConnectTimeoutError,
            botocore.exceptions.ReadTimeoutError,
        ) as exc:
            raise SqsConnectionError(
                f"sqs data source: cannot reach {self.where()}: {exc} "
                "(check options endpointUrl and queueUrl)"
            ) from None
        except botocore.exceptions.ClientError as exc:
            error = exc.response.get("Error", {})
            code = error.get("Code", "?")
            if code in ("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue"):
                raise SqsConnectionError(
                    f"sqs data source: no such queue: {self.where()} (option queueUrl)"
                ) from None
            raise SqsConnectionError(
                f"sqs data source: {self.where()} refused GetQueueAttributes: {code}: "
                f"{error.get('Message', '')}"
            ) from None
        except botocore.exceptions.BotoCoreError as exc:
            raise SqsConnectionError(f"sqs data source: {self.where()}: {exc}") from None
        attributes: dict[str, str] = answer.get("Attributes", {})
        return attributes


def _default_region(queue_url: str) -> str | None:
    match = _REGION_IN_HOST.match(queue_url)
    if match:
        return match.group(1).lower()
    region: str | None = boto3.session.Session().region_name  # AWS_REGION, ~/.aws/config
    return region


@dataclass(frozen=True)
class WriteOptions:
    """How a write sends (``df.write`` and ``df.writeStream``)."""

    #: The write's identity in FIFO deduplication ids: ``writeId``; for a batch
    #: write without one, a fresh id per ``save()``; for a streaming write
    #: without one, None (the streaming query id stands in).
    write_id: str | None
    #: ``maxRetries``: resends of an entry that failed server-side.
    retries: int
    #: ``strictGroupOrder``: at most one row of a FIFO group per call.
    strict: bool

    @classmethod
    def from_options(cls, options: Mapping[str, str], *, streaming: bool) -> WriteOptions:
        write_id = options.get("writeId") or (None if streaming else uuid.uuid4().hex)
        return cls(
            write_id=write_id,
            retries=_int_option(options, "maxRetries", 3, 0, 20),
            strict=_bool_option(options, "strictGroupOrder", False),
        )


@dataclass(frozen=True)
class ReadOptions:
    """How the stream reader receives (``spark.readStream``)."""

    #: ``maxMessagesPerBatch``: the most messages a micro-batch takes.
    max_messages: int
    #: ``waitTimeSeconds``: the long poll of an idle stream.
    wait_time: int
    #: ``receiveConcurrency``: ReceiveMessage (and delete) calls at once.
    concurrency: int
    #: ``numPartitions``: read tasks per micro-batch.
    num_partitions: int
    #: ``releaseOnRestart``: offsets carry receipt handles for a restart to release.
    release_on_restart: bool
    #: ``visibilityTimeout``; None: the queue's.
    visibility: int | None
    #: ``heartbeatSeconds``; None: a third of the visibility timeout; 0: no heartbeat.
    heartbeat: int | None

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> ReadOptions:
        return cls(
            max_messages=_int_option(options, "maxMessagesPerBatch", 1000, 1, 1_000_000),
            wait_time=_int_option(
                options,
                "waitTimeSeconds",
                5,
                1,
                _limits.WAIT_TIME_MAX,
                why=" (a long poll: with 0 an idle stream would poll in a busy loop)",
            ),
            concurrency=_int_option(options, "receiveConcurrency", 4, 1, 32),
            num_partitions=_int_option(options, "numPartitions", 2, 1, 10_000),
            release_on_restart=_bool_option(options, "releaseOnRestart", True),
            visibility=_optional_int(
                options, "visibilityTimeout", 1, _limits.VISIBILITY_TIMEOUT_MAX
            ),
            heartbeat=_optional_int(options, "heartbeatSeconds", 0, _limits.VISIBILITY_TIMEOUT_MAX),
        )


def _optional_int(options: Mapping[str, str], name: str, low: int, high: int) -> int | None:
    if options.get(name) is None:
        return None
    return _int_option(options, name, low, low, high)
