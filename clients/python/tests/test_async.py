"""AsyncMemory: the same session on psycopg's AsyncConnection and AsyncConnectionPool."""
from __future__ import annotations

import asyncio
import inspect
from typing import Any, Dict

import psycopg
import psycopg_pool
import pytest

from memtx_client import (AsyncMemory, InvalidArgument, Memory, NoTransaction, NotFound,
                          Retryable, aretrying)

from conftest import AGENTS, state_of


def conninfo(database: Dict[str, Any], role: str) -> str:
    return psycopg.conninfo.make_conninfo(dbname=database["dbname"], user=role,
                                          password=database["password"])


def test_the_same_operations_with_the_same_signatures() -> None:
    public = {n for n in dir(Memory) if not n.startswith("_")}
    assert public == {n for n in dir(AsyncMemory) if not n.startswith("_")}
    calls = {n for n in public if inspect.iscoroutinefunction(getattr(AsyncMemory, n))}
    assert {"begin", "stage", "commit", "act", "recall", "propose_with_retry", "close"} <= calls
    for name in calls - {"close"}:
        assert inspect.signature(getattr(Memory, name)) == inspect.signature(getattr(AsyncMemory, name)), name


def test_a_turn(database: Dict[str, Any], ns: str, admin_conn: Any) -> None:
    async def run() -> None:
        async with AsyncMemory(conninfo(database, AGENTS["alice"]), namespace=ns,
                               scope="shared", readers=[AGENTS["bob"]]) as mem:
            async with mem.turn():
                rid = await mem.stage("order:841", "refund_eligible", {"eligible": True},
                                      confidence=0.9)
                assert (await mem.gate("issue_refund")).reason == "in_flight_tentative"
                with pytest.raises(InvalidArgument) as raised:
                    await mem.stage("order:841", "refund_eligible", True, confidence=1.5)
                assert raised.value.sqlstate == "22003"
            assert [c.state for c in mem.last_commit] == ["committed"]
            async with mem.turn():
                [hit] = await mem.recall("refund order 841", k=3)
                assert hit.record_id == rid
            [rec] = await mem.lookup("order:841")
            assert (rec.id, rec.scope, rec.readers) == (rid, "shared", [AGENTS["bob"]])
            with pytest.raises(NotFound):
                await mem.revoke(2 ** 62)
            result = await mem.propose_with_retry("order:841", "status", "open")
            assert result.state == "committed"
            await mem.begin()
            left_open = await mem.stage("order:842", "note", "left open")
            conn = mem.conn
        assert conn.closed
        assert state_of(admin_conn, left_open) == ("revoked", "aborted")
        with pytest.raises(NoTransaction):
            await AsyncMemory(conninfo(database, AGENTS["alice"]), namespace=ns).read()
    asyncio.run(run())


def test_a_turn_on_an_async_pool(database: Dict[str, Any], ns: str) -> None:
    async def run() -> None:
        async with psycopg_pool.AsyncConnectionPool(conninfo(database, AGENTS["bob"]),
                                                    min_size=2, max_size=2, open=False) as pool:
            mem = AsyncMemory(pool, namespace=ns)
            async with mem.turn():
                ids = await asyncio.gather(*(mem.stage("order:9", f"line{i}", i) for i in range(4)))
            assert sorted(c.record_id for c in mem.last_commit) == sorted(ids)
    asyncio.run(run())


def test_aretrying() -> None:
    calls = []

    async def work() -> str:
        calls.append(1)
        if len(calls) < 2:
            raise Retryable("could not serialize access", "40001")
        return "done"
    assert asyncio.run(aretrying(work, delay=0)) == "done"
    assert len(calls) == 2
