"""Queues declared in a TOML file: ``Broker.from_config`` and ``sqsqueue serve
--config FILE``.

One ``[[queue]]`` table per queue, holding the keywords of ``create_queue``
(``docs/console.md`` has the format)::

    [[queue]]
    name = "orders"
    visibility_timeout = 45
    redrive_policy = { dead_letter_queue = "orders-dlq", max_receive_count = 3 }
    tags = { team = "shop" }
    faults = { duplicate_rate = 0.05, seed = 7 }

One top-level key besides: ``lenient = ["purge-interval"]``, the AWS rules the
broker relaxes (``_lenient.py``).

Loading is two steps. :func:`load` reads the file (``tomllib``) and checks its
shape: known keys, types, names. :func:`apply` makes the queues in a broker:
it first checks each queue that exists already against its table (a
different attribute, FIFO flag or tag is an error naming it, and nothing
changes), then creates the missing ones, dead-letter queues before the queues
that name them. ``Broker.from_config`` applies the file to a scratch broker
in memory first, so an attribute AWS would refuse is reported before the real
broker (perhaps a durable one) is touched.

Every error is a :class:`ConfigError` naming the file, the line and the
reason. ``tomllib`` gives the line of a syntax error; for the others the line
is found by reading the text again: the n-th ``[[queue]]`` header starts the
n-th table, and a key's line is the first ``key =`` (or ``[queue.key]``
header) after it, before the next table.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs

from sqsqueue import _attributes
from sqsqueue._faults import Faults
from sqsqueue._fifo import FifoQueue
from sqsqueue._lenient import parse_lenient
from sqsqueue._standard import Queue
from sqsqueue.errors import SQSError

__all__ = ["Config", "ConfigError", "QueueSpec", "apply", "load", "split"]

#: Keys of a ``[[queue]]`` table besides the attribute keywords.
_OWN_KEYS = (
    "name",
    "fifo_queue",
    "attributes",
    "tags",
    "faults",
    "keep_history",
    "account_id",
    "region",
)
#: Constructor keywords of a standalone queue, which a broker's queue names differently.
_STANDALONE = {
    "dead_letter_queue": "redrive_policy = { dead_letter_queue = ..., max_receive_count = ... }",
    "max_receive_count": "redrive_policy = { dead_letter_queue = ..., max_receive_count = ... }",
}
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]*?)\s*\]\]?")
_TOML_LINE = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


class ConfigError(ValueError):
    """A configuration file sqsqueue refuses: ``file, line N: reason``."""


@attrs.frozen
class QueueSpec:
    """One ``[[queue]]`` table, checked for shape."""

    name: str
    fifo: bool
    #: Attribute keywords and AWS names as given, policies not yet resolved.
    attributes: Mapping[str, Any]
    tags: Mapping[str, str]
    faults: Faults | None
    keep_history: bool | None
    #: Where the table starts, and each key's line (None without a file).
    line: int | None
    key_lines: Mapping[str, int]
    #: The account and region the queue is in (None: the broker's, or the
    #: server's defaults); a Broker holds one, ``sqsqueue serve`` every one.
    account_id: str | None = None
    region: str | None = None

    def home(self, account_id: str, region: str) -> tuple[str, str]:
        """(account, region) of this queue, the defaults filling what it leaves out."""
        return (self.account_id or account_id, self.region or region)


@attrs.frozen
class Config:
    """A checked configuration: where it came from and its queues, in order."""

    source: str
    queues: tuple[QueueSpec, ...]
    #: The leniencies the file turns on (``lenient = [...]``).
    lenient: frozenset[str] = frozenset()

    def where(self, spec: QueueSpec | None = None, key: str | None = None) -> str:
        """``file, line N`` for a queue's table (or one of its keys)."""
        line = None
        if spec is not None:
            line = spec.key_lines.get(key, spec.line) if key is not None else spec.line
        return f"{self.source}, line {line}" if line is not None else self.source


class Target(Protocol):
    """What :func:`apply` needs of a broker."""

    # Alike aws/_client.BrokerAPI on purpose: each module types the broker by what it uses.

    @property
    def region(self) -> str: ...
    @property
    def account_id(self) -> str: ...
    def __contains__(self, ref: object) -> bool: ...
    def get_queue(self, ref: str) -> Queue | FifoQueue: ...
    def create_queue(
        self,
        name: str,
        *,
        attributes: Mapping[str, object] | None = ...,
        tags: Mapping[str, str] | None = ...,
        **kwargs: Any,
    ) -> Queue | FifoQueue: ...


# -- reading ------------------------------------------------------------------------


def load(config: str | os.PathLike[str] | Mapping[str, Any]) -> Config:
    """Read and check a configuration: a TOML file's path, or the mapping its
    text would parse to. Raises :class:`ConfigError`. O(size of the file)."""
    if isinstance(config, Mapping):
        return _check(dict(config), "the configuration", None)
    if not isinstance(config, str | os.PathLike):
        raise ConfigError(
            f"a configuration is a TOML file's path or a mapping, not {type(config).__name__}"
        )
    path = Path(config)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text (TOML files are UTF-8)") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        reason = str(exc)
        found = _TOML_LINE.search(reason)
        if found is None:
            raise ConfigError(f"{path}: {reason}") from None
        reason = reason[: found.start()]
        raise ConfigError(
            f"{path}, line {found.group(1)}: {reason} (column {found.group(2)})"
        ) from None
    return _check(data, str(path), text)


def _tables(text: str) -> list[tuple[int, dict[str, int]]]:
    """For each ``[[queue]]`` table in ``text``: its line and its keys' lines."""
    out: list[tuple[int, dict[str, int]]] = []
    current: dict[str, int] | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(raw)
        if header is not None:
            brackets, name = header.groups()
            if brackets == "[[" and name == "queue":
                current = {}
                out.append((number, current))
            elif brackets == "[" and name.startswith("queue.") and current is not None:
                current.setdefault(name[len("queue.") :].split(".")[0], number)
            else:
                current = None
            continue
        if current is not None:
            key = re.match(r"\s*([A-Za-z0-9_-]+)\s*[.=]", raw)
            if key is not None:
                current.setdefault(key.group(1), number)
    return out


def _check(data: dict[str, Any], source: str, text: str | None) -> Config:
    tables = _tables(text) if text is not None else []
    for key in data:
        if key not in ("queue", "lenient"):
            line = _top_line(text, key)
            where = f"{source}, line {line}" if line else source
            raise ConfigError(
                f"{where}: unknown key {key!r}: a configuration holds [[queue]] tables and "
                "lenient = [...]"
            )
    lenient = _lenient_key(data.get("lenient", []), source, text)
    queues = data.get("queue", [])
    if not isinstance(queues, list) or not all(isinstance(q, dict) for q in queues):
        raise ConfigError(f"{source}: 'queue' must be an array of tables: write [[queue]]")
    specs: list[QueueSpec] = []
    # Names are unique per account and region (as written: a table naming the
    # default account explicitly is checked again by split()).
    seen: dict[tuple[str | None, str | None, str], int] = {}
    for index, table in enumerate(queues):
        line, key_lines = tables[index] if index < len(tables) else (None, {})
        spec = _spec(table, index, line, key_lines, source)
        home = (spec.account_id, spec.region, spec.name)
        if home in seen:
            where = f"{source}, line {line}" if line else source
            raise ConfigError(
                f"{where}: queue {spec.name!r} is declared twice (first as queue {seen[home] + 1})"
            )
        seen[home] = index
        specs.append(spec)
    config = Config(source, tuple(specs), lenient)
    for spec in specs:
        for target in _references(spec):
            if (spec.account_id, spec.region, target) not in seen:
                raise ConfigError(
                    f"{config.where(spec, 'redrive_policy')}: queue {spec.name!r}: the "
                    f"dead-letter queue {target!r} is not declared in this configuration "
                    "(declare it with its own [[queue]] table)"
                )
    _order(config)  # refuses a cycle of dead-letter queues
    return config


def _lenient_key(value: object, source: str, text: str | None) -> frozenset[str]:
    """The top-level ``lenient = [...]``: a list of leniency names."""
    line = _top_line(text, "lenient")
    where = f"{source}, line {line}" if line else source
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ConfigError(
            f'{where}: lenient must be a list of leniency names, e.g. lenient = ["purge-interval"]'
        )
    try:
        return parse_lenient(value)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _top_line(text: str | None, key: str) -> int | None:
    if text is None:
        return None
    for number, raw in enumerate(text.splitlines(), start=1):
        if re.match(rf"\s*\[*\s*{re.escape(key)}\b", raw):
            return number
    return None


def _spec(
    table: dict[str, Any], index: int, line: int | None, key_lines: dict[str, int], source: str
) -> QueueSpec:
    def fail(key: str | None, reason: str) -> ConfigError:
        at = key_lines.get(key, line) if key is not None else line
        where = f"{source}, line {at}" if at is not None else source
        label = table.get("name") if isinstance(table.get("name"), str) else f"#{index + 1}"
        return ConfigError(f"{where}: queue {label!r}: {reason}")

    name = table.get("name")
    if not isinstance(name, str) or not name:
        raise fail("name", 'every [[queue]] needs a name = "..." (a string)')
    for key in table:
        if key in _OWN_KEYS:
            continue
        if key == "lenient":
            raise fail(
                key,
                "lenient is a key of the whole file, not of a queue: write it above the "
                "first [[queue]] table",
            )
        if key in _STANDALONE:
            raise fail(
                key, f"{key!r} is for a standalone Queue; in a broker write {_STANDALONE[key]}"
            )
        if _attributes.canonical_name(key) is None:
            raise fail(
                key,
                f"unknown key {key!r}: expected {', '.join(_OWN_KEYS)} or an "
                "attribute keyword such as visibility_timeout",
            )
    fifo = table.get("fifo_queue", False)
    if not isinstance(fifo, bool):
        raise fail("fifo_queue", "fifo_queue must be true or false")
    attributes: dict[str, Any] = {}
    raw_attributes = table.get("attributes", {})
    if not isinstance(raw_attributes, dict):
        raise fail("attributes", "attributes must be a table of AWS attribute names to values")
    attributes.update(raw_attributes)
    attributes.update({k: v for k, v in table.items() if k not in _OWN_KEYS})
    tags = table.get("tags", {})
    if not isinstance(tags, dict) or not all(isinstance(v, str) for v in tags.values()):
        raise fail("tags", 'tags must be a table of strings, e.g. tags = { team = "shop" }')
    faults = None
    if "faults" in table:
        raw = table["faults"]
        if fifo:
            raise fail("faults", "faults apply to standard queues only: FIFO queues stay exact")
        if not isinstance(raw, dict):
            raise fail("faults", "faults must be a table, e.g. faults = { duplicate_rate = 0.05 }")
        unknown = sorted(set(raw) - {f.name for f in attrs.fields(Faults)})
        if unknown:
            raise fail(
                "faults",
                f"unknown fault {unknown[0]!r}: expected seed, duplicate_rate, "
                "partial_short_polls or reorder",
            )
        try:
            faults = Faults(**raw)
        except SQSError as exc:
            raise fail("faults", exc.message) from None
    keep_history = table.get("keep_history")
    if keep_history is not None and not isinstance(keep_history, bool):
        raise fail("keep_history", "keep_history must be true or false")
    for key in ("redrive_policy", "redrive_allow_policy"):
        value = attributes.get(key)
        if isinstance(value, dict):
            _check_policy_table(key, value, fail)
    account_id = table.get("account_id")
    if account_id is not None and not (
        isinstance(account_id, str) and re.fullmatch(r"[0-9]{12}", account_id)
    ):
        raise fail("account_id", 'account_id must be 12 digits in a string ("111122223333")')
    region = table.get("region")
    if region is not None and not (
        isinstance(region, str) and re.fullmatch(r"[a-z0-9-]{1,32}", region)
    ):
        raise fail("region", 'region must be a region name in a string ("eu-west-1")')
    return QueueSpec(
        name, fifo, attributes, tags, faults, keep_history, line, key_lines, account_id, region
    )


def _check_policy_table(key: str, value: dict[str, Any], fail: Any) -> None:
    if key == "redrive_policy" and "dead_letter_queue" in value:
        if not isinstance(value["dead_letter_queue"], str):
            raise fail(key, "dead_letter_queue must be a queue name (a string)")
        _known_keys(key, value, ("dead_letter_queue", "max_receive_count"), fail)
    if key == "redrive_allow_policy" and "redrive_permission" in value:
        _known_keys(key, value, ("redrive_permission", "source_queues"), fail)
        sources = value.get("source_queues", [])
        if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
            raise fail(key, "source_queues must be a list of queue names")


def _known_keys(key: str, value: dict[str, Any], known: tuple[str, str], fail: Any) -> None:
    """Refuse a policy table with a key other than its two."""
    unknown = sorted(set(value) - set(known))
    if unknown:
        raise fail(key, f"unknown key {unknown[0]!r} in {key}: expected {known[0]} and {known[1]}")


def _references(spec: QueueSpec) -> Iterator[str]:
    """The queues this one's redrive policy names by name."""
    policy = spec.attributes.get("redrive_policy")
    if isinstance(policy, dict) and "dead_letter_queue" in policy:
        yield policy["dead_letter_queue"]


def split(config: Config, account_id: str, region: str) -> dict[tuple[str, str], Config]:
    """``config``'s queues by the (account, region) each is in, the given
    defaults filling what a table leaves out; the defaults' group first.
    Raises ConfigError for a name declared twice in one account and region,
    or a dead-letter queue of another one. O(queues)."""
    groups: dict[tuple[str, str], list[QueueSpec]] = {(account_id, region): []}
    for spec in config.queues:
        groups.setdefault(spec.home(account_id, region), []).append(spec)
    out: dict[tuple[str, str], Config] = {}
    for (account, where_region), specs in groups.items():
        names: dict[str, QueueSpec] = {}
        for spec in specs:
            if spec.name in names:
                raise ConfigError(
                    f"{config.where(spec)}: queue {spec.name!r} is declared twice in account "
                    f"{account}, region {where_region}"
                )
            names[spec.name] = spec
        for spec in specs:
            for target in _references(spec):
                if target not in names:
                    raise ConfigError(
                        f"{config.where(spec, 'redrive_policy')}: queue {spec.name!r}: the "
                        f"dead-letter queue {target!r} must be in the same account and region "
                        f"({account}, {where_region}), as AWS requires"
                    )
        out[(account, where_region)] = Config(config.source, tuple(specs), config.lenient)
    return out


def _order(config: Config) -> list[QueueSpec]:
    """The queues, each dead-letter queue before the queues that name it."""
    by_name = {spec.name: spec for spec in config.queues}
    done: dict[str, None] = {}
    visiting: set[str] = set()

    def visit(spec: QueueSpec) -> None:
        if spec.name in done:
            return
        if spec.name in visiting:
            raise ConfigError(
                f"{config.where(spec, 'redrive_policy')}: queue {spec.name!r}: its "
                "dead-letter queues form a cycle"
            )
        visiting.add(spec.name)
        for target in _references(spec):
            if target != spec.name:  # a queue may be its own DLQ (section 2.1)
                visit(by_name[target])
        visiting.discard(spec.name)
        done[spec.name] = None

    for spec in config.queues:
        visit(spec)
    return [by_name[name] for name in done]


# -- applying ----------------------------------------------------------------------


def _arn(broker: Target, name: str) -> str:
    return f"arn:aws:sqs:{broker.region}:{broker.account_id}:{name}"


def _keywords(broker: Target, spec: QueueSpec) -> dict[str, Any]:
    """The attributes of ``spec`` as ``create_queue`` takes them, policies
    naming queues by name resolved to ARNs."""
    out = dict(spec.attributes)
    policy = out.get("redrive_policy")
    if isinstance(policy, dict) and "dead_letter_queue" in policy:
        resolved: dict[str, Any] = {
            "deadLetterTargetArn": _arn(broker, policy["dead_letter_queue"])
        }
        if "max_receive_count" in policy:
            resolved["maxReceiveCount"] = policy["max_receive_count"]
        out["redrive_policy"] = resolved
    allow = out.get("redrive_allow_policy")
    if isinstance(allow, dict) and "redrive_permission" in allow:
        resolved = {"redrivePermission": allow["redrive_permission"]}
        if "source_queues" in allow:
            resolved["sourceQueueArns"] = [_arn(broker, s) for s in allow["source_queues"]]
        out["redrive_allow_policy"] = resolved
    if spec.fifo:
        out["fifo_queue"] = True
    return out


def _blame(config: Config, spec: QueueSpec, exc: SQSError) -> ConfigError:
    """An engine error as a ConfigError, at the line of the attribute it names."""
    key = None
    for candidate in spec.attributes:
        aws = _attributes.canonical_name(candidate)
        if aws is not None and re.search(rf"\b{aws}\b", exc.message):
            key = candidate
            break
    if key is None and "FifoQueue" in exc.message:
        key = "fifo_queue"
    if key is None and re.search(r"\bname\b", exc.message, re.IGNORECASE):
        key = "name"  # a queue name AWS refuses
    return ConfigError(f"{config.where(spec, key)}: queue {spec.name!r}: {exc.message}")


def apply(broker: Target, config: Config) -> None:
    """Make ``config``'s queues in ``broker``: check the existing ones first
    (any difference raises, naming the attribute, before anything changes),
    then create the missing ones, dead-letter queues first; then set each
    queue's faults and history. O(queues + tags)."""
    for spec in config.queues:
        if spec.name in broker:
            _check_existing(broker, config, spec)
    for spec in _order(config):
        if spec.name not in broker:
            try:
                broker.create_queue(spec.name, tags=dict(spec.tags), **_keywords(broker, spec))
            except SQSError as exc:
                raise _blame(config, spec, exc) from None
    for spec in config.queues:
        queue = broker.get_queue(spec.name)
        if spec.faults is not None and isinstance(queue, Queue):
            queue.faults = spec.faults
        if spec.keep_history is not None:
            queue.keep_history = spec.keep_history


def _check_existing(broker: Target, config: Config, spec: QueueSpec) -> None:
    queue = broker.get_queue(spec.name)
    if spec.fifo != queue.FIFO:
        raise ConfigError(
            f"{config.where(spec, 'fifo_queue')}: queue {spec.name!r} exists with a different "
            f"value for attribute FifoQueue ({str(queue.FIFO).lower()}); nothing was changed"
        )
    try:
        # CreateQueue on an existing name changes nothing and refuses a
        # different attribute, naming it (section 2.1).
        broker.create_queue(spec.name, **_keywords(broker, spec))
    except SQSError as exc:
        error = _blame(config, spec, exc)
        raise ConfigError(f"{error}; nothing was changed") from None
    current = queue.list_tags()
    for key, value in spec.tags.items():
        if current.get(key) != value:
            raise ConfigError(
                f"{config.where(spec, 'tags')}: queue {spec.name!r} exists with a different "
                f"value for tag {key!r} ({current.get(key)!r}, not {value!r}); nothing was "
                "changed"
            )
