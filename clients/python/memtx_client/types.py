"""The typed results of memtx calls.

Each is a frozen dataclass built from one result row; ``to_json()`` gives a
JSON-serialisable dict (timestamps as ISO 8601 text, ranges in PostgreSQL's
text form), which is what the tool dispatcher returns to a model.
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any, Dict, List, Mapping, Optional, Type, TypeVar, Union

#: A JSON value as Python holds it (what jsonb columns decode to).
JSON = Union[None, bool, int, float, str, List[Any], Dict[str, Any]]

T = TypeVar("T", bound="Row")


def jsonable(value: Any) -> Any:
    """value with every timestamp turned into ISO 8601 text, recursively."""
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    if isinstance(value, Row):
        return value.to_json()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


@dataclasses.dataclass(frozen=True)
class Row:
    """Base of the result rows: built from a dict row, serialised by to_json()."""

    @classmethod
    def columns(cls) -> List[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def from_row(cls: Type[T], row: Mapping[str, Any]) -> T:
        return cls(**{name: row[name] for name in cls.columns()})

    def to_json(self) -> Dict[str, Any]:
        return {name: jsonable(getattr(self, name)) for name in self.columns()}


@dataclasses.dataclass(frozen=True)
class Record(Row):
    """A memory record as ``read`` and ``lookup`` return it (its public columns)."""

    id: int
    tx_id: int
    namespace: str
    entity: str
    attribute: str
    value: JSON
    kind: str
    state: str
    source: Optional[str]
    authority: float
    confidence: float
    owner: str
    readers: List[str]
    writers: List[str]
    scope: str
    valid: str
    observed_at: Optional[datetime.datetime]
    reason: Optional[str]


@dataclasses.dataclass(frozen=True)
class Recalled(Row):
    """One ranked match of ``recall``."""

    record_id: int
    entity: str
    attribute: str
    value: JSON
    rank: float


@dataclasses.dataclass(frozen=True)
class Similar(Row):
    """One match of ``recall_similar`` (SPEC §19): ``distance`` is the model's distance to
    the query's embedding (None for a record only the query's words found), ``rank`` the
    sum of 1/(60 + position) over the rankings that found it."""

    record_id: int
    entity: str
    attribute: str
    value: JSON
    distance: Optional[float]
    rank: float


@dataclasses.dataclass(frozen=True)
class CommitResult(Row):
    """What the commit pipeline decided for one staged record."""

    record_id: int
    state: str
    reason: Optional[str]


@dataclasses.dataclass(frozen=True)
class Repair(Row):
    """One rollback-log row written by ``abort`` or ``revoke`` (the root, then each repair)."""

    id: int
    root_id: int
    record_id: int
    kind: str
    action: str
    reason: str
    note: Optional[str]


@dataclasses.dataclass(frozen=True)
class GateResult(Row):
    """Whether an irreversible tool may run now; a refusal is a result, not an error."""

    allowed: bool
    reason: Optional[str]
    blockers: List[int]


@dataclasses.dataclass(frozen=True)
class ActResult(Row):
    """The decision on one tool call; an allowed call's ``action_id`` is its tool_action record.
    ``repeated``: the call returned the stored decision of its effect key's first call."""

    allowed: bool
    reason: Optional[str]
    action_id: Optional[int]
    blockers: List[int]
    repeated: bool


@dataclasses.dataclass(frozen=True)
class ProposeResult(Row):
    """What ``propose`` did: the transaction it ran in, the record and its commit outcome."""

    tx_id: int
    record_id: int
    state: str
    reason: Optional[str]


@dataclasses.dataclass(frozen=True)
class HistoryEntry(Row):
    """One state change of a record (SPEC §13): no value, its time and global position."""

    record_id: int
    state: str
    reason: Optional[str]
    at: datetime.datetime
    pos: int


@dataclasses.dataclass(frozen=True)
class WriterEpoch(Row):
    """One fence of a role (SPEC §12): the epoch it opened; ``unfenced_at`` None while fenced."""

    role_name: str
    epoch: int
    pos: int
    fenced_at: datetime.datetime
    unfenced_at: Optional[datetime.datetime]


@dataclasses.dataclass(frozen=True)
class Outcome(Row):
    """The disposition of a proposal id (SPEC §10)."""

    record_id: int
    tx_id: int
    state: str
    reason: Optional[str]
    tx_status: str
