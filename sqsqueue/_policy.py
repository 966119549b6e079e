"""Queue access policies: validation, AddPermission statements, evaluation.

A queue's ``Policy`` attribute is an AWS policy document (section 2.1, quotas
in section 4: 8,192 bytes, 20 statements, 50 principals, 7 actions per
statement, 10 conditions). Operations called with ``principal=<account id>``
other than the queue owner's are allowed only when a statement grants them:

* a statement applies when its ``Principal`` names the caller (``"*"``,
  ``{"AWS": "*"}``, the account id or ``arn:aws:iam::<account>:...``), its
  ``Action`` covers the operation (``"*"``, ``"sqs:*"``, ``"SQS:SendMessage"``;
  case-insensitive, ``*``/``?`` wildcards) and its ``Resource`` matches the
  queue ARN (``"*"`` and wildcards allowed; absent means this queue);
* ``NotAction`` and ``NotPrincipal``, the IAM grammar's negations, are
  accepted in their place (each statement has exactly one of ``Action`` and
  ``NotAction``, and one of ``Principal`` and ``NotPrincipal``: "mutually
  exclusive", IAM User Guide, reference_policies_elements): a ``NotAction``
  statement applies to every action it does not cover, a ``NotPrincipal``
  one to every caller it does not name. IAM says ``NotPrincipal`` "must be
  used with "Effect":"Deny". Using it with "Effect":"Allow" is not supported"
  (reference_policies_elements_notprincipal): an ``Allow`` with
  ``NotPrincipal`` grants nothing here. Whether SQS refuses such a policy
  when it is set is UNCONFIRMED (no SQS page says; sqsqueue stores it, and
  it errs on the side of refusing access). ``NotResource`` likewise applies
  to every queue it does not match. docs/aws-behaviour.md §5 has the
  finding and its sources;
* an applicable ``Deny`` wins over any ``Allow``;
* statements with a ``Condition`` are validated but not evaluated: sqsqueue has
  no request context (source ARN, IP, time of day), so such a statement never
  grants and never denies. This is the one place sqsqueue is deliberately less
  than AWS; it errs on the side of refusing.

The queue owner may do anything (a caller without ``principal`` acts as the
owner). Nine actions are the owner's alone whatever a policy says, because the
API reference says of each "Cross-account permissions don't apply to this
action": AddPermission, RemovePermission, SetQueueAttributes, CreateQueue,
DeleteQueue, TagQueue, UntagQueue, ListQueueTags and ListQueues.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from sqsqueue._validate import echo, show
from sqsqueue.errors import AccessDenied, InvalidAttributeValue, InvalidParameterValue, OverLimit

__all__ = ["ACTIONS", "add_statement", "is_allowed", "remove_statement", "validate"]

POLICY_MAX_BYTES = 8_192
STATEMENTS_MAX = 20
PRINCIPALS_MAX = 50
ACTIONS_PER_STATEMENT_MAX = 7
CONDITIONS_MAX = 10

#: Actions AddPermission accepts [BM AddPermission]; the batch variants are
#: implied by their single-message action.
ACTIONS = (
    "*",
    "ChangeMessageVisibility",
    "DeleteMessage",
    "GetQueueAttributes",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
    "PurgeQueue",
    "ReceiveMessage",
    "SendMessage",
)
#: "Cross-account permissions don't apply to this action" [BM, the API doc of
#: each]: only the owner may call these, whatever a policy says.
OWNER_ONLY = frozenset(
    {
        "AddPermission",
        "CreateQueue",
        "DeleteQueue",
        "ListQueueTags",
        "ListQueues",
        "RemovePermission",
        "SetQueueAttributes",
        "TagQueue",
        "UntagQueue",
    }
)
_IMPLIED = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}
_ACCOUNT = re.compile(r"[0-9]{12}")
_LABEL = re.compile(r"[A-Za-z0-9_-]{1,80}")


def _bad_policy(reason: str) -> InvalidAttributeValue:
    # Message texts for policy errors are UNCONFIRMED (section 14, item 1).
    return InvalidAttributeValue(f"Invalid value for the parameter Policy. Reason: {reason}")


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def validate(doc: dict[str, Any]) -> None:
    """Check a policy document's size and shape (section 4 quotas)."""
    if len(json.dumps(doc, separators=(",", ":")).encode()) > POLICY_MAX_BYTES:
        raise _bad_policy("Policy size exceeds the maximum of 8192 bytes.")
    statements = doc.get("Statement")
    if statements is None:
        raise _bad_policy("Policy is missing required element - Statement.")
    statements = _as_list(statements)
    if len(statements) > STATEMENTS_MAX:
        raise OverLimit("Policy has too many statements: the maximum is 20.")
    principals = 0
    for st in statements:
        if not isinstance(st, dict):
            raise _bad_policy("Each Statement must be a JSON object.")
        if st.get("Effect") not in ("Allow", "Deny"):
            raise _bad_policy("Each Statement needs an Effect of Allow or Deny.")
        principal_key = _one_of(st, "Principal", "NotPrincipal")
        principals += len(_principals(st[principal_key]))
        action_key = _one_of(st, "Action", "NotAction")
        actions = st[action_key]
        if not all(isinstance(a, str) for a in _as_list(actions)):
            raise _bad_policy(f"{action_key} must be a string or a list of strings.")
        if len(_as_list(actions)) > ACTIONS_PER_STATEMENT_MAX:
            raise OverLimit("A Statement may name at most 7 actions.")
        if "Resource" in st and "NotResource" in st:
            raise _bad_policy("A Statement may not have both Resource and NotResource.")
        resource_key = "NotResource" if "NotResource" in st else "Resource"
        resources = st.get(resource_key, "*")
        if not all(isinstance(r, str) for r in _as_list(resources)):
            raise _bad_policy(f"{resource_key} must be a string or a list of strings.")
        condition = st.get("Condition")
        if condition is not None:
            if not isinstance(condition, dict):
                raise _bad_policy("Condition must be a JSON object.")
            count = sum(len(v) if isinstance(v, dict) else 1 for v in condition.values())
            if count > CONDITIONS_MAX:
                raise OverLimit("A Statement may hold at most 10 conditions.")
    if principals > PRINCIPALS_MAX:
        raise OverLimit("Policy names more than 50 principals.")


def _one_of(statement: dict[str, Any], element: str, negation: str) -> str:
    """Which of ``element`` and its ``negation`` the statement has: exactly one
    (IAM: the two are mutually exclusive; one is needed)."""
    if element in statement and negation in statement:
        raise _bad_policy(f"A Statement may not have both {element} and {negation}.")
    if element in statement:
        return element
    if negation in statement:
        return negation
    article = "an" if element[0] in "AEIOU" else "a"
    raise _bad_policy(f"Each Statement needs {article} {element} or a {negation}.")


def _principals(value: Any) -> list[str]:
    if value == "*":
        return ["*"]
    if isinstance(value, dict):
        out: list[str] = []
        for key in ("AWS", "Service", "Federated", "CanonicalUser"):
            if key in value:
                items = _as_list(value[key])
                if not all(isinstance(p, str) for p in items):
                    raise _bad_policy("Principal values must be strings.")
                out.extend(items if key == "AWS" else [f"{key}:{p}" for p in items])
        if not out:
            raise _bad_policy("Principal must name at least one principal.")
        return out
    if isinstance(value, str):
        return [value]
    raise _bad_policy("Invalid Principal.")


def _names_caller(principals: Iterable[str], account: str) -> bool:
    for p in principals:
        if p in ("*", account):
            return True
        if p.startswith(f"arn:aws:iam::{account}:"):
            return True
    return False


def _covers(patterns: Iterable[str], action: str) -> bool:
    wanted = f"sqs:{_IMPLIED.get(action, action)}".lower()
    for pattern in patterns:
        p = pattern.lower()
        if p == "*" or fnmatch.fnmatchcase(wanted, p):
            return True
    return False


def is_allowed(doc: dict[str, Any] | None, principal: str, action: str, resource_arn: str) -> bool:
    """Whether ``principal`` (an account id) may perform ``action`` on the queue."""
    if doc is None or action in OWNER_ONLY:
        return False
    allowed = False
    for st in _as_list(doc.get("Statement", [])):
        if "Condition" in st:
            continue  # not evaluated: see the module docstring
        if "NotPrincipal" in st:
            if st["Effect"] == "Allow":
                continue  # "not supported" by IAM: grants nothing (module docstring)
            if _names_caller(_principals(st["NotPrincipal"]), principal):
                continue
        elif not _names_caller(_principals(st["Principal"]), principal):
            continue
        if "NotAction" in st:
            if _covers(_as_list(st["NotAction"]), action):
                continue
        elif not _covers(_as_list(st["Action"]), action):
            continue
        if "NotResource" in st:  # every resource but those listed (IAM's NotResource)
            if _names_resource(st["NotResource"], resource_arn):
                continue
        elif not _names_resource(st.get("Resource", resource_arn), resource_arn):
            continue
        if st["Effect"] == "Deny":
            return False
        allowed = True
    return allowed


def _names_resource(value: Any, resource_arn: str) -> bool:
    return any(r == "*" or fnmatch.fnmatchcase(resource_arn, r) for r in _as_list(value))


def caller_account(principal: object) -> str:
    """The account id of ``principal``: an account id or an IAM ARN."""
    if isinstance(principal, str):
        if _ACCOUNT.fullmatch(principal):
            return principal
        match = re.fullmatch(r"arn:aws[a-z-]*:(?:iam|sts)::([0-9]{12}):.+", principal)
        if match:
            return match.group(1)
    raise InvalidParameterValue(
        f"Value {show(principal)} for parameter principal is invalid. Reason: must be a "
        "12-digit account id or an IAM ARN."
    )


def access_denied(url: str) -> AccessDenied:
    # SQS's text for a refused call; UNCONFIRMED wording (section 14, item 1).
    return AccessDenied(f"Access to the resource {url} is denied.")


def add_statement(
    doc: dict[str, Any] | None,
    queue_arn: str,
    label: object,
    account_ids: object,
    actions: object,
) -> dict[str, Any]:
    """The policy after AddPermission (section 2.1, statement shape AWS-obs)."""
    if not isinstance(label, str) or not _LABEL.fullmatch(label):
        raise InvalidParameterValue(
            f"Value {echo(label)} for parameter Label is invalid. Reason: Can only include "
            "alphanumeric characters, hyphens, or underscores. 1 to 80 in length."
        )
    accounts = _string_list("AWSAccountIds", account_ids)
    for account in accounts:
        if not _ACCOUNT.fullmatch(account):
            raise InvalidParameterValue(
                f"Value {account} for parameter AWSAccountIds is invalid. Reason: An AWS "
                "account id is 12 digits."
            )
    names = _string_list("Actions", actions)
    for name in names:
        if name not in ACTIONS:
            raise InvalidParameterValue(
                f"Value SQS:{name} for parameter ActionName is invalid. Reason: Only the "
                f"queue owner is allowed to invoke this action."
            )
    if len(names) > ACTIONS_PER_STATEMENT_MAX:
        raise OverLimit("A Statement may name at most 7 actions.")
    doc = (
        dict(doc)
        if doc
        else {
            "Version": "2008-10-17",
            "Id": f"{queue_arn}/SQSDefaultPolicy",
            "Statement": [],
        }
    )
    statements = list(_as_list(doc.get("Statement", [])))
    if any(isinstance(s, dict) and s.get("Sid") == label for s in statements):
        raise InvalidParameterValue(
            f"Value {label} for parameter Label is invalid. Reason: Already exists."
        )
    principal_arns = [f"arn:aws:iam::{a}:root" for a in accounts]
    action_names = [f"SQS:{a}" for a in names]
    statements.append(
        {
            "Sid": label,
            "Effect": "Allow",
            "Principal": {"AWS": principal_arns[0] if len(principal_arns) == 1 else principal_arns},
            "Action": action_names[0] if len(action_names) == 1 else action_names,
            "Resource": queue_arn,
        }
    )
    doc["Statement"] = statements
    validate(doc)
    return doc


def remove_statement(doc: dict[str, Any] | None, label: object) -> dict[str, Any] | None:
    """The policy after RemovePermission; None once the last statement is gone."""
    statements = _as_list(doc.get("Statement", [])) if doc else []
    kept = [s for s in statements if not (isinstance(s, dict) and s.get("Sid") == label)]
    if len(kept) == len(statements):
        raise InvalidParameterValue(
            f"Value {echo(label)} for parameter Label is invalid. Reason: can't find label."
        )
    if not kept:
        return None  # removing the last statement removes the Policy (AWS-obs)
    assert doc is not None
    return {**doc, "Statement": kept}


def _string_list(param: str, value: object) -> Sequence[str]:
    if isinstance(value, str):
        value = [value]
    if (
        not isinstance(value, list | tuple)
        or not value
        or not all(isinstance(v, str) for v in value)
    ):
        raise InvalidParameterValue(
            f"Value {show(value)} for parameter {param} is invalid. Reason: must be a "
            "non-empty list of strings."
        )
    return list(value)
