"""Errors of the HTTP transport (request framing and authentication).

These are AWS's common errors (API Reference, CommonErrors), raised before a
request reaches an operation; both protocol codecs encode them like any
:class:`~sqsqueue.errors.SQSError`. ``coral = True`` marks the generic errors
AWS names in the ``com.amazon.coral.service`` namespace on the JSON protocol
(section 1.4). Messages are the ones AWS's front end is known to send where
known; the others are marked UNCONFIRMED.
"""

from __future__ import annotations

from typing import ClassVar

from sqsqueue.errors import SQSError


class TransportError(SQSError):
    """A request refused before any operation ran."""

    coral: ClassVar[bool] = True
    sender_fault = True
    http_status = 400


# One class per error, alike in shape on purpose: each declares its facts (codes,
# status, message) where callers except it by name.


class InvalidRequest(TransportError, ValueError):
    """A request that is not HTTP SQS speaks (wrong method, too many headers).
    The code is UNCONFIRMED: AWS's front end answers these itself."""

    code = query_code = wire_type = "InvalidRequest"


class InvalidHttpRequest(TransportError, ValueError):
    """Bytes that are not an HTTP/1.1 request (a bad chunk size or
    Content-Length, a request line or header section HTTP does not allow).
    SQS API Reference, Common Errors (API versions 2008-01-01 to 2011-10-01):
    ``InvalidHttpRequest``, ``Invalid HTTP request. Reason: <reason>.``, 400."""

    code = query_code = wire_type = "InvalidHttpRequest"


class MalformedQueryString(TransportError, ValueError):
    """A query-protocol request whose form data cannot be read (CommonErrors:
    MalformedQueryString, documented as HTTP 404)."""

    code = query_code = "MalformedQueryString"
    wire_type = "MalformedQueryStringException"
    http_status = 404


class MissingAction(TransportError, ValueError):
    """A query-protocol request without ``Action`` (CommonErrors: MissingAction)."""

    code = query_code = "MissingAction"
    wire_type = "MissingActionException"
    default_message = "The request must contain the parameter Action."


class UnknownOperation(TransportError, ValueError):
    """A GET on a queue URL that names no ``Action``: AWS answers 404 with the
    body ``<UnknownOperationException/>`` (recorded; no code, message or
    request id in it: ``_query.encode_error``). ``default_message`` is
    sqsqueue's own, for logs."""

    code = query_code = wire_type = "UnknownOperationException"
    http_status = 404
    default_message = "The request names no operation."


class NoSuchVersion(TransportError, ValueError):
    """A query-protocol request naming an API version other than 2012-11-05.
    SQS API Reference, Common Errors (API versions 2007-05-01 to 2011-10-01):
    ``NoSuchVersion``, "An incorrect version was specified in the request.",
    400. Whether AWS still accepts the older versions 2011-10-01 and
    2009-02-01 is UNCONFIRMED; sqsqueue speaks only 2012-11-05's shapes."""

    code = query_code = wire_type = "NoSuchVersion"


class RequestTooLarge(TransportError, ValueError):
    """A body over the endpoint's limit, refused before it is read whole."""

    code = query_code = "RequestEntityTooLarge"
    wire_type = "RequestEntityTooLargeException"
    http_status = 413


class MissingAuthenticationToken(TransportError, PermissionError):
    """An unsigned request to an endpoint that requires Signature V4."""

    code = query_code = "MissingAuthenticationToken"
    wire_type = "MissingAuthenticationTokenException"
    http_status = 403
    default_message = "Request is missing Authentication Token"


class IncompleteSignature(TransportError, PermissionError):
    """An Authorization header that is not a complete AWS4-HMAC-SHA256 signature."""

    code = query_code = "IncompleteSignature"
    wire_type = "IncompleteSignatureException"
    http_status = 400


class InvalidClientTokenId(TransportError, PermissionError):
    """A signature by an access key the endpoint does not know."""

    code = query_code = "InvalidClientTokenId"
    wire_type = "UnrecognizedClientException"
    http_status = 403
    default_message = "The security token included in the request is invalid."


class SignatureDoesNotMatch(TransportError, PermissionError):
    """A signature that does not verify (wrong secret, altered request, or too old)."""

    code = query_code = "SignatureDoesNotMatch"
    wire_type = "InvalidSignatureException"
    http_status = 403
    default_message = (
        "The request signature we calculated does not match the signature you provided. "
        "Check your AWS Secret Access Key and signing method. Consult the service "
        "documentation for details."
    )
