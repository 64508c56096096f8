"""AsyncMemory: the memtx session of :mod:`memtx_client.memory` on psycopg's AsyncConnection.

The same operations, arguments, results and errors as :class:`Memory`, each a
coroutine; ``turn()`` is an async context manager, and so is the session
(``async with AsyncMemory(...)`` closes what it opened).  It runs on an
``AsyncConnection``, on a conninfo string (connected at the first call, or
by ``async with``), or on a ``psycopg_pool.AsyncConnectionPool`` (a
connection per call).

    async with AsyncMemory("dbname=shop user=support_agent", namespace="support") as mem:
        async with mem.turn():
            rid = await mem.stage("order:841", "refund_eligible", True)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import (Any, AsyncIterator, Callable, Concatenate, Dict, List, Mapping,
                    Optional, Sequence, Union)

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from .errors import InvalidArgument, MemtxError, Retryable, from_psycopg
from .memory import (Embedder, EmbeddingText, Op, P, R, _call_scope, _Embed, _named, _Session,
                     check_vectors, embedding_text)


def _awaited(op: Callable[Concatenate[Any, P], Op[R]]) -> Callable[Concatenate["AsyncMemory", P], Any]:
    """The operation as an AsyncMemory coroutine method: its statements awaited one by one."""
    @functools.wraps(op)
    async def method(self: "AsyncMemory", /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._drive(op(self, *args, **kwargs))
    return _named(method, op, "AsyncMemory")


class AsyncMemory(_Session):
    """An agent's memory session in one namespace, over an AsyncConnection (or a
    conninfo string, or a ``psycopg_pool.AsyncConnectionPool``); see :class:`Memory`."""

    def __init__(self, conn: Union["psycopg.AsyncConnection[Any]", str, Any],
                 namespace: str = "default", *, tx: Optional[int] = None,
                 scope: Optional[str] = None, readers: Optional[Sequence[str]] = None,
                 writers: Optional[Sequence[str]] = None,
                 allow_unregistered_tools: bool = False, embedder: Embedder = None,
                 embedding_model: Optional[str] = None,
                 embedding_text: EmbeddingText = embedding_text) -> None:
        self._owns_conn = isinstance(conn, str)
        super().__init__(conn, namespace, tx=tx, scope=scope, readers=readers, writers=writers,
                         allow_unregistered_tools=allow_unregistered_tools, embedder=embedder,
                         embedding_model=embedding_model, embedding_text=embedding_text)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator["psycopg.AsyncConnection[Any]"]:
        if isinstance(self.conn, str):
            self.conn = await psycopg.AsyncConnection.connect(self.conn, autocommit=True)
        if isinstance(self.conn, psycopg.AsyncConnection):
            yield self.conn
        else:
            async with self.conn.connection() as conn:  # a pool
                yield conn

    async def _execute(self, query: sql.Composable, params: Mapping[str, Any]) -> List[Dict[str, Any]]:
        try:
            async with self._connection() as conn:
                async with _call_scope(conn):
                    async with conn.cursor(row_factory=dict_row) as cur:
                        await cur.execute(query, params)
                        return await cur.fetchall()
        except psycopg.Error as err:
            mapped = from_psycopg(err)
            if mapped is None:
                raise
            self._failed(mapped)
            raise mapped from err

    async def _drive(self, op: Op[R]) -> R:
        rows: Any = None
        error: Optional[MemtxError] = None
        while True:
            try:
                query, params, pause = op.throw(error) if error is not None else op.send(rows)
            except StopIteration as done:
                return done.value
            error = None
            if query is None:
                await asyncio.sleep(pause)
                rows = None
                continue
            if isinstance(query, _Embed):
                try:
                    answer = await query.acall(self.embedder)
                except Exception as err:
                    raise query.failed(err) from err
                rows = check_vectors(answer, len(query.texts), "the embedder")
                continue
            try:
                rows = await self._execute(query, params)
            except MemtxError as err:
                error = err

    async def close(self) -> None:
        """End the session: abort the transaction it began and left open, then close
        the connection if the session opened it (see Memory.close)."""
        try:
            if self._open and self._began:
                await self.abort()
        finally:
            if self._owns_conn and isinstance(self.conn, psycopg.AsyncConnection):
                await self.conn.close()

    async def __aenter__(self) -> "AsyncMemory":
        if isinstance(self.conn, str):
            self.conn = await psycopg.AsyncConnection.connect(self.conn, autocommit=True)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @contextlib.asynccontextmanager
    async def turn(self, *, tier: Optional[str] = None, agent: Optional[str] = None,
                   isolation: Optional[str] = None) -> AsyncIterator["AsyncMemory"]:
        """One agent turn: begin; on leaving, commit if still open (the outcome is in
        ``last_commit``); on an exception, abort if still open and re-raise."""
        await self.begin(tier=tier, agent=agent, isolation=isolation)
        try:
            yield self
        except BaseException as exc:
            if self._open:
                try:
                    await self.abort()
                except (MemtxError, psycopg.Error) as abort_err:
                    exc.add_note(f"memtx.abort({self._tx}) failed too: {abort_err}")
            raise
        if self._open:
            await self.commit()

    begin = _awaited(_Session._begin)
    commit = _awaited(_Session._commit)
    abort = _awaited(_Session._abort)
    read = _awaited(_Session._read)
    recall = _awaited(_Session._recall)
    lookup = _awaited(_Session._lookup)
    outcome = _awaited(_Session._outcome)
    history = _awaited(_Session._history)
    read_as_of = _awaited(_Session._read_as_of)
    stage = _awaited(_Session._stage)
    propose = _awaited(_Session._propose)
    propose_with_retry = _awaited(_Session._propose_with_retry)
    restore = _awaited(_Session._restore)
    revoke = _awaited(_Session._revoke)
    gate = _awaited(_Session._gate)
    is_registered = _awaited(_Session._is_registered)
    act = _awaited(_Session._act)
    fence = _awaited(_Session._fence)
    unfence = _awaited(_Session._unfence)
    erase = _awaited(_Session._erase)
    writer_epochs = _awaited(_Session._writer_epochs)
    tool_specs = _awaited(_Session._tool_specs)
    embed = _awaited(_Session._embed)
    recall_similar = _awaited(_Session._recall_similar)


async def aretrying(fn: Callable[[], Any], *, attempts: int = 5, delay: float = 0.05) -> Any:
    """await fn() again on a serialization failure or deadlock (Retryable), as
    :func:`memtx_client.retrying` does for blocking calls."""
    if attempts < 1:
        raise InvalidArgument(f"attempts must be at least 1, got {attempts}", "22023")
    for attempt in range(1, attempts + 1):
        try:
            return await fn()
        except Retryable:
            if attempt == attempts:
                raise
            await asyncio.sleep(delay * 2 ** (attempt - 1))
    raise AssertionError("unreachable")
