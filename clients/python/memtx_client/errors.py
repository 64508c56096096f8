"""Errors raised by the memtx client.

Every error PostgreSQL reports for a memtx call becomes a :class:`MemtxError`
(or one of its subclasses, chosen by SQLSTATE) carrying the SQLSTATE, the
message, the detail and the hint.  Refusals by the action gate are not errors:
``gate`` and ``act`` return them as results.  Connection failures (SQLSTATE
class 08, or no SQLSTATE at all) are left as psycopg raised them.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

import psycopg


class MemtxError(Exception):
    """An error reported by memtx (or PostgreSQL) for one call."""

    def __init__(self, message: str, sqlstate: Optional[str] = None,
                 detail: Optional[str] = None, hint: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate
        self.detail = detail
        self.hint = hint

    @property
    def retryable(self) -> bool:
        """Whether repeating the same call may succeed (serialization failure, deadlock)."""
        return self.sqlstate is not None and self.sqlstate.startswith("40")

    def to_json(self) -> Dict[str, Any]:
        """The error as a JSON-serialisable dict (what a tool result carries)."""
        return {"sqlstate": self.sqlstate, "message": self.message,
                "detail": self.detail, "hint": self.hint}

    def __str__(self) -> str:
        return f"{self.sqlstate}: {self.message}" if self.sqlstate else self.message


class InvalidArgument(MemtxError, ValueError):
    """Bad input: a value out of range or of the wrong form (SQLSTATE class 22).  The
    client raises it too, before sending anything, for an enum argument outside its
    labels (22P02, naming the argument and listing the labels)."""


class NotFound(MemtxError):
    """An unknown or unreadable transaction, record or function (42704, 42883, 02000)."""


class PermissionDenied(MemtxError):
    """The calling role may not do this (42501): a harness operation, another agent's
    transaction, a namespace the role is not a member of, a fenced writer."""


class Conflict(MemtxError):
    """A uniqueness rule refused the call (class 23): a proposal id or effect key
    already bound to other content, tool, agent or arguments."""


class InvalidState(MemtxError):
    """The call does not fit the state it meets (class 25, 55, 0A000): an ended
    transaction (25000), an expired lease (25P03), a standby (25006), a refused
    SQL isolation level (0A000), memtx not preloaded (55000)."""


class LimitExceeded(MemtxError):
    """A limit was reached (class 54, 53): ``memtx.max_staged``, a value over 1 MB,
    ``memtx.read_set_buffer``."""


class Retryable(MemtxError):
    """A serialization failure or deadlock (class 40): the call can be repeated."""


class NoTransaction(MemtxError):
    """The call needs a memtx transaction and the session has none (begin one first)."""


class EmbeddingError(MemtxError):
    """Embedding failed: the embedder raised (its exception is the cause), or answered other
    than one vector of finite numbers per text.  Nothing was written."""


class UnregisteredToolWarning(UserWarning):
    """``act`` on a tool memtx.register_tool never registered: legal (memtx treats it as
    irreversible), but usually a misspelt or made-up tool name."""


_BY_CODE: Dict[str, Type[MemtxError]] = {
    "42501": PermissionDenied,
    "42704": NotFound,
    "42883": NotFound,
    "0A000": InvalidState,
}
_BY_CLASS: Dict[str, Type[MemtxError]] = {
    "02": NotFound,
    "22": InvalidArgument,
    "23": Conflict,
    "25": InvalidState,
    "40": Retryable,
    "53": LimitExceeded,
    "54": LimitExceeded,
    "55": InvalidState,
}


def error_class(sqlstate: str) -> Type[MemtxError]:
    """The exception class for a SQLSTATE (MemtxError when no subclass fits)."""
    return _BY_CODE.get(sqlstate, _BY_CLASS.get(sqlstate[:2], MemtxError))


def from_psycopg(err: psycopg.Error) -> Optional[MemtxError]:
    """The MemtxError for a psycopg error, or None when it is no error of a call: no
    SQLSTATE, a connection failure (class 08), or a report that ends the session
    (FATAL or PANIC severity, e.g. 57P01 when the server shuts down)."""
    code = err.sqlstate
    if code is None or code.startswith("08") or err.diag.severity_nonlocalized in ("FATAL", "PANIC"):
        return None
    diag = err.diag
    return error_class(code)(diag.message_primary or str(err), code,
                             diag.message_detail, diag.message_hint)
