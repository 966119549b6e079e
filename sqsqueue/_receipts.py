"""Receipt handles: their codec and the MAC that makes them unforgeable.

A handle is the base64 of 36 packed bytes: a format version, the queue's 7-byte
tag, the message's sequence number, the receipt number (1 for its first
receive, 2 for the next, ...) and a 128-bit token, a keyed BLAKE2b MAC of
(sequence number, receipt number) under a per-queue secret
(``docs/aws-behaviour.md`` §8). A forged or mutated handle is refused even after
its message is gone; a handle of another queue is refused by its tag.

No state of the queue lives here: :class:`Receipts` holds the queue's key, and
the lifecycle stores each message's latest token on its record.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import struct
from collections.abc import Mapping

from sqsqueue._message import SEQ_MASK, _Record
from sqsqueue._validate import show
from sqsqueue.errors import MissingParameter, ReceiptHandleIsInvalid

_HANDLE = struct.Struct(">B7sQI16s")  # version, queue tag, seq, receipt no, token
_HANDLE_VERSION = 1
_HANDLE_LEN = 48  # base64 of the 36 packed bytes, no padding
#: What a handle's token authenticates: (seq, receipt no).
_TOKEN_INPUT = struct.Struct(">QI")
_b2a = binascii.b2a_base64
_pack = _HANDLE.pack
_unpack = _HANDLE.unpack
_a2b = binascii.a2b_base64


class Receipts:
    """Issue and verify one queue's receipt handles.

    ``seed`` is 32 secret bytes (``os.urandom``, or a seeded ``random`` for
    reproducible tests, which makes handles guessable); the ARN is mixed in, so
    two queues seeded alike refuse each other's handles.
    """

    __slots__ = ("_mac", "_tag")

    def __init__(self, seed: bytes, arn: str) -> None:
        secret = hashlib.blake2b(seed + arn.encode(), digest_size=39).digest()
        self._tag = secret[:7]
        # A keyed BLAKE2b state, copied per token: cheaper than keying anew.
        self._mac = hashlib.blake2b(key=secret[7:], digest_size=16)

    def token(self, seq: int, receipt_no: int) -> bytes:
        """The token of receipt ``receipt_no`` of message ``seq``. O(1)."""
        mac = self._mac.copy()
        mac.update(_TOKEN_INPUT.pack(seq, receipt_no))
        return mac.digest()

    def issue(self, rec: _Record, seq: int, receipt_no: int) -> str:
        """A new handle for receipt ``receipt_no`` of ``rec`` (whose sequence
        number is ``seq``); its token is kept on the record, where ``verify``
        finds it. O(1); runs once per message received."""
        mac = self._mac.copy()
        mac.update(_TOKEN_INPUT.pack(seq, receipt_no))
        token = rec.token = mac.digest()
        # binascii directly: base64.b64encode's pure-Python wrapper costs as much
        # as the encoding on this hot path.
        handle = _b2a(_pack(_HANDLE_VERSION, self._tag, seq, receipt_no, token), newline=False)
        return handle.decode("ascii")

    def issue_all(self, recs: list[_Record]) -> list[str]:
        """:meth:`issue` for each of ``recs``, whose receipt numbers were just
        raised: one call for a receive's messages. O(k)."""
        base = self._mac
        tag = self._tag
        token_input = _TOKEN_INPUT.pack
        handles = []
        for rec in recs:
            seq = rec.skey & SEQ_MASK  # key_seq, inlined
            receipt_no = rec.receipt_no
            mac = base.copy()
            mac.update(token_input(seq, receipt_no))
            token = rec.token = mac.digest()
            handle = _b2a(_pack(_HANDLE_VERSION, tag, seq, receipt_no, token), newline=False)
            handles.append(handle.decode("ascii"))
        return handles

    def parse(self, handle: object) -> tuple[int, int, bytes]:
        """(seq, receipt number, token) of a handle issued by this queue, or
        AWS's error for a missing, malformed or foreign one. O(1)."""
        if not isinstance(handle, str) or not handle:
            if handle is None or handle == "":
                raise MissingParameter("The request must contain the parameter ReceiptHandle.")
            raise ReceiptHandleIsInvalid(
                f'The input receipt handle "{show(handle)}" is not a valid receipt handle.'
            )
        try:
            if len(handle) != _HANDLE_LEN:
                raise ValueError
            raw = binascii.a2b_base64(handle, strict_mode=True)
            version, tag, seq, receipt_no, token = _HANDLE.unpack(raw)
        except (ValueError, binascii.Error, struct.error, UnicodeEncodeError):
            raise invalid(handle) from None
        if version != _HANDLE_VERSION:
            raise invalid(handle)
        if tag != self._tag:
            raise ReceiptHandleIsInvalid(
                f'The receipt handle "{handle}" is not valid for this queue.'
            )
        return seq, receipt_no, token

    def latest(self, handle: object, records: Mapping[int, _Record]) -> _Record | None:
        """The stored record (of ``records``, by sequence number) whose latest
        receipt ``handle`` is; None for any other handle: malformed, foreign,
        forged, an older receipt, a message gone (``parse`` and ``verify`` tell
        which, and whether it is refused). One call for the common case of a
        delete: the stored token is compared, no MAC computed. O(1)."""
        if type(handle) is not str or len(handle) != _HANDLE_LEN:
            return None
        try:
            version, tag, seq, receipt_no, token = _unpack(_a2b(handle, strict_mode=True))
        except (ValueError, struct.error):  # binascii.Error and UnicodeError are ValueErrors
            return None
        if version != _HANDLE_VERSION or tag != self._tag:
            return None
        rec = records.get(seq)
        if (
            rec is None
            or receipt_no != rec.receipt_no
            or rec.token is None
            or not hmac.compare_digest(rec.token, token)
        ):
            return None
        return rec

    def latest_all(
        self, handles: list[object], records: Mapping[int, _Record]
    ) -> list[_Record | None]:
        """:meth:`latest` of each handle, in one call: a delete batch's. O(k)."""
        tag = self._tag
        out: list[_Record | None] = []
        for handle in handles:
            rec = None
            if type(handle) is str and len(handle) == _HANDLE_LEN:
                try:
                    version, htag, seq, receipt_no, token = _unpack(_a2b(handle, strict_mode=True))
                except (ValueError, struct.error):
                    version = 0
                if version == _HANDLE_VERSION and htag == tag:
                    rec = records.get(seq)
                    if rec is not None and (
                        receipt_no != rec.receipt_no
                        or rec.token is None
                        or not hmac.compare_digest(rec.token, token)
                    ):
                        rec = None
            out.append(rec)
        return out

    def verify(
        self, handle: str, rec: _Record | None, receipt_no: int, seq: int, token: bytes
    ) -> _Record | None:
        """``rec`` (the stored record with ``seq``, or None if gone) when the
        handle's token is one this queue issued; ReceiptHandleIsInvalid for a
        forged or mutated handle. O(1)."""
        if rec is not None and receipt_no == rec.receipt_no and rec.token is not None:
            # The latest receipt: the token stored at issue time is the MAC.
            if hmac.compare_digest(rec.token, token):
                return rec
        elif hmac.compare_digest(token, self.token(seq, receipt_no)):
            # An older receipt, or a message that is gone: recompute the MAC.
            return rec
        raise invalid(handle)


def invalid(handle: str) -> ReceiptHandleIsInvalid:
    return ReceiptHandleIsInvalid(
        f'The input receipt handle "{handle}" is not a valid receipt handle.'
    )
