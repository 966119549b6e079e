"""The endpoint's credentials: access key ids mapped to secrets and accounts,
given in Python (``serve(credentials=...)``) or read from a JSON file
(``--credentials FILE``). Checked once, when the endpoint starts."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["Credentials", "check_credentials", "load_credentials"]

#: ``{access key id: secret}`` or ``{access key id: (secret, account id)}``.
Credentials = Mapping[str, "str | tuple[str, str]"]


def check_credentials(
    credentials: Credentials, account_id: str, *, key_accounts: bool = False
) -> dict[str, tuple[str, str]]:
    """Each access key id's (secret, account). A key given a bare secret acts
    as ``account_id``; with ``key_accounts`` (an endpoint serving every
    account) a 12-digit key id is its own account instead, LocalStack's
    convention. Raises ValueError naming the bad entry."""
    if not isinstance(credentials, Mapping) or not credentials:
        raise ValueError("credentials must be a non-empty mapping of access key id to secret")
    out: dict[str, tuple[str, str]] = {}
    for key, value in credentials.items():
        if isinstance(value, str):
            own = key_accounts and isinstance(key, str) and re.fullmatch(r"[0-9]{12}", key)
            secret, account = value, key if own else account_id
        elif (
            isinstance(value, tuple | list)
            and len(value) == 2
            and all(isinstance(v, str) for v in value)
        ):
            secret, account = value[0], value[1]
        else:
            raise ValueError(
                f"credentials[{key!r}] must be a secret or a (secret, account_id) pair"
            )
        if not isinstance(key, str) or not key or not secret:
            raise ValueError("access key ids and secrets must be non-empty strings")
        if not re.fullmatch(r"[0-9]{12}", account):
            raise ValueError(f"credentials[{key!r}]: an AWS account id is 12 digits")
        out[key] = (secret, account)
    return out


def load_credentials(path: str | Path) -> dict[str, str | tuple[str, str]]:
    """Read a credentials file: a JSON object mapping access key ids to secrets
    or to ``{"secret": ..., "account_id": ...}`` objects. A key without an
    ``account_id`` acts as the broker's own account, as a bare secret does
    (``sqsqueue serve``: a 12-digit key id acts as its own account)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of access key id -> secret")
    out: dict[str, str | tuple[str, str]] = {}
    for key, value in data.items():
        if isinstance(value, str):
            out[key] = value
            continue
        if not isinstance(value, dict):
            raise ValueError(f"{path}: {key!r} must map to a secret or an object")
        unknown = sorted(set(value) - {"secret", "account_id"})
        if unknown:
            raise ValueError(
                f"{path}: {key!r} has unknown fields {unknown}; expected secret and account_id"
            )
        secret = value.get("secret")
        if not isinstance(secret, str) or not secret:
            raise ValueError(f'{path}: {key!r} needs a non-empty "secret" string')
        account = value.get("account_id")
        if account is None:
            out[key] = secret  # the broker's own account
        elif isinstance(account, str):
            out[key] = (secret, account)
        else:
            raise ValueError(
                f"{path}: {key!r} has account_id {account!r}; an AWS account id is a "
                "string of 12 digits"
            )
    return out
