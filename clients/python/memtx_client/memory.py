"""One agent's memtx session: a memtx transaction per turn, the operations as methods.

A memtx transaction is logical and long-lived: it spans many SQL calls (one
agent turn).  Each method here is one memtx function call run in
``conn.transaction()`` -- its own SQL transaction on an idle connection, a
savepoint inside a transaction the caller opened -- so a failed call writes
nothing and leaves the memtx transaction usable.  The principal is the role
the connection runs as: give each agent a connection of its own (or ``SET
ROLE`` to its role); connection pooling is psycopg's business (a memtx
transaction may outlive the connection that began it).

Arguments are sent as bound parameters by their SQL names (named-argument
notation), each cast to its declared SQL type; an argument left as ``None``
is not sent, so the function's default applies.
"""

from __future__ import annotations

import contextlib
import datetime
from typing import (Any, Dict, Iterator, List, Mapping, Optional, Sequence,
                    Type, TypeVar, Union)

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from .errors import MemtxError, NoTransaction, from_psycopg
from .types import (JSON, ActResult, CommitResult, GateResult, HistoryEntry,
                    Outcome, ProposeResult, Recalled, Record, Repair, Row,
                    WriterEpoch)

T = TypeVar("T", bound=Row)

#: SQL types of the content arguments of stage and propose (SPEC §4, §10).
_CONTENT: Dict[str, str] = {
    "entity": "text", "attribute": "text", "value": "jsonb", "kind": "memtx.kind",
    "source": "text", "confidence": "double precision", "derived_from": "bigint[]",
    "scope": "memtx.scope", "readers": "text[]", "writers": "text[]", "valid": "tstzrange",
    "observed_at": "timestamptz", "expected_head": "bigint", "proposal": "text"}

#: SQL types of the named arguments of each memtx function this client calls.
SIGNATURES: Dict[str, Dict[str, str]] = {
    "begin": {"tier": "memtx.risk_tier", "agent": "text", "namespace": "text",
              "isolation": "memtx.isolation"},
    "recall": {"tx": "bigint", "query": "text", "k": "integer", "entity_prefix": "text",
               "valid_at": "timestamptz"},
    "read": {"tx": "bigint", "entity": "text", "attribute": "text"},
    "stage": {"tx": "bigint", **_CONTENT},
    "propose": {**_CONTENT, "namespace": "text"},
    "commit": {"tx": "bigint"},
    "abort": {"tx": "bigint"},
    "revoke": {"record": "bigint", "note": "text"},
    "gate": {"tx": "bigint", "tool": "text"},
    "act": {"tx": "bigint", "tool": "text", "args": "jsonb", "derived_from": "bigint[]",
            "effect_key": "text"},
    "lookup": {"entity": "text", "attribute": "text", "namespace": "text", "valid_at": "timestamptz"},
    "outcome": {"proposal": "text", "namespace": "text"},
    "read_as_of": {"at": "timestamptz", "entity": "text", "attribute": "text",
                   "namespace": "text", "valid_at": "timestamptz"},
    "restore": {"tx": "bigint", "entity": "text", "attribute": "text", "at": "timestamptz",
                "valid_at": "timestamptz"},
    "fence": {"role": "text"},
    "unfence": {"role": "text"},
    "erase": {"record": "bigint", "note": "text"},
    "tool_specs": {"format": "text"},
}

#: The tables read directly (what no function returns): a record's history, in
#: order, and the writer epochs the caller may see (both under row-level security).
_HISTORY = sql.SQL("SELECT record_id, state, reason, at, pos FROM memtx.history"
                   " WHERE record_id = %(record)s::bigint ORDER BY pos, at")
_WRITER_EPOCHS = sql.SQL("SELECT role_name, epoch, pos, fenced_at, unfenced_at"
                         " FROM memtx.writer_epochs WHERE %(role)s::text IS NULL"
                         " OR role_name = %(role)s::text ORDER BY role_name, epoch")

#: A timestamp argument: a datetime or ISO 8601 text.
Instant = Union[str, datetime.datetime]


def _call(function: str, args: Mapping[str, Any],
          columns: Optional[Sequence[str]] = None) -> sql.Composed:
    """SELECT columns FROM memtx.function(name => %(name)s::type, ...) for the given args."""
    types = SIGNATURES[function]
    unknown = set(args) - set(types)
    if unknown:
        raise TypeError(f"memtx.{function} has no argument {', '.join(sorted(unknown))}")
    params = sql.SQL(", ").join(
        sql.SQL("{} => {}::{}").format(sql.Identifier(name), sql.Placeholder(name),
                                       sql.SQL(types[name]))
        for name in args)
    # valid is a range: its text form is what a model reads and writes
    cols = sql.SQL("*") if columns is None else sql.SQL(", ").join(
        sql.SQL("valid::text AS valid") if c == "valid" else sql.Identifier(c)
        for c in columns)
    return sql.SQL("SELECT {} FROM memtx.{}({})").format(cols, sql.Identifier(function), params)


def _present(**args: Any) -> Dict[str, Any]:
    """The arguments that were given (None means: let the SQL default apply)."""
    return {k: v for k, v in args.items() if v is not None}


def _content(entity: str, attribute: str, value: JSON,
             derived_from: Optional[Sequence[int]], readers: Optional[Sequence[str]],
             writers: Optional[Sequence[str]], **rest: Any) -> Dict[str, Any]:
    """The given content arguments of stage and propose, as the driver sends them."""
    return _present(entity=entity, attribute=attribute, value=Jsonb(value),
                    derived_from=None if derived_from is None else list(derived_from),
                    readers=None if readers is None else list(readers),
                    writers=None if writers is None else list(writers), **rest)


class Memory:
    """An agent's memory session in one namespace, over one psycopg connection.

    >>> mem = Memory(conn, namespace="shop")
    >>> with mem.turn():
    ...     rid = mem.stage("order:841", "refund_eligible", True, source="order_lookup")
    ...     mem.commit()
    """

    def __init__(self, conn: "psycopg.Connection[Any]", namespace: str = "default",
                 *, tx: Optional[int] = None) -> None:
        self.conn = conn
        self.namespace = namespace
        self._tx = tx
        self._open = tx is not None
        #: what the last commit() (also the one turn() makes) decided
        self.last_commit: List[CommitResult] = []

    # -- plumbing -------------------------------------------------------------

    def _rows(self, function: str, args: Mapping[str, Any],
              columns: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
        return self._execute(_call(function, args, columns), args)

    def _execute(self, query: Union[sql.SQL, sql.Composed], args: Mapping[str, Any]) -> List[Dict[str, Any]]:
        try:
            with self.conn.transaction():
                with self.conn.cursor(row_factory=dict_row) as cur:
                    cur.execute(query, args)
                    return cur.fetchall()
        except psycopg.Error as err:
            mapped = from_psycopg(err)
            if mapped is None:
                raise
            raise mapped from err

    def _typed(self, cls: Type[T], function: str, args: Mapping[str, Any]) -> List[T]:
        return [cls.from_row(r) for r in self._rows(function, args, cls.columns())]

    def _scalar(self, function: str, args: Mapping[str, Any]) -> Any:
        return next(iter(self._rows(function, args)[0].values()))

    @property
    def tx(self) -> int:
        """The current memtx transaction (NoTransaction when none was begun)."""
        if self._tx is None:
            raise NoTransaction("no memtx transaction: call begin() or use turn() first")
        return self._tx

    @property
    def is_open(self) -> bool:
        """Whether this session began (or attached) a transaction it has not ended."""
        return self._open

    # -- transactions ---------------------------------------------------------

    def begin(self, *, tier: Optional[str] = None, agent: Optional[str] = None,
              isolation: Optional[str] = None) -> int:
        """Open a memtx transaction in the namespace and make it current.  tier, agent
        and isolation are for a harness opening a turn on an agent's behalf."""
        tx = int(self._scalar("begin", _present(namespace=self.namespace, tier=tier,
                                                agent=agent, isolation=isolation)))
        self.attach(tx)
        self.last_commit = []
        return tx

    def attach(self, tx: int) -> None:
        """Make an existing memtx transaction current (e.g. one a harness began)."""
        self._tx = tx
        self._open = True

    def commit(self) -> List[CommitResult]:
        """Run the commit pipeline; one result per staged record, in staging order.
        Idempotent: a repeat returns the stored outcome."""
        self.last_commit = self._typed(CommitResult, "commit", {"tx": self.tx})
        self._open = False
        return self.last_commit

    def abort(self) -> List[Repair]:
        """Abort the transaction: its staging is revoked and repaired like any retraction."""
        repairs = self._typed(Repair, "abort", {"tx": self.tx})
        self._open = False
        return repairs

    @contextlib.contextmanager
    def turn(self, *, tier: Optional[str] = None, agent: Optional[str] = None,
             isolation: Optional[str] = None) -> Iterator["Memory"]:
        """One agent turn: begin; on leaving, commit if still open (the outcome is in
        ``last_commit``); on an exception, abort if still open and re-raise."""
        self.begin(tier=tier, agent=agent, isolation=isolation)
        try:
            yield self
        except BaseException as exc:
            if self._open:
                try:
                    self.abort()
                except (MemtxError, psycopg.Error) as abort_err:
                    exc.add_note(f"memtx.abort({self._tx}) failed too: {abort_err}")
            raise
        if self._open:
            self.commit()

    # -- reads ----------------------------------------------------------------

    def read(self, entity: Optional[str] = None, attribute: Optional[str] = None) -> List[Record]:
        """What the transaction sees (a slot, an entity, or the namespace); joins its read set."""
        return self._typed(Record, "read", _present(tx=self.tx, entity=entity, attribute=attribute))

    def recall(self, query: str, k: Optional[int] = None,
               entity_prefix: Optional[str] = None,
               valid_at: Optional[Instant] = None) -> List[Recalled]:
        """The best k visible full-text matches (valid at ``valid_at``, when given), best
        first; they join the read set."""
        return self._typed(Recalled, "recall",
                           _present(tx=self.tx, query=query, k=k, entity_prefix=entity_prefix,
                                    valid_at=valid_at))

    def lookup(self, entity: str, attribute: Optional[str] = None,
               valid_at: Optional[Instant] = None) -> List[Record]:
        """Active records on the slot (or entity) readable by the role (valid at ``valid_at``,
        when given), without a transaction: no read set, no lease, no write (works on a hot
        standby)."""
        return self._typed(Record, "lookup",
                           _present(entity=entity, attribute=attribute, namespace=self.namespace,
                                    valid_at=valid_at))

    def outcome(self, proposal: str) -> Optional[Outcome]:
        """The disposition of a proposal id, or None when unknown or unreadable."""
        rows = self._typed(Outcome, "outcome", {"proposal": proposal, "namespace": self.namespace})
        return rows[0] if rows else None

    def history(self, record: int) -> List[HistoryEntry]:
        """Every state change of a record, in ``pos`` order (SPEC §13); empty when the
        record does not exist or the role may not read it.  No transaction needed."""
        return [HistoryEntry.from_row(r) for r in self._execute(_HISTORY, {"record": record})]

    def read_as_of(self, at: Instant, entity: Optional[str] = None,
                   attribute: Optional[str] = None,
                   valid_at: Optional[Instant] = None) -> List[Record]:
        """The records of the namespace (or entity, or slot) that were active at ``at``,
        with their state and reason as then, in id order; ``valid_at`` keeps those whose
        validity contains it.  No transaction needed; writes nothing."""
        return self._typed(Record, "read_as_of", _present(
            at=at, entity=entity, attribute=attribute, namespace=self.namespace,
            valid_at=valid_at))

    # -- writes ---------------------------------------------------------------

    def stage(self, entity: str, attribute: str, value: JSON, *,
              kind: Optional[str] = None, source: Optional[str] = None,
              confidence: Optional[float] = None, derived_from: Optional[Sequence[int]] = None,
              scope: Optional[str] = None, readers: Optional[Sequence[str]] = None,
              writers: Optional[Sequence[str]] = None, valid: Optional[str] = None,
              observed_at: Optional[Instant] = None,
              expected_head: Optional[int] = None,
              proposal: Optional[str] = None) -> int:
        """Stage a tentative record (value: any JSON value); returns its id.  valid is a
        tstzrange in text form, e.g. '[2026-01-01,2026-02-01)'; observed_at a datetime
        or ISO 8601 text.  expected_head and proposal (SPEC §10) are sent only when
        given, for servers that have them."""
        return int(self._scalar("stage", {"tx": self.tx, **_content(
            entity, attribute, value, derived_from, readers, writers, kind=kind, source=source,
            confidence=confidence, scope=scope, valid=valid, observed_at=observed_at,
            expected_head=expected_head, proposal=proposal)}))

    def propose(self, entity: str, attribute: str, value: JSON, *,
                kind: Optional[str] = None, source: Optional[str] = None,
                confidence: Optional[float] = None,
                derived_from: Optional[Sequence[int]] = None,
                scope: Optional[str] = None, readers: Optional[Sequence[str]] = None,
                writers: Optional[Sequence[str]] = None, valid: Optional[str] = None,
                observed_at: Optional[Instant] = None, expected_head: Optional[int] = None,
                proposal: Optional[str] = None) -> ProposeResult:
        """Begin, stage and commit one record in one call, at the role's tier (SPEC §10);
        needs no turn and leaves the session's transaction alone.  Arguments as for
        ``stage``.  A stale ``expected_head`` is a result (state quarantined, reason
        stale_head), not an error.  After a lost reply, call again with the same
        ``proposal`` and content: the stored result comes back and nothing is written
        (other content under the id raises Conflict, 23505)."""
        rows = self._typed(ProposeResult, "propose", {"namespace": self.namespace, **_content(
            entity, attribute, value, derived_from, readers, writers, kind=kind, source=source,
            confidence=confidence, scope=scope, valid=valid, observed_at=observed_at,
            expected_head=expected_head, proposal=proposal)})
        return rows[0]

    def restore(self, entity: str, attribute: str, at: Instant,
                valid_at: Optional[Instant] = None) -> int:
        """Stage in the current transaction a copy of the record that was active on the
        slot at ``at`` (valid at ``valid_at``, when given), expecting the slot's current
        head; returns the new record's id.  No such single record: InvalidArgument (22023)."""
        return int(self._scalar("restore", _present(tx=self.tx, entity=entity,
                                                    attribute=attribute, at=at,
                                                    valid_at=valid_at)))

    def revoke(self, record: int, note: Optional[str] = None) -> List[Repair]:
        """Retract a record and repair everything derived from it, by kind."""
        return self._typed(Repair, "revoke", _present(record=record, note=note))

    # -- action time ----------------------------------------------------------

    def gate(self, tool: str) -> GateResult:
        """Whether the tool may run now; writes nothing."""
        row = self._rows("gate", {"tx": self.tx, "tool": tool})[0]
        return GateResult(row["allowed"], row["reason"], list(row["blockers"] or []))

    def act(self, tool: str, args: JSON, derived_from: Sequence[int] = (),
            effect_key: Optional[str] = None) -> ActResult:
        """Gate a tool call on its declared inputs and record the decision.  Run the
        effect only when ``allowed``; a repeat under the same effect_key returns
        the stored decision (same ``action_id``, ``repeated`` true) and records nothing."""
        row = self._rows("act", _present(tx=self.tx, tool=tool, args=Jsonb(args),
                                         derived_from=list(derived_from),
                                         effect_key=effect_key))[0]
        return ActResult(row["allowed"], row["reason"], row["action_id"],
                         list(row["blockers"] or []), row["repeated"])

    # -- harness operations (a harness's connection) ---------------------------

    def fence(self, role: str) -> int:
        """Advance the role's writer epoch and return it: its open transactions are
        aborted (reason fenced) and its writes refused (42501) until ``unfence``."""
        return int(self._scalar("fence", {"role": role}))

    def unfence(self, role: str) -> None:
        """Let a fenced role write again; transactions opened before the fence stay refused."""
        self._rows("unfence", {"role": role})

    def erase(self, record: int, note: Optional[str] = None) -> List[Repair]:
        """Legal erasure: revoke the record (reason erased, with cascade) unless revoked
        already, then remove its value everywhere memtx keeps it; returns the repairs
        (none when it was erased already)."""
        return self._typed(Repair, "erase", _present(record=record, note=note))

    def writer_epochs(self, role: Optional[str] = None) -> List[WriterEpoch]:
        """The fences of a role (or of every role), by role and epoch: what the caller
        may see, i.e. a harness every role's and any other role its own."""
        return [WriterEpoch.from_row(r) for r in self._execute(_WRITER_EPOCHS, {"role": role})]

    # -- tool definitions -----------------------------------------------------

    def tool_specs(self, format: str = "openai") -> List[Dict[str, Any]]:
        """Tool definitions for LLM function calling: 'openai', 'anthropic' or 'mcp'."""
        return list(self._scalar("tool_specs", {"format": format}))
