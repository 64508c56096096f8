"""What the hot calls send, counted on the wire (libpq's protocol trace of the
connection): on an idle autocommit connection each of ``propose``, ``lookup``,
``recall`` and ``read`` is one round trip (one Sync), and once psycopg has
prepared its statement, no Parse; inside the caller's transaction a call runs
in a savepoint, so a failed call leaves that transaction usable."""
from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Any, Callable, Dict, Iterator, List

import psycopg
import pytest
from psycopg import pq

from memtx_client import AsyncMemory, InvalidArgument, Memory

from conftest import AGENTS


@contextlib.contextmanager
def wire(conn: Any) -> Iterator[List[str]]:
    """The protocol messages the client sends inside the block, by type (and each
    Parse's text as a message "Parse <text>" after it)."""
    sent: List[str] = []
    fd, path = tempfile.mkstemp()
    conn.pgconn.trace(fd)
    conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
    try:
        yield sent
    finally:
        conn.pgconn.untrace()
        with open(path, encoding="utf-8", errors="replace") as f:
            # a line: "F <length> <message type> ..." (F: from the frontend)
            for line in f.read().splitlines():
                if line.startswith("F\t"):
                    fields = line.split("\t")
                    sent.append(fields[2])
                    if fields[2] == "Parse":
                        sent.append(f"Parse {' '.join(fields[3:])}")
        os.close(fd)
        os.unlink(path)


def round_trips(sent: List[str]) -> int:
    """A simple Query, or an extended-protocol Sync, waits for the server once."""
    return sum(1 for m in sent if m in ("Query", "Sync"))


@pytest.fixture
def agent(database: Dict[str, Any], ns: str) -> Iterator[Memory]:
    """alice on a connection of this test's own (a fresh one: nothing prepared yet)."""
    with psycopg.connect(dbname=database["dbname"], user=AGENTS["alice"],
                         password=database["password"], autocommit=True) as conn:
        yield Memory(conn, namespace=ns)


def hot_calls(mem: Memory) -> Dict[str, Callable[[int], Any]]:
    """Each hot call, i counting its repeats; the reads are of order:0, written before."""
    return {
        "propose": lambda i: mem.propose("order:1", "status", f"v{i}", source="crm",
                                         confidence=0.9),
        "lookup": lambda i: mem.lookup("order:0", "status"),
        "recall": lambda i: mem.recall("order shipped", k=3),
        "read": lambda i: mem.read("order:0", "status"),
    }


def test_each_hot_call_is_one_round_trip_and_prepared(agent: Memory, requires: Any) -> None:
    requires("recall")
    agent.propose("order:0", "status", "shipped", source="crm", confidence=0.9)
    agent.begin()
    threshold = agent.conn.prepare_threshold
    assert threshold is not None
    for name, call in hot_calls(agent).items():
        with wire(agent.conn) as first:
            call(0)
        assert round_trips(first) == 1 and "Parse" in first, (name, first)
        # psycopg prepares a statement at its prepare_threshold-th execution
        for i in range(1, threshold + 1):
            call(i)
        with wire(agent.conn) as later:
            result = call(threshold + 1)
        assert round_trips(later) == 1, (name, later)
        assert "Parse" not in later, (name, later)
        if name in ("lookup", "read"):
            assert [r.value for r in result] == ["shipped"], name
        if name == "recall":
            assert [r.value for r in result] == ["shipped"], name
    agent.commit()
    # psycopg's prepared statements are on the server, named by it
    prepared = agent.conn.execute("SELECT count(*) FROM pg_prepared_statements"
                                  " WHERE statement LIKE '%%memtx.%%'").fetchone()
    assert prepared is not None and prepared[0] >= 4


def test_a_connection_without_prepared_statements_stays_so(agent: Memory) -> None:
    agent.conn.prepare_threshold = None     # e.g. behind a transaction-mode pooler
    for i in range(8):
        with wire(agent.conn) as sent:
            agent.lookup("order:1", "status")
        assert round_trips(sent) == 1 and "Parse" in sent, sent
    assert agent.conn.execute("SELECT count(*) FROM pg_prepared_statements").fetchone() == (0,)


def test_inside_the_callers_transaction_a_call_is_a_savepoint(agent: Memory) -> None:
    conn = agent.conn
    with conn.transaction():
        agent.propose("order:2", "status", "kept", source="crm", confidence=0.9)
        with wire(conn) as sent:
            with pytest.raises(InvalidArgument):
                agent.propose("order:2", "status", "refused", confidence=7.0)
        assert round_trips(sent) >= 3, sent
        assert [m for m in sent if m.startswith("Parse ") and "SAVEPOINT" in m], sent
        # the caller's transaction survived the refused call
        assert [r.value for r in agent.lookup("order:2", "status")] == ["kept"]
    assert [r.value for r in agent.lookup("order:2", "status")] == ["kept"]


def test_a_connection_that_is_not_autocommit_gets_a_transaction_per_call(
        database: Dict[str, Any], ns: str, admin_conn: "psycopg.Connection[Any]") -> None:
    with psycopg.connect(dbname=database["dbname"], user=AGENTS["alice"],
                         password=database["password"]) as conn:
        mem = Memory(conn, namespace=ns)
        mem.propose("order:3", "status", "committed", source="crm", confidence=0.9)
        assert conn.info.transaction_status == pq.TransactionStatus.IDLE
        with pytest.raises(InvalidArgument):
            mem.propose("order:3", "status", "refused", confidence=7.0)
        assert conn.info.transaction_status == pq.TransactionStatus.IDLE
    # committed, and nothing of the refused call
    rows = admin_conn.execute("SELECT value FROM memtx.records WHERE namespace = %s",
                              (ns,)).fetchall()
    assert rows == [("committed",)]


def test_async_hot_calls_are_one_round_trip(database: Dict[str, Any], ns: str) -> None:
    import asyncio

    async def run() -> List[int]:
        conn = await psycopg.AsyncConnection.connect(
            dbname=database["dbname"], user=AGENTS["alice"], password=database["password"],
            autocommit=True)
        async with conn:
            mem = AsyncMemory(conn, namespace=ns)
            counts = []
            for i in range(3):
                with wire(conn) as sent:  # type: ignore[arg-type]
                    await mem.propose("order:4", "status", f"v{i}", source="crm", confidence=0.9)
                counts.append(round_trips(sent))
                with wire(conn) as sent:  # type: ignore[arg-type]
                    await mem.lookup("order:4", "status")
                counts.append(round_trips(sent))
            return counts
    assert asyncio.run(run()) == [1] * 6
