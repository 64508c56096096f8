"""The exception class chosen for each SQLSTATE (no server needed)."""

from __future__ import annotations

import pytest

from memtx_client import (Conflict, InvalidArgument, InvalidState, LimitExceeded, MemtxError,
                          NotFound, PermissionDenied, Retryable)
from memtx_client.errors import error_class


@pytest.mark.parametrize("sqlstate, cls", [
    ("22003", InvalidArgument), ("22P02", InvalidArgument), ("22023", InvalidArgument),
    ("42704", NotFound), ("42883", NotFound), ("42501", PermissionDenied),
    ("23505", Conflict), ("23P01", Conflict), ("25000", InvalidState), ("25006", InvalidState),
    ("25P03", InvalidState), ("55000", InvalidState), ("0A000", InvalidState),
    ("54000", LimitExceeded), ("53400", LimitExceeded), ("40001", Retryable),
    ("40P01", Retryable), ("39P01", MemtxError), ("XX000", MemtxError),
])
def test_error_class(sqlstate: str, cls: type) -> None:
    assert error_class(sqlstate) is cls
    err = cls("message", sqlstate, "Detail.", "Hint.")
    assert isinstance(err, MemtxError)
    assert err.retryable == sqlstate.startswith("40")
    assert err.to_json() == {"sqlstate": sqlstate, "message": "message",
                             "detail": "Detail.", "hint": "Hint."}
    assert str(err) == f"{sqlstate}: message"
