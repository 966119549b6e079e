"""Receipt handles: their codec and the MAC that makes them unforgeable.

A handle is the base64 of 36 packed bytes: a format version, the queue's 7-byte
tag, the message's sequence number, the receipt number (1 for its first
receive, 2 for the next, ...) and a 128-bit token (``docs/aws-behaviour.md``
§8). A forged or mutated handle is refused even after its message is gone; a
handle of another queue is refused by its tag.

The token is a MAC of (sequence number, receipt number) under a per-queue
secret. Version 2 handles (those issued now) take it from a keyed BLAKE2b-512
of (sequence number // 4, receipt number): its 64 bytes are the tokens of the
four messages of that block, 16 bytes each, so a receive of consecutive
messages computes one MAC per four of them. Each token is its own part of a
pseudo-random output, so knowing the others of its block tells nothing of it.
Version 1 handles (issued before; a durable broker keeps their messages) carry
a keyed BLAKE2b-128 of (sequence number, receipt number) and are still
verified with it: the two MACs have different digest sizes, which BLAKE2 keys
into its parameter block, so neither answers for the other.

No state of the queue lives here: :class:`Receipts` holds the queue's key, and
the lifecycle stores each message's latest token on its record.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
import struct
from operator import itemgetter
from typing import Protocol

from sqsqueue._message import R_RECEIPT, R_SKEY, R_TOKEN, SEQ_MASK, _Record
from sqsqueue._validate import show
from sqsqueue.errors import MissingParameter, ReceiptHandleIsInvalid

_HANDLE = struct.Struct(">B7sQI16s")  # version, queue tag, seq, receipt no, token
#: The version of the handles issued; both are accepted.
_HANDLE_VERSION = 2
_VERSIONS = (1, 2)
_HANDLE_LEN = 48  # base64 of the 36 packed bytes, no padding
#: What a token authenticates: (seq, receipt no) in version 1, (seq >> 2,
#: receipt no) in version 2.
_TOKEN_INPUT = struct.Struct(">QI")
#: Version 2: 2**_BLOCK_BITS tokens of 16 bytes per 64-byte MAC.
_BLOCK_BITS = 2
_SLOT = (1 << _BLOCK_BITS) - 1
_b2a = binascii.b2a_base64
_pack = _HANDLE.pack
_unpack = _HANDLE.unpack
_a2b = binascii.a2b_base64
_token_input = _TOKEN_INPUT.pack
_STR = {str}
#: ``_SPLIT[k](text)``: the k handles whose base64 texts were joined into
#: ``text`` (2 to 10: a receive's).
_SPLIT = {
    k: itemgetter(*(slice(i * _HANDLE_LEN, (i + 1) * _HANDLE_LEN) for i in range(k)))
    for k in range(2, 11)
}
_LENGTH = {_HANDLE_LEN}


class Lookup(Protocol):
    """Stored records by sequence number (the lifecycle's ``_store.Records``):
    ``get``, and its blocks (of ``1 << block_bits`` sequence numbers) for the
    batch path's inlined lookups."""

    blocks: dict[int, dict[int, _Record]]
    block_bits: int

    def get(self, seq: int) -> _Record | None: ...


class Receipts:
    """Issue and verify one queue's receipt handles.

    ``seed`` is 32 secret bytes (``os.urandom``, or a seeded ``random`` for
    reproducible tests, which makes handles guessable); the ARN is mixed in, so
    two queues seeded alike refuse each other's handles.
    """

    __slots__ = ("_block_mac", "_mac", "_tag")

    def __init__(self, seed: bytes, arn: str) -> None:
        secret = hashlib.blake2b(seed + arn.encode(), digest_size=39).digest()
        self._tag = secret[:7]
        # Keyed BLAKE2b states, copied per MAC: cheaper than keying anew.
        self._mac = hashlib.blake2b(key=secret[7:], digest_size=16)  # version 1
        self._block_mac = hashlib.blake2b(key=secret[7:], digest_size=64)  # version 2

    def token(self, seq: int, receipt_no: int, version: int = _HANDLE_VERSION) -> bytes:
        """The token of receipt ``receipt_no`` of message ``seq`` in a handle
        of ``version``. O(1)."""
        if version == 1:
            mac = self._mac.copy()
            mac.update(_token_input(seq, receipt_no))
            return mac.digest()
        mac = self._block_mac.copy()
        mac.update(_token_input(seq >> _BLOCK_BITS, receipt_no))
        at = (seq & _SLOT) << 4
        return mac.digest()[at : at + 16]

    def issue(self, seq: int, receipt_no: int) -> tuple[bytes, str]:
        """A new handle for receipt ``receipt_no`` of message ``seq``, and its
        token, which the lifecycle keeps in the record's receive state, where
        ``verify`` finds it. O(1)."""
        # token(seq, receipt_no) of a version 2 handle, inlined (a receive of
        # one message pays it).
        mac = self._block_mac.copy()
        mac.update(_token_input(seq >> _BLOCK_BITS, receipt_no))
        at = (seq & _SLOT) << 4
        token = mac.digest()[at : at + 16]
        # binascii directly: base64.b64encode's pure-Python wrapper costs as much
        # as the encoding on this hot path.
        handle = _b2a(_pack(_HANDLE_VERSION, self._tag, seq, receipt_no, token), newline=False)
        return token, handle.decode("ascii")

    def issue_all(self, recs: list[_Record]) -> tuple[list[bytes], list[str]]:
        """:meth:`issue` of the next receipt (one past ``R_RECEIPT``) of each
        of ``recs``, the records a receive delivers, as they are before it:
        one call for a receive's messages; their tokens and handles. Messages
        of one block with the same receipt number (consecutive messages
        received for the first time) share one MAC, and the handles are
        encoded by one base64 call (36 bytes are 12 whole base64 groups, so
        the handles' text is the concatenation of each one's). O(k)."""
        base = self._block_mac
        tag = self._tag
        packed = []
        tokens = []
        last = -1
        digest = b""
        for rec in recs:
            seq = rec[R_SKEY] & SEQ_MASK  # key_seq, inlined
            receipt_no = rec[R_RECEIPT] + 1
            block = ((seq >> _BLOCK_BITS) << 32) | receipt_no  # receipt numbers fit 32 bits
            if block != last:
                last = block
                mac = base.copy()
                mac.update(_token_input(seq >> _BLOCK_BITS, receipt_no))
                digest = mac.digest()
            at = (seq & _SLOT) << 4
            token = digest[at : at + 16]
            tokens.append(token)
            packed.append(_pack(_HANDLE_VERSION, tag, seq, receipt_no, token))
        text = _b2a(b"".join(packed), newline=False).decode("ascii")
        if len(packed) == 1:
            return tokens, [text]
        split = _SPLIT.get(len(packed))
        if split is not None:
            # Each handle's slice of the text, taken in C by one itemgetter
            # (half the cost of a comprehension of slices).
            return tokens, list(split(text))
        return tokens, [text[i : i + _HANDLE_LEN] for i in range(0, len(text), _HANDLE_LEN)]

    def parse(self, handle: object) -> tuple[int, int, bytes, int]:
        """(seq, receipt number, token, version) of a handle issued by this
        queue, or AWS's error for a missing, malformed or foreign one. O(1)."""
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
        if version not in _VERSIONS:
            raise invalid(handle)
        if tag != self._tag:
            raise ReceiptHandleIsInvalid(
                f'The receipt handle "{handle}" is not valid for this queue.'
            )
        return seq, receipt_no, token, version

    def latest(self, handle: object, records: Lookup) -> _Record | None:
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
        rec = records.get(seq)
        if (
            rec is None
            or version != _HANDLE_VERSION  # version 1: see verify
            or tag != self._tag
            or receipt_no != rec[R_RECEIPT]
            or rec[R_TOKEN] is None
            or not hmac.compare_digest(rec[R_TOKEN], token)
        ):
            return None
        return rec

    def latest_all(self, handles: list[object], records: Lookup) -> list[_Record | None]:
        """:meth:`latest` of each handle, in one call: a delete batch's. O(k)."""
        tag = self._tag
        out: list[_Record | None] = []
        if {*map(type, handles)} == _STR and {*map(len, handles)} == _LENGTH:  # type: ignore[arg-type]
            # Handles of the right length, decoded by one base64 call (each is
            # 12 whole base64 groups) and unpacked in C; a malformed one fails
            # the whole decoding, and each is then decoded alone.
            try:
                fields = _HANDLE.iter_unpack(_a2b("".join(handles), strict_mode=True))  # type: ignore[arg-type]
            except (ValueError, struct.error):  # padding inside: fewer bytes
                pass
            else:
                blocks = records.blocks
                bits = records.block_bits
                low = (1 << bits) - 1
                for version, htag, seq, receipt_no, token in fields:
                    try:  # records.get, inlined: subscripts cost less than calls
                        rec = blocks[seq >> bits][seq & low]
                    except KeyError:
                        rec = None
                    if (
                        rec is not None
                        and version == _HANDLE_VERSION  # version 1: see verify
                        and htag == tag
                        and receipt_no == rec[R_RECEIPT]
                        # latest's ``rec[R_TOKEN] is not None``: a record has no
                        # token exactly while its receipt number is 0
                        # (check_indexes), and the two numbers are equal here.
                        and receipt_no
                        and hmac.compare_digest(rec[R_TOKEN], token)
                    ):
                        out.append(rec)
                    else:
                        out.append(None)
                return out
        for handle in handles:
            rec = None
            if type(handle) is str and len(handle) == _HANDLE_LEN:
                try:
                    version, htag, seq, receipt_no, token = _unpack(_a2b(handle, strict_mode=True))
                except (ValueError, struct.error):  # binascii.Error, UnicodeError are ValueErrors
                    version = 0
                if version == _HANDLE_VERSION and htag == tag:  # version 1: see verify
                    rec = records.get(seq)
                    if rec is not None and (
                        receipt_no != rec[R_RECEIPT]
                        or rec[R_TOKEN] is None
                        or not hmac.compare_digest(rec[R_TOKEN], token)
                    ):
                        rec = None
            out.append(rec)
        return out

    def verify(
        self,
        handle: str,
        rec: _Record | None,
        receipt_no: int,
        seq: int,
        token: bytes,
        version: int = _HANDLE_VERSION,
    ) -> _Record | None:
        """``rec`` (the stored record with ``seq``, or None if gone) when the
        handle's token is one this queue issued; ReceiptHandleIsInvalid for a
        forged or mutated handle. O(1)."""
        if (
            version == _HANDLE_VERSION
            and rec is not None
            and receipt_no == rec[R_RECEIPT]
            and rec[R_TOKEN] is not None
        ):
            # The latest receipt: the token stored at issue time is the MAC.
            # (A version 1 handle is always checked by its own MAC: the version
            # is authenticated too, so a handle whose version was changed fails.)
            if hmac.compare_digest(rec[R_TOKEN], token):
                return rec
        elif hmac.compare_digest(token, self.token(seq, receipt_no, version)):
            # An older receipt, or a message that is gone: recompute the MAC.
            return rec
        raise invalid(handle)


def invalid(handle: str) -> ReceiptHandleIsInvalid:
    return ReceiptHandleIsInvalid(
        f'The input receipt handle "{handle}" is not a valid receipt handle.'
    )
