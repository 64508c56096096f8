"""One agent's memtx session: a memtx transaction per turn, the operations as methods.

A memtx transaction is logical and long-lived: it spans many SQL calls (one
agent turn).  Each method here is one memtx function call, one statement:
on an idle autocommit connection (what a session opens from a conninfo
string, and what a pool should hand out) the statement is its own SQL
transaction and costs one round trip; inside a transaction the caller
opened it runs in a savepoint (``conn.transaction()``), and on an idle
connection that is not autocommit in a transaction of its own -- so a
failed call writes nothing and leaves the memtx transaction (and the
caller's SQL transaction) usable.  A statement run often is prepared as
psycopg prepares statements (``prepare_threshold``: the fifth execution of
the same text, by default; never when the connection disables it).  The
principal is the role the connection runs as: give each agent a connection
of its own (or ``SET ROLE`` to its role).

A session runs on a psycopg connection, on a conninfo string (it opens the
connection, and ``close()`` or leaving ``with Memory(...)`` closes it), or on
a ``psycopg_pool.ConnectionPool`` (it takes a connection for each call and
gives it back: a memtx transaction outlives the connection that began it, so
the calls of one turn may run on different pooled connections, as long as
they log in as the same role).  :class:`memtx_client.AsyncMemory` is the
same session on psycopg's ``AsyncConnection`` (or ``AsyncConnectionPool``).

Arguments are sent as bound parameters by their SQL names (named-argument
notation), each cast to its declared SQL type; an argument left as ``None``
is not sent, so the function's default applies.  Arguments are checked before
anything is sent: an enum argument outside its labels raises
:class:`InvalidArgument` naming the argument and listing the labels, a value
JSON cannot carry (a ``set``) raises ``TypeError`` naming the argument.

Every operation is written once, as a generator that yields the statements it
runs and receives their rows (``_Session``); :class:`Memory` drives it with
blocking calls, ``AsyncMemory`` with awaited ones.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import inspect
import json
import math
import re
import time
import warnings
from typing import (Any, Callable, Concatenate, Dict, Generator, Iterator, List,
                    Mapping, Optional, ParamSpec, Sequence, Tuple, Type, TypeVar,
                    Union)

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from .errors import (EmbeddingError, InvalidArgument, MemtxError, NoTransaction, NotFound,
                     Retryable, UnregisteredToolWarning, from_psycopg)
from .types import (JSON, ActResult, CommitResult, GateResult, HistoryEntry,
                    Outcome, ProposeResult, Recalled, Record, Repair, Row,
                    Similar, WriterEpoch)

T = TypeVar("T", bound=Row)
R = TypeVar("R")
P = ParamSpec("P")

#: SQL types of the content arguments of stage and propose (SPEC §4, §10).
_CONTENT: Dict[str, str] = {
    "entity": "text", "attribute": "text", "value": "jsonb", "kind": "memtx.kind",
    "source": "text", "confidence": "double precision", "derived_from": "bigint[]",
    "scope": "memtx.scope", "readers": "text[]", "writers": "text[]", "valid": "tstzrange",
    "observed_at": "timestamptz", "expected_head": "bigint", "proposal": "text"}

#: SQL types of the named arguments of each memtx function this client calls, in the
#: functions' order.  test/python/test_client_tables.py holds them against pg_proc.
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
    "outcome": {"proposal": "text", "namespace": "text", "agent": "text"},
    "read_as_of": {"at": "timestamptz", "entity": "text", "attribute": "text",
                   "namespace": "text", "valid_at": "timestamptz"},
    "restore": {"tx": "bigint", "entity": "text", "attribute": "text", "at": "timestamptz",
                "valid_at": "timestamptz"},
    "fence": {"role": "text"},
    "unfence": {"role": "text"},
    "erase": {"record": "bigint", "note": "text"},
    "tool_specs": {"format": "text"},
    # memtx_vector (SPEC §19): there when that companion extension is installed
    "embed": {"record": "bigint", "model": "text", "embedding": "vector"},
    "recall_similar": {"tx": "bigint", "embedding": "vector", "model": "text", "k": "integer",
                       "entity_prefix": "text", "query": "text", "valid_at": "timestamptz"},
}

#: The functions of the companion extension memtx_vector, not of memtx itself.
VECTOR_FUNCTIONS: Sequence[str] = ("embed", "recall_similar")

#: Trailing arguments SPEC.md gives a function that a server may not have yet (§17:
#: outcome's harness-only agent).  Sent only when given, so an older server answers
#: every other call.
PENDING_ARGUMENTS: Dict[str, Sequence[str]] = {"outcome": ("agent",)}

#: The labels of memtx's enum types (SPEC §1), in their order.
ENUMS: Dict[str, Sequence[str]] = {
    "memtx.state": ("raw", "tentative", "validated", "committed", "action_safe", "quarantined",
                    "superseded", "revoked"),
    "memtx.isolation": ("raw_read", "committed_read", "verified_read", "causally_stable_read",
                        "action_safe_read"),
    "memtx.risk_tier": ("low", "medium", "high", "external_action"),
    "memtx.kind": ("belief", "summary", "profile", "index_entry", "shared_copy", "tool_action"),
    "memtx.scope": ("private", "shared", "public"),
}

#: The tables read directly (what no function returns): a record's history, in
#: order, and the writer epochs the caller may see (both under row-level security).
_HISTORY = sql.SQL("SELECT record_id, state, reason, at, pos FROM memtx.history"
                   " WHERE record_id = %(record)s::bigint ORDER BY pos, at")
_WRITER_EPOCHS = sql.SQL("SELECT role_name, epoch, pos, fenced_at, unfenced_at"
                         " FROM memtx.writer_epochs WHERE %(role)s::text IS NULL"
                         " OR role_name = %(role)s::text ORDER BY role_name, epoch")
_REGISTERED = sql.SQL("SELECT 1 FROM memtx.tools WHERE name = %(tool)s::text")
_RECORD_TEXT = sql.SQL("SELECT entity, attribute, value FROM memtx.records WHERE id = %(record)s::bigint")
_FENCED = re.compile(r"^memtx transaction (\d+) was fenced$")

#: A timestamp argument: a datetime or ISO 8601 text.
Instant = Union[str, datetime.datetime]
#: What embeds texts: a function of a list of texts to one vector each (it may be a
#: coroutine function for AsyncMemory), or an object with LangChain's embed_documents and
#: embed_query (aembed_documents and aembed_query, when it has them, for AsyncMemory).
Embedder = Any
#: The text embedded for a record, from its entity, attribute and value.
EmbeddingText = Callable[[str, str, JSON], str]


def embedding_text(entity: str, attribute: str, value: JSON) -> str:
    """The text embedded for a record: its entity, its attribute and its value (a JSON
    string's text, any other value's compact JSON text), separated by spaces -- the words
    memtx.recall indexes.  The Node client makes the same text."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return f"{entity} {attribute} {text}"


def vector_text(name: str, value: Any) -> str:
    """The text form of a vector argument ('[1.0,0.5,-2.0]'); TypeError naming the argument
    unless it is a sequence of finite numbers."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a sequence of numbers, not {type(value).__name__}")
    numbers = []
    for i, x in enumerate(value):
        if isinstance(x, bool) or not isinstance(x, (int, float)) and not hasattr(x, "__float__"):
            raise TypeError(f"{name}[{i}] must be a number, not {type(x).__name__}")
        f = float(x)
        if not math.isfinite(f):
            raise TypeError(f"{name}[{i}] must be a finite number, not {f}")
        numbers.append(repr(f))
    return "[" + ",".join(numbers) + "]"


def check_vectors(vectors: Any, count: int, name: str) -> List[List[float]]:
    """The vectors an embedder answered, checked: ``count`` sequences of finite numbers;
    EmbeddingError otherwise."""
    try:
        got = list(vectors)
    except TypeError:
        raise EmbeddingError(f"{name} answered {type(vectors).__name__}, not a list of vectors") from None
    if len(got) != count:
        raise EmbeddingError(f"{name} answered {len(got)} vectors for {count} text{'' if count == 1 else 's'}")
    out = []
    for i, v in enumerate(got):
        try:
            numbers = [float(x) for x in v]
        except (TypeError, ValueError):
            raise EmbeddingError(f"{name}: vector {i} is not a sequence of numbers") from None
        if not all(math.isfinite(x) for x in numbers):
            raise EmbeddingError(f"{name}: vector {i} has a value that is not a finite number")
        out.append(numbers)
    return out


class _Embed:
    """A step of an operation that embeds texts (documents, or one query) with the
    session's embedder; the driver answers the checked vectors."""

    def __init__(self, texts: List[str], query: bool = False) -> None:
        self.texts = texts
        self.query = query

    def call(self, embedder: Embedder) -> Any:
        """What the embedder answers (it may be awaitable)."""
        if self.query and hasattr(embedder, "embed_query"):
            return [embedder.embed_query(self.texts[0])]
        if hasattr(embedder, "embed_documents"):
            return embedder.embed_documents(self.texts)
        return embedder(self.texts)

    async def acall(self, embedder: Embedder) -> Any:
        """What the embedder answers, awaited (its async methods preferred)."""
        if self.query and hasattr(embedder, "aembed_query"):
            return [await embedder.aembed_query(self.texts[0])]
        if not self.query and hasattr(embedder, "aembed_documents"):
            return await embedder.aembed_documents(self.texts)
        answer = self.call(embedder)
        if self.query and hasattr(embedder, "embed_query") and answer and inspect.isawaitable(answer[0]):
            return [await answer[0]]
        return await answer if inspect.isawaitable(answer) else answer

    def failed(self, err: BaseException) -> EmbeddingError:
        wrapped = EmbeddingError(f"the embedder failed: {err}")
        wrapped.__cause__ = err
        return wrapped


#: One statement of an operation and its parameters; with no statement (None), a pause
#: of that many seconds instead; an _Embed, the vectors of its texts.
Step = Tuple[Union[None, sql.Composable, _Embed], Mapping[str, Any], float]
#: An operation: yields its statements, receives their rows, returns its result.
Op = Generator[Step, List[Dict[str, Any]], R]


def _check_json(name: str, value: Any) -> None:
    """TypeError naming the argument unless value is JSON (json.dumps would otherwise
    fail with a message naming neither, or psycopg at send time)."""
    def walk(v: Any, where: str) -> None:
        if v is None or isinstance(v, (bool, int, float, str)):
            if isinstance(v, float) and not math.isfinite(v):
                raise TypeError(f"{where} must be JSON: {v} is not a JSON number")
            return
        if isinstance(v, (list, tuple)):
            for i, item in enumerate(v):
                walk(item, f"{where}[{i}]")
            return
        if isinstance(v, Mapping):
            for key, item in v.items():
                if not isinstance(key, str):
                    raise TypeError(f"{where} must be JSON: its key {key!r} is not a string")
                walk(item, f"{where}[{key!r}]")
            return
        hint = {set: " (use a list)", frozenset: " (use a list)", bytes: " (decode it)"}.get(type(v), "")
        raise TypeError(f"{where} must be JSON: a {type(v).__name__} is not{hint}")
    walk(value, name)


def _check_label(name: str, sql_type: str, value: Any) -> None:
    labels = ENUMS.get(sql_type)
    if labels is not None and value not in labels:
        raise InvalidArgument(f"{name} must be one of {', '.join(labels)}; got {value!r}", "22P02")


def _call(function: str, args: Mapping[str, Any],
          columns: Optional[Sequence[str]] = None) -> Tuple[sql.Composed, Dict[str, Any]]:
    """SELECT columns FROM memtx.function(name => %(name)s::type, ...) for the given args,
    and the parameters to send (JSON wrapped, arrays as lists); arguments checked."""
    types = SIGNATURES[function]
    unknown = set(args) - set(types)
    if unknown:
        raise TypeError(f"memtx.{function} has no argument {', '.join(sorted(unknown))}")
    params: Dict[str, Any] = {}
    for name, value in args.items():
        if types[name] == "jsonb":
            _check_json(name, value)
            value = Jsonb(value)
        elif types[name] == "vector":
            value = vector_text(name, value)
        elif types[name].endswith("[]"):
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise TypeError(f"{name} must be a sequence, not {type(value).__name__}")
            value = list(value)
        else:
            _check_label(name, types[name], value)
        params[name] = value
    # a vector goes as text with no cast: the function's declared type reads it, wherever
    # pgvector's schema is (memtx_vector's functions name the type, the caller's path need not)
    arguments = sql.SQL(", ").join(
        sql.SQL("{} => {}").format(sql.Identifier(name), sql.Placeholder(name))
        if types[name] == "vector" else
        sql.SQL("{} => {}::{}").format(sql.Identifier(name), sql.Placeholder(name),
                                       sql.SQL(types[name]))
        for name in args)
    # valid is a range: its text form is what a model reads and writes
    cols = sql.SQL("*") if columns is None else sql.SQL(", ").join(
        sql.SQL("valid::text AS valid") if c == "valid" else sql.Identifier(c)
        for c in columns)
    return sql.SQL("SELECT {} FROM memtx.{}({})").format(cols, sql.Identifier(function), arguments), params


def _present(**args: Any) -> Dict[str, Any]:
    """The arguments that were given (None means: let the SQL default apply)."""
    return {k: v for k, v in args.items() if v is not None}


def _vector_missing(err: MemtxError) -> MemtxError:
    """A missing memtx_vector (its functions unknown, 42883) said as such."""
    if err.sqlstate != "42883" or not re.search(r"memtx\.(embed|recall_similar)\(", err.message):
        return err
    return NotFound("memtx_vector is not installed in this database", "42883", None,
                    "A superuser runs CREATE EXTENSION memtx_vector CASCADE (pgvector 0.8.0 or later).")


def _call_scope(conn: Any) -> Any:
    """What one call's statement runs in: nothing more on an idle autocommit
    connection (the statement is its own SQL transaction: one round trip), else
    ``conn.transaction()`` (a savepoint inside the caller's transaction, or a
    transaction of its own), so a failed call leaves nothing behind."""
    if conn.autocommit and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        return contextlib.nullcontext()
    return conn.transaction()


def fenced_transaction(err: BaseException) -> Optional[int]:
    """The transaction a fence refused, when err is that refusal (42501 "memtx
    transaction N was fenced", SPEC §12): no call on it is accepted again."""
    if not isinstance(err, MemtxError) or err.sqlstate != "42501":
        return None
    match = _FENCED.match(err.message)
    return int(match.group(1)) if match else None


class _Session:
    """What Memory and AsyncMemory share: the session's state and every operation, as
    a generator of statements (see the module docstring)."""

    _scope: Optional[str]

    def __init__(self, conn: Any, namespace: str = "default", *, tx: Optional[int] = None,
                 scope: Optional[str] = None, readers: Optional[Sequence[str]] = None,
                 writers: Optional[Sequence[str]] = None,
                 allow_unregistered_tools: bool = False, embedder: Embedder = None,
                 embedding_model: Optional[str] = None,
                 embedding_text: EmbeddingText = embedding_text) -> None:
        if embedder is not None and not isinstance(embedding_model, str):
            raise TypeError("an embedder needs embedding_model: the memtx_vector model its vectors "
                            "are stored under")
        if embedder is not None and not callable(embedder) and not hasattr(embedder, "embed_documents"):
            raise TypeError("embedder must be a function of texts to vectors, or an object with "
                            "embed_documents")
        if scope is not None:
            _check_label("scope", "memtx.scope", scope)
        for name, roles in (("readers", readers), ("writers", writers)):
            if roles is not None and (isinstance(roles, str)
                                      or not all(isinstance(r, str) for r in roles)):
                raise TypeError(f"{name} must be a sequence of role names")
        self.conn = conn
        self.namespace = namespace
        #: the permission block stage and propose use when a call gives none
        self.defaults: Dict[str, Any] = _present(
            scope=scope, readers=None if readers is None else list(readers),
            writers=None if writers is None else list(writers))
        self.allow_unregistered_tools = allow_unregistered_tools
        self._tx = tx
        self._open = tx is not None
        self._began = False
        #: what the last commit() (also the one turn() makes) decided
        self.last_commit: List[CommitResult] = []
        self._registered: set[str] = set()
        #: what embeds the session's writes and queries (None: they are not embedded)
        self.embedder = embedder
        #: the memtx_vector model the embeddings are stored under
        self.embedding_model = embedding_model
        self.embedding_text = embedding_text

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

    def attach(self, tx: int) -> None:
        """Make an existing memtx transaction current (e.g. one a harness began)."""
        self._tx = tx
        self._open = True
        self._began = False

    def detach(self) -> None:
        """Forget the current transaction without ending it (it was ended elsewhere, or
        another session goes on with it): ``close()`` then leaves it alone."""
        self._open = False
        self._began = False

    # -- the statements -------------------------------------------------------

    @staticmethod
    def _rows(function: str, args: Mapping[str, Any],
              columns: Optional[Sequence[str]] = None) -> Op[List[Dict[str, Any]]]:
        query, params = _call(function, args, columns)
        rows = yield query, params, 0.0
        return rows

    @classmethod
    def _typed(cls, row: Type[T], function: str, args: Mapping[str, Any]) -> Op[List[T]]:
        rows = yield from cls._rows(function, args, row.columns())
        return [row.from_row(r) for r in rows]

    @classmethod
    def _scalar(cls, function: str, args: Mapping[str, Any]) -> Op[Any]:
        rows = yield from cls._rows(function, args)
        return next(iter(rows[0].values()))

    def _content(self, entity: str, attribute: str, value: JSON,
                 **rest: Any) -> Dict[str, Any]:
        """The given content arguments of stage and propose, with the session's
        permission block where the call gives none."""
        content = _present(entity=entity, attribute=attribute, **rest)
        content["value"] = value
        for name, default in self.defaults.items():
            content.setdefault(name, default)
        return content

    # -- transactions ---------------------------------------------------------

    def _begin(self, *, tier: Optional[str] = None, agent: Optional[str] = None,
               isolation: Optional[str] = None) -> Op[int]:
        """Open a memtx transaction in the namespace and make it current; tier, agent and
        isolation are for a harness opening a turn on an agent's behalf."""
        tx = int((yield from self._scalar("begin", _present(
            namespace=self.namespace, tier=tier, agent=agent, isolation=isolation))))
        self.attach(tx)
        self._began = True
        self.last_commit = []
        return tx

    def _commit(self) -> Op[List[CommitResult]]:
        """Run the commit pipeline; one result per staged record, in staging order.
        Idempotent: a repeat returns the stored outcome."""
        self.last_commit = yield from self._typed(CommitResult, "commit", {"tx": self.tx})
        self._open = False
        return self.last_commit

    def _abort(self) -> Op[List[Repair]]:
        """Abort the transaction: its staging is revoked and repaired like any retraction."""
        repairs = yield from self._typed(Repair, "abort", {"tx": self.tx})
        self._open = False
        return repairs

    # -- reads ----------------------------------------------------------------

    def _read(self, entity: Optional[str] = None, attribute: Optional[str] = None) -> Op[List[Record]]:
        """What the transaction sees (a slot, an entity, or the namespace); joins its read set."""
        return (yield from self._typed(Record, "read", _present(tx=self.tx, entity=entity,
                                                                attribute=attribute)))

    def _recall(self, query: str, k: Optional[int] = None, entity_prefix: Optional[str] = None,
                valid_at: Optional[Instant] = None) -> Op[List[Recalled]]:
        """The best k visible full-text matches (valid at ``valid_at``, when given), best
        first; they join the read set."""
        return (yield from self._typed(Recalled, "recall", _present(
            tx=self.tx, query=query, k=k, entity_prefix=entity_prefix, valid_at=valid_at)))

    def _lookup(self, entity: str, attribute: Optional[str] = None,
                valid_at: Optional[Instant] = None) -> Op[List[Record]]:
        """Active records on the slot (or entity) readable by the role (valid at
        ``valid_at``, when given), without a transaction: no read set, no lease, no write
        (works on a hot standby)."""
        return (yield from self._typed(Record, "lookup", _present(
            entity=entity, attribute=attribute, namespace=self.namespace, valid_at=valid_at)))

    def _outcome(self, proposal: str, *, agent: Optional[str] = None) -> Op[Optional[Outcome]]:
        """The disposition of a proposal id, or None when unknown or unreadable.  Proposal
        ids are per agent (SPEC §17): a harness names the ``agent`` it asks about."""
        rows = yield from self._typed(Outcome, "outcome", _present(
            proposal=proposal, namespace=self.namespace, agent=agent))
        return rows[0] if rows else None

    def _history(self, record: int) -> Op[List[HistoryEntry]]:
        """Every state change of a record, in ``pos`` order (SPEC §13); empty when the
        record does not exist or the role may not read it.  No transaction needed."""
        rows = yield _HISTORY, {"record": record}, 0.0
        return [HistoryEntry.from_row(r) for r in rows]

    def _read_as_of(self, at: Instant, entity: Optional[str] = None,
                    attribute: Optional[str] = None,
                    valid_at: Optional[Instant] = None) -> Op[List[Record]]:
        """The records of the namespace (or entity, or slot) that were active at ``at``,
        with their state and reason as then, in id order; ``valid_at`` keeps those whose
        validity contains it.  No transaction needed; writes nothing."""
        return (yield from self._typed(Record, "read_as_of", _present(
            at=at, entity=entity, attribute=attribute, namespace=self.namespace,
            valid_at=valid_at)))

    # -- writes ---------------------------------------------------------------

    def _stage(self, entity: str, attribute: str, value: JSON, *,
               kind: Optional[str] = None, source: Optional[str] = None,
               confidence: Optional[float] = None, derived_from: Optional[Sequence[int]] = None,
               scope: Optional[str] = None, readers: Optional[Sequence[str]] = None,
               writers: Optional[Sequence[str]] = None, valid: Optional[str] = None,
               observed_at: Optional[Instant] = None, expected_head: Optional[int] = None,
               proposal: Optional[str] = None) -> Op[int]:
        """Stage a tentative record (value: any JSON value); returns its id.  valid is a
        tstzrange in text form, e.g. '[2026-01-01,2026-02-01)'; observed_at a datetime
        or ISO 8601 text.  The session's permission block applies unless given.  With an
        embedder, the record's text is embedded first and the vector attached in the same
        statement as the stage: when either fails, nothing is written."""
        args = {"tx": self.tx, **self._content(
            entity, attribute, value, kind=kind, source=source, confidence=confidence,
            derived_from=derived_from, scope=scope, readers=readers, writers=writers,
            valid=valid, observed_at=observed_at, expected_head=expected_head,
            proposal=proposal)}
        if self.embedder is None:
            return int((yield from self._scalar("stage", args)))
        rows = yield from self._write_embedded("stage", args, None, "stage")
        return int(rows[0]["stage"])

    def _propose(self, entity: str, attribute: str, value: JSON, *,
                 kind: Optional[str] = None, source: Optional[str] = None,
                 confidence: Optional[float] = None, derived_from: Optional[Sequence[int]] = None,
                 scope: Optional[str] = None, readers: Optional[Sequence[str]] = None,
                 writers: Optional[Sequence[str]] = None, valid: Optional[str] = None,
                 observed_at: Optional[Instant] = None, expected_head: Optional[int] = None,
                 proposal: Optional[str] = None) -> Op[ProposeResult]:
        """Begin, stage and commit one record in one call, at the role's tier (SPEC §10);
        needs no turn and leaves the session's transaction alone.  Arguments as for
        ``stage``.  A stale ``expected_head`` is a result (state quarantined, reason
        stale_head), not an error.  After a lost reply, call again with the same
        ``proposal`` and content: the stored result comes back and nothing is written
        (other content under the id raises Conflict, 23505).  With an embedder, the record
        is embedded in the same statement, as for ``stage``."""
        args = {"namespace": self.namespace, **self._content(
            entity, attribute, value, kind=kind, source=source, confidence=confidence,
            derived_from=derived_from, scope=scope, readers=readers, writers=writers,
            valid=valid, observed_at=observed_at, expected_head=expected_head,
            proposal=proposal)}
        if self.embedder is None:
            rows = yield from self._typed(ProposeResult, "propose", args)
            return rows[0]
        found = yield from self._write_embedded("propose", args, ProposeResult.columns(), "record_id")
        return ProposeResult.from_row(found[0])

    def _propose_with_retry(self, entity: str, attribute: str, value: JSON, *,
                            proposal: Optional[str] = None, attempts: int = 5,
                            delay: float = 0.05, **content: Any) -> Op[ProposeResult]:
        """``propose`` of the slot's next value, retried: looks up the current head, proposes
        with it as ``expected_head``, and when the head moved meanwhile (``stale_head``) or
        the call met a serialization failure or deadlock (40001, 40P01) tries again, up to
        ``attempts`` times with a doubling pause from ``delay`` seconds.  A ``proposal`` id
        names the first attempt; the n-th retry uses ``proposal#n`` (a quarantined id is
        used up).  Returns the last attempt's result: any other refusal (lower_authority,
        ...) at once, not retried."""
        if attempts < 1:
            raise InvalidArgument(f"attempts must be at least 1, got {attempts}", "22023")
        result: Optional[ProposeResult] = None
        for attempt in range(1, attempts + 1):
            heads = yield from self._lookup(entity, attribute)
            # the head this write replaces: none (0), the one active record, or no
            # single head to expect (several windows or corroborating values)
            head = 0 if not heads else heads[0].id if len(heads) == 1 else None
            # a quarantined proposal's id is used up: each attempt takes its own
            attempt_id = None if proposal is None else proposal if attempt == 1 else f"{proposal}#{attempt}"
            try:
                result = yield from self._propose(entity, attribute, value, expected_head=head,
                                                  proposal=attempt_id, **content)
            except Retryable:
                if attempt == attempts:
                    raise
            else:
                if result.reason != "stale_head":
                    return result
            yield None, {}, delay * 2 ** (attempt - 1)
        assert result is not None
        return result

    def _restore(self, entity: str, attribute: str, at: Instant,
                 valid_at: Optional[Instant] = None) -> Op[int]:
        """Stage in the current transaction a copy of the record that was active on the
        slot at ``at`` (valid at ``valid_at``, when given), expecting the slot's current
        head; returns the new record's id.  No such single record: InvalidArgument (22023)."""
        return int((yield from self._scalar("restore", _present(
            tx=self.tx, entity=entity, attribute=attribute, at=at, valid_at=valid_at))))

    def _revoke(self, record: int, note: Optional[str] = None) -> Op[List[Repair]]:
        """Retract a record and repair everything derived from it, by kind."""
        return (yield from self._typed(Repair, "revoke", _present(record=record, note=note)))

    # -- embeddings (memtx_vector, SPEC §19) ------------------------------------

    def _embed_texts(self, texts: Sequence[str]) -> Op[List[List[float]]]:
        """One vector per text from the session's embedder, checked."""
        if self.embedder is None:
            raise TypeError("this session has no embedder (Memory option embedder)")
        vectors = yield _Embed(list(texts)), {}, 0.0
        return vectors

    def _write_embedded(self, function: str, args: Mapping[str, Any],
                        columns: Optional[Sequence[str]], id_column: str) -> Op[List[Dict[str, Any]]]:
        """The function's statement (stage or propose) and, in the same statement, the
        embedding of the record it writes (column ``id_column`` of its row): the vector is
        computed first, so an embedder that fails writes nothing, and a vector memtx.embed
        refuses rolls the write back with it."""
        [vector] = yield from self._embed_texts(
            [self.embedding_text(args["entity"], args["attribute"], args["value"])])
        query, params = _call(function, args, columns)
        statement = sql.SQL("SELECT s.* FROM ({} OFFSET 0) s CROSS JOIN LATERAL memtx.embed(s.{},"
                            " %(embedding_model_)s::text, %(embedding_)s) e").format(
            query, sql.Identifier(id_column))
        try:
            rows = yield statement, {**params, "embedding_model_": self.embedding_model,
                                     "embedding_": vector_text("embedding", vector)}, 0.0
        except MemtxError as err:
            raise _vector_missing(err) from err
        return rows

    def _embed(self, record: int, embedding: Optional[Sequence[float]] = None, *,
               model: Optional[str] = None, text: Optional[str] = None) -> Op[None]:
        """Attach a record's embedding under a model (memtx.embed: the record's owner or a
        harness, in any state but erased; the same vector again does nothing).  The vector
        is ``embedding`` when given, else the embedder's for ``text``, else for the record's
        own text (read under row-level security), so a record written without one (or
        before the model) is embedded later.  ``model`` defaults to the session's."""
        model = model if model is not None else self.embedding_model
        if model is None:
            raise TypeError("embed needs a model (or the session option embedding_model)")
        if embedding is None:
            if text is None:
                rows = yield _RECORD_TEXT, {"record": record}, 0.0
                if not rows:
                    raise NotFound(f"record {record} does not exist or is not readable", "42704")
                text = self.embedding_text(rows[0]["entity"], rows[0]["attribute"], rows[0]["value"])
            [embedding] = yield from self._embed_texts([text])
        try:
            yield from self._rows("embed", {"record": record, "model": model, "embedding": embedding})
        except MemtxError as err:
            raise _vector_missing(err) from err

    def _recall_similar(self, query: Optional[str] = None, k: Optional[int] = None,
                        entity_prefix: Optional[str] = None, valid_at: Optional[Instant] = None, *,
                        embedding: Optional[Sequence[float]] = None, model: Optional[str] = None,
                        hybrid: bool = True) -> Op[List[Similar]]:
        """Recall by meaning (memtx.recall_similar): the k records visible to the
        transaction nearest to the query's embedding, nearest first; with ``hybrid`` (the
        default) the query's words are ranked too and the two rankings fused.  The
        embedding is ``embedding`` when given, else the embedder's for the query.  They join
        the read set."""
        tx = self.tx  # NoTransaction before anything is embedded
        model = model if model is not None else self.embedding_model
        if model is None:
            raise TypeError("recall_similar needs a model (or the session option embedding_model)")
        if embedding is None:
            if not isinstance(query, str):
                raise TypeError("recall_similar needs a query or an embedding")
            if self.embedder is None:
                raise TypeError("this session has no embedder (Memory option embedder)")
            [embedding] = yield _Embed([query], query=True), {}, 0.0
        try:
            return (yield from self._typed(Similar, "recall_similar", _present(
                tx=tx, embedding=embedding, model=model, k=k, entity_prefix=entity_prefix,
                query=query if hybrid else None, valid_at=valid_at)))
        except MemtxError as err:
            raise _vector_missing(err) from err

    # -- action time ----------------------------------------------------------

    def _gate(self, tool: str) -> Op[GateResult]:
        """Whether the tool may run now; writes nothing."""
        [row] = yield from self._rows("gate", {"tx": self.tx, "tool": tool})
        return GateResult(row["allowed"], row["reason"], list(row["blockers"] or []))

    def _is_registered(self, tool: str) -> Op[bool]:
        """Whether memtx.register_tool registered the tool (a name found once is remembered)."""
        if tool in self._registered:
            return True
        rows = yield _REGISTERED, {"tool": tool}, 0.0
        if rows:
            self._registered.add(tool)
        return bool(rows)

    def _act(self, tool: str, args: JSON, derived_from: Sequence[int] = (),
             effect_key: Optional[str] = None, *,
             allow_unregistered: Optional[bool] = None) -> Op[ActResult]:
        """Gate a tool call on its declared inputs and record the decision.  Run the effect
        only when ``allowed``; a repeat under the same effect_key returns the stored
        decision (same ``action_id``, ``repeated`` true) and records nothing.  A tool
        memtx.register_tool never registered is legal (memtx treats it as irreversible) but
        usually a misspelt or made-up name: act warns (UnregisteredToolWarning) unless the
        session or the call allows unregistered tools."""
        tx = self.tx  # NoTransaction before anything is asked
        allowed = self.allow_unregistered_tools if allow_unregistered is None else allow_unregistered
        if not allowed and not (yield from self._is_registered(tool)):
            warnings.warn(f"memtx.act: tool {tool!r} is not registered; memtx treats it as "
                          "irreversible (register it with memtx.register_tool, or pass "
                          "allow_unregistered=True to act on it without this warning)",
                          UnregisteredToolWarning, stacklevel=4)
        # args is sent even when None (the JSON null)
        [row] = yield from self._rows("act", {"args": args, **_present(
            tx=tx, tool=tool, derived_from=derived_from, effect_key=effect_key)})
        return ActResult(row["allowed"], row["reason"], row["action_id"],
                         list(row["blockers"] or []), row["repeated"])

    # -- harness operations (a harness's connection) ---------------------------

    def _fence(self, role: str) -> Op[int]:
        """Advance the role's writer epoch and return it: its open transactions are aborted
        (reason fenced) and its writes refused (42501) until ``unfence``."""
        return int((yield from self._scalar("fence", {"role": role})))

    def _unfence(self, role: str) -> Op[None]:
        """Let a fenced role write again; transactions opened before the fence stay refused."""
        yield from self._rows("unfence", {"role": role})

    def _erase(self, record: int, note: Optional[str] = None) -> Op[List[Repair]]:
        """Legal erasure: revoke the record (reason erased, with cascade) unless revoked
        already, then remove its value everywhere memtx keeps it; returns the repairs."""
        return (yield from self._typed(Repair, "erase", _present(record=record, note=note)))

    def _writer_epochs(self, role: Optional[str] = None) -> Op[List[WriterEpoch]]:
        """The fences of a role (or of every role), by role and epoch: what the caller may
        see, i.e. a harness every role's and any other role its own."""
        rows = yield _WRITER_EPOCHS, {"role": role}, 0.0
        return [WriterEpoch.from_row(r) for r in rows]

    # -- tool definitions -----------------------------------------------------

    def _tool_specs(self, format: str = "openai") -> Op[List[Dict[str, Any]]]:
        """Tool definitions for LLM function calling: 'openai', 'anthropic' or 'mcp'."""
        return list((yield from self._scalar("tool_specs", {"format": format})))

    # -- driving --------------------------------------------------------------

    def _failed(self, err: MemtxError) -> None:
        """Forget the current transaction when a fence refused it for good."""
        if self._tx is not None and fenced_transaction(err) == self._tx:
            self.detach()


def _blocking(op: Callable[Concatenate[Any, P], Op[R]]) -> Callable[Concatenate["Memory", P], R]:
    """The operation as a Memory method: its statements run one by one, blocking."""
    @functools.wraps(op)
    def method(self: "Memory", /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._drive(op(self, *args, **kwargs))
    return _named(method, op, "Memory")


def _named(method: Any, op: Any, owner: str) -> Any:
    """method as help() and inspect should show it: its public name, and the result of
    the operation (not the generator) as its return annotation."""
    method.__name__ = op.__name__.lstrip("_")
    method.__qualname__ = f"{owner}.{method.__name__}"
    signature = inspect.signature(op)
    result = signature.return_annotation
    if isinstance(result, str) and result.startswith("Op[") and result.endswith("]"):
        method.__signature__ = signature.replace(return_annotation=result[3:-1])
    return method


class Memory(_Session):
    """An agent's memory session in one namespace, over a psycopg connection (or a
    conninfo string, or a ``psycopg_pool.ConnectionPool``).

    ``scope``, ``readers`` and ``writers`` are the session's permission block: every
    stage and propose that gives none of its own gets it.  Records are private to
    their owner unless shared, so agents that share memory say so once here.

    >>> mem = Memory(conn, namespace="shop", scope="shared", readers=["refund_agent"])
    >>> with mem.turn():
    ...     rid = mem.stage("order:841", "refund_eligible", True, source="order_lookup")
    """

    def __init__(self, conn: Union["psycopg.Connection[Any]", str, Any],
                 namespace: str = "default", *, tx: Optional[int] = None,
                 scope: Optional[str] = None, readers: Optional[Sequence[str]] = None,
                 writers: Optional[Sequence[str]] = None,
                 allow_unregistered_tools: bool = False, embedder: Embedder = None,
                 embedding_model: Optional[str] = None,
                 embedding_text: EmbeddingText = embedding_text) -> None:
        self._owns_conn = isinstance(conn, str)
        if isinstance(conn, str):
            conn = psycopg.connect(conn, autocommit=True)
        super().__init__(conn, namespace, tx=tx, scope=scope, readers=readers, writers=writers,
                         allow_unregistered_tools=allow_unregistered_tools, embedder=embedder,
                         embedding_model=embedding_model, embedding_text=embedding_text)

    # -- plumbing -------------------------------------------------------------

    @contextlib.contextmanager
    def _connection(self) -> Iterator["psycopg.Connection[Any]"]:
        if isinstance(self.conn, psycopg.Connection):
            yield self.conn
        else:
            with self.conn.connection() as conn:  # a pool
                yield conn

    def _execute(self, query: sql.Composable, params: Mapping[str, Any]) -> List[Dict[str, Any]]:
        try:
            with self._connection() as conn:
                with _call_scope(conn):
                    with conn.cursor(row_factory=dict_row) as cur:
                        cur.execute(query, params)
                        return cur.fetchall()
        except psycopg.Error as err:
            mapped = from_psycopg(err)
            if mapped is None:
                raise
            self._failed(mapped)
            raise mapped from err

    def _drive(self, op: Op[R]) -> R:
        rows: Any = None
        error: Optional[MemtxError] = None
        while True:
            try:
                query, params, pause = op.throw(error) if error is not None else op.send(rows)
            except StopIteration as done:
                return done.value
            error = None
            if query is None:
                time.sleep(pause)
                rows = None
                continue
            if isinstance(query, _Embed):
                try:
                    answer = query.call(self.embedder)
                except Exception as err:
                    raise query.failed(err) from err
                if inspect.isawaitable(answer) or answer and inspect.isawaitable(answer[0]):
                    raise EmbeddingError("the embedder is asynchronous: use AsyncMemory with it")
                rows = check_vectors(answer, len(query.texts), "the embedder")
                continue
            try:
                rows = self._execute(query, params)
            except MemtxError as err:
                error = err

    def close(self) -> None:
        """End the session: abort the transaction it began and left open (as an MCP
        server does when its host closes), then close the connection if the session
        opened it.  ``detach()`` first to leave the transaction to another session."""
        try:
            if self._open and self._began:
                self.abort()
        finally:
            if self._owns_conn:
                self.conn.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

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

    begin = _blocking(_Session._begin)
    commit = _blocking(_Session._commit)
    abort = _blocking(_Session._abort)
    read = _blocking(_Session._read)
    recall = _blocking(_Session._recall)
    lookup = _blocking(_Session._lookup)
    outcome = _blocking(_Session._outcome)
    history = _blocking(_Session._history)
    read_as_of = _blocking(_Session._read_as_of)
    stage = _blocking(_Session._stage)
    propose = _blocking(_Session._propose)
    propose_with_retry = _blocking(_Session._propose_with_retry)
    restore = _blocking(_Session._restore)
    revoke = _blocking(_Session._revoke)
    gate = _blocking(_Session._gate)
    is_registered = _blocking(_Session._is_registered)
    act = _blocking(_Session._act)
    fence = _blocking(_Session._fence)
    unfence = _blocking(_Session._unfence)
    erase = _blocking(_Session._erase)
    writer_epochs = _blocking(_Session._writer_epochs)
    tool_specs = _blocking(_Session._tool_specs)
    embed = _blocking(_Session._embed)
    recall_similar = _blocking(_Session._recall_similar)


def retrying(fn: Callable[[], R], *, attempts: int = 5, delay: float = 0.05) -> R:
    """fn() again on a serialization failure or deadlock (Retryable: 40001, 40P01), up to
    ``attempts`` times with a doubling pause from ``delay`` seconds; the last error is
    raised.  For a unit of work that is safe to repeat as a whole (a turn: a memtx
    transaction that rolled back with its SQL transaction left nothing)."""
    if attempts < 1:
        raise InvalidArgument(f"attempts must be at least 1, got {attempts}", "22023")
    for attempt in range(1, attempts + 1):
        try:
            return fn()
        except Retryable:
            if attempt == attempts:
                raise
            time.sleep(delay * 2 ** (attempt - 1))
    raise AssertionError("unreachable")


__all__ = ["Memory", "retrying", "fenced_transaction", "SIGNATURES", "ENUMS", "PENDING_ARGUMENTS"]
