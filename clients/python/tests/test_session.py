"""The session as a Python user holds it: the installed package, the permission block,
act on unregistered tools, arguments checked before sending, ``with Memory(...)``,
pools, the retry helpers, a fence that ends a transaction."""
from __future__ import annotations

import importlib.metadata
import os
import pathlib
import warnings
from typing import Any, Dict

import psycopg
import psycopg_pool
import pytest

import memtx_client
from memtx_client import (InvalidArgument, Memory, PermissionDenied, Retryable,
                          UnregisteredToolWarning, retrying)

from conftest import AGENTS, state_of


def conninfo(database: Dict[str, Any], role: str) -> str:
    return psycopg.conninfo.make_conninfo(dbname=database["dbname"], user=role,
                                          password=database["password"])


@pytest.mark.skipif(not os.environ.get("MEMTX_CLIENT_INSTALLED"),
                    reason="test/python/run installs the package; pytest from a checkout does not")
def test_the_tests_run_against_the_installed_package() -> None:
    source = pathlib.Path(__file__).resolve().parents[1] / "memtx_client"
    assert pathlib.Path(memtx_client.__file__).resolve().parent != source
    assert importlib.metadata.version("memtx-client") == memtx_client.__version__ == "0.3.0"
    assert (pathlib.Path(memtx_client.__file__).parent / "py.typed").exists()


# -- the permission block --------------------------------------------------------

def test_records_are_private_unless_the_session_shares_them(alice_conn: Any, bob: Memory,
                                                            ns: str) -> None:
    alone = Memory(alice_conn, namespace=ns)
    with alone.turn():
        alone.stage("order:841", "refund_eligible", True)
    sharing = Memory(alice_conn, namespace=ns, scope="shared", readers=[AGENTS["bob"]])
    with sharing.turn():
        shared = sharing.stage("order:842", "refund_eligible", True)
        own = sharing.stage("order:843", "note", "mine", scope="private", readers=[])
    proposed = sharing.propose("order:844", "refund_eligible", False)
    with bob.turn():
        seen = bob.recall("refund eligible order", k=10)
    # bob sees what the sharing session wrote, and nothing of the private one
    assert sorted(h.record_id for h in seen) == [shared, proposed.record_id]
    assert own not in [h.record_id for h in seen]
    [rec] = bob.lookup("order:842")
    assert (rec.scope, rec.readers) == ("shared", [AGENTS["bob"]])


def test_the_permission_block_is_checked(alice_conn: Any) -> None:
    with pytest.raises(InvalidArgument, match=r"^22P02: scope must be one of private, shared, public; got 'team'$"):
        Memory(alice_conn, scope="team")
    with pytest.raises(TypeError, match="readers must be a sequence of role names"):
        Memory(alice_conn, readers="bob")


# -- act on a tool memtx does not know --------------------------------------------

def test_act_warns_about_an_unregistered_tool_unless_allowed(alice: Memory, admin_conn: Any,
                                                             unique: str) -> None:
    admin_conn.execute("SELECT memtx.register_tool(%s, true)", (unique,))
    with alice.turn():
        with pytest.warns(UnregisteredToolWarning, match=f"tool '{unique}x' is not registered") as caught:
            made = alice.act(f"{unique}x", {"order": 1})
        assert made.allowed, "legal SQL: an unregistered tool is irreversible"
        assert caught[0].filename == __file__, "the warning points at the caller"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            alice.act(f"{unique}x", {"order": 2}, allow_unregistered=True)
            alice.act(unique, {"order": 3})
            Memory(alice.conn, namespace=alice.namespace, tx=alice.tx,
                   allow_unregistered_tools=True).act(f"{unique}x", {"order": 4})


# -- arguments checked before anything is sent --------------------------------------

def test_a_bad_label_names_the_argument_and_the_labels(alice: Memory) -> None:
    with alice.turn():
        with pytest.raises(InvalidArgument) as raised:
            alice.stage("e", "a", 1, kind="fact")
        assert raised.value.sqlstate == "22P02"
        assert raised.value.message == ("kind must be one of belief, summary, profile, index_entry,"
                                        " shared_copy, tool_action; got 'fact'")
        assert isinstance(raised.value, ValueError)
        assert alice.read() == []
    with pytest.raises(InvalidArgument, match="tier must be one of low, medium, high, external_action"):
        alice.begin(tier="urgent")


def test_a_set_is_a_type_error_naming_the_argument(alice: Memory) -> None:
    with alice.turn():
        with pytest.raises(TypeError, match=r"^value\['tags'\] must be JSON: a set is not \(use a list\)$"):
            alice.stage("e", "a", {"tags": {"x", "y"}})
        with pytest.raises(TypeError, match=r"^args must be JSON: a set is not \(use a list\)$"):
            alice.act("t", {1, 2}, allow_unregistered=True)
        with pytest.raises(TypeError, match=r"^value\[0\] must be JSON: nan is not a JSON number$"):
            alice.stage("e", "a", [float("nan")])
        with pytest.raises(TypeError, match="readers must be a sequence, not str"):
            alice.stage("e", "a", 1, readers="bob")
        # a set where memtx takes an array is fine
        alice.stage("e", "a", 1, readers={AGENTS["bob"]})
        assert len(alice.read()) == 1


# -- with Memory(...) ----------------------------------------------------------------

def test_with_memory_closes_what_it_opened(database: Dict[str, Any], ns: str,
                                           admin_conn: Any) -> None:
    with Memory(conninfo(database, AGENTS["alice"]), namespace=ns) as mem:
        mem.begin()
        left_open = mem.stage("order:1", "note", "never committed")
        conn = mem.conn
    assert conn.closed
    assert state_of(admin_conn, left_open) == ("revoked", "aborted")
    # a transaction detached (handed on) or attached (someone else's) is left alone
    with Memory(conninfo(database, AGENTS["alice"]), namespace=ns) as mem:
        tx = mem.begin()
        handed_on = mem.stage("order:2", "note", "handed on")
        mem.detach()
    with Memory(conninfo(database, AGENTS["alice"]), namespace=ns, tx=tx) as mem:
        mem.stage("order:2", "more", "resumed")
    assert state_of(admin_conn, handed_on) == ("tentative", None)
    # a connection the caller gave stays open
    with psycopg.connect(conninfo(database, AGENTS["alice"]), autocommit=True) as given:
        with Memory(given, namespace=ns, tx=tx) as mem:
            mem.commit()
        assert not given.closed
    assert state_of(admin_conn, handed_on) == ("committed", None)


# -- pools -----------------------------------------------------------------------------

def test_a_turn_on_a_connection_pool(database: Dict[str, Any], ns: str, bob: Memory) -> None:
    with psycopg_pool.ConnectionPool(conninfo(database, AGENTS["alice"]), min_size=2, max_size=2,
                                     open=True) as pool:
        mem = Memory(pool, namespace=ns, scope="public")
        with mem.turn():
            first = mem.stage("order:5", "status", "open")
            second = mem.stage("order:5", "note", "two calls, any pooled connection")
            assert {r.id for r in mem.read("order:5")} == {first, second}
        assert [c.state for c in mem.last_commit] == ["committed", "committed"]
        assert pool.get_stats()["pool_size"] == 2
    assert [r.id for r in bob.lookup("order:5", "status")] == [first]


# -- retries ---------------------------------------------------------------------------

def test_propose_with_retry_looks_up_the_head_again(alice_conn: Any, bob: Memory, ns: str,
                                                    admin_conn: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    alice = Memory(alice_conn, namespace=ns, scope="public", writers=[AGENTS["bob"]])
    first = alice.propose_with_retry("order:6", "status", "open", proposal="p6")
    assert (first.state, first.reason) == ("committed", None)
    # the head moves between the lookup and the propose: the first attempt is stale
    real = Memory._lookup
    moves = iter([True])

    def racing(self: Memory, *args: Any, **kwargs: Any) -> Any:
        heads = yield from real(self, *args, **kwargs)
        if next(moves, False):
            bob.propose("order:6", "status", "held", scope="public", writers=[AGENTS["alice"]],
                        expected_head=heads[0].id)
        return heads
    monkeypatch.setattr(Memory, "_lookup", racing)
    done = alice.propose_with_retry("order:6", "status", "shipped", proposal="p6b", delay=0)
    assert (done.state, done.reason) == ("committed", None)
    rows = admin_conn.execute("SELECT value #>> '{}', state::text, reason, proposal FROM memtx.records"
                              " WHERE namespace = %s AND entity = 'order:6' ORDER BY id",
                              (ns,)).fetchall()
    assert rows == [("open", "superseded", None, "p6"), ("held", "superseded", None, None),
                    ("shipped", "quarantined", "stale_head", "p6b"),
                    ("shipped", "committed", None, "p6b#2")]


def test_propose_with_retry_repeats_a_serialization_failure_and_gives_up_in_time(
        alice: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    real = Memory._propose
    failures = iter([True, True])

    def flaky(self: Memory, *args: Any, **kwargs: Any) -> Any:
        if next(failures, False):
            raise Retryable("could not serialize access", "40001")
        return (yield from real(self, *args, **kwargs))
    monkeypatch.setattr(Memory, "_propose", flaky)
    assert alice.propose_with_retry("order:7", "status", "open", delay=0).state == "committed"
    failures = iter([True, True, True])
    with pytest.raises(Retryable):
        alice.propose_with_retry("order:8", "status", "open", attempts=3, delay=0)
    # other refusals are results, not retried
    monkeypatch.setattr(Memory, "_propose", real)
    weak = alice.propose_with_retry("order:9", "status", "open", confidence=0.1)
    assert (weak.state, weak.reason) == ("quarantined", "low_evidence")


def test_retrying_repeats_a_unit_of_work() -> None:
    calls = []

    def work() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise Retryable("deadlock detected", "40P01")
        return "done"
    assert retrying(work, delay=0) == "done" and len(calls) == 3
    with pytest.raises(Retryable):
        retrying(lambda: (_ for _ in ()).throw(Retryable("x", "40001")), attempts=2, delay=0)
    with pytest.raises(InvalidArgument):
        retrying(work, attempts=0)


# -- a fence -------------------------------------------------------------------------

def test_a_fence_ends_the_session_transaction(carol: Memory, harness: Memory) -> None:
    carol.begin()
    carol.stage("order:10", "note", "before the fence")
    harness.fence(AGENTS["carol"])
    try:
        with pytest.raises(PermissionDenied, match=f"memtx transaction {carol.tx} was fenced"):
            carol.stage("order:10", "note", "during")
        assert not carol.is_open
    finally:
        harness.unfence(AGENTS["carol"])
    with carol.turn():
        carol.stage("order:10", "note", "after")
    assert [c.state for c in carol.last_commit] == ["committed"]
