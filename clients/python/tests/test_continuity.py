"""The continuity layer (SPEC §10, §12, §13) through Memory: propose and its
lost replies, history and as-of reads, restore, fencing and erasure."""

from __future__ import annotations

import datetime
import select
import socket
import threading
from typing import Any, Dict, Iterator, Tuple

import psycopg
import pytest

from memtx_client import (CommitResult, Conflict, HistoryEntry, InvalidArgument, Memory,
                          NoTransaction, PermissionDenied, ProposeResult)

from conftest import AGENTS, state_of

UTC = datetime.timezone.utc


def written(conn: "psycopg.Connection[Any]") -> Tuple[int, ...]:
    """Row counts of what a memtx write leaves behind, read by the harness."""
    row = conn.execute("SELECT (SELECT count(*) FROM memtx.records),"
                       " (SELECT count(*) FROM memtx.transactions),"
                       " (SELECT count(*) FROM memtx.history),"
                       " (SELECT count(*) FROM memtx.rollback_log)").fetchone()
    assert row is not None
    return tuple(row)


def committed_at(mem: Memory, record: int) -> datetime.datetime:
    """When the record became committed, from its history."""
    [at] = [h.at for h in mem.history(record) if h.state == "committed"]
    return at


# -- propose --------------------------------------------------------------------

def test_propose_commits_one_record_in_one_call(alice: Memory) -> None:
    result = alice.propose("order:1", "status", {"state": "open"}, confidence=0.9)
    assert isinstance(result, ProposeResult)
    assert (result.state, result.reason) == ("committed", None)
    assert isinstance(result.tx_id, int)
    assert not alice.is_open  # the session's own transaction is not touched
    [head] = alice.lookup("order:1", "status")
    assert (head.id, head.tx_id, head.value) == (result.record_id, result.tx_id, {"state": "open"})


def test_propose_runs_the_pipeline(alice: Memory) -> None:
    weak = alice.propose("order:2", "fraud", True, confidence=0.1)
    assert (weak.state, weak.reason) == ("quarantined", "low_evidence")


def test_propose_with_a_stale_head_is_quarantined(alice: Memory, bob: Memory) -> None:
    first = alice.propose("order:3", "status", "open", scope="public", writers=[AGENTS["bob"]])
    # bob read the head and moves the slot on; alice still believes it is empty
    moved = bob.propose("order:3", "status", "shipped", expected_head=first.record_id)
    assert (moved.state, moved.reason) == ("committed", None)
    stale = alice.propose("order:3", "status", "cancelled", expected_head=0)
    assert (stale.state, stale.reason) == ("quarantined", "stale_head")
    stale = alice.propose("order:3", "status", "cancelled", expected_head=first.record_id)
    assert (stale.state, stale.reason) == ("quarantined", "stale_head")


def test_propose_retry_returns_the_result_and_writes_nothing(alice: Memory,
                                                             admin_conn: Any) -> None:
    first = alice.propose("order:4", "status", "open", proposal="p-4")
    before = written(admin_conn)
    assert alice.propose("order:4", "status", "open", proposal="p-4") == first
    assert written(admin_conn) == before
    with pytest.raises(Conflict) as err:
        alice.propose("order:4", "status", "closed", proposal="p-4")
    assert err.value.sqlstate == "23505" and not err.value.retryable
    assert str(first.record_id) in (err.value.detail or "")
    assert written(admin_conn) == before


def test_propose_refuses_bad_input_and_writes_nothing(alice: Memory, admin_conn: Any) -> None:
    before = written(admin_conn)
    with pytest.raises(InvalidArgument) as err:
        alice.propose("order:5", "status", "open", confidence=1.5, proposal="p-5")
    assert err.value.sqlstate == "22003"
    assert written(admin_conn) == before
    # the id was not consumed
    assert alice.propose("order:5", "status", "open", proposal="p-5").state == "committed"


class ReplyLosingProxy:
    """A TCP proxy to the server that can lose a reply: once the client has sent
    bytes containing ``lose_reply_to`` (set it to arm), the server's next bytes are
    dropped and both connections closed, as when the network fails after the server
    acted and before the client heard.  Needs an unencrypted connection."""

    def __init__(self, conn: "psycopg.Connection[Any]") -> None:
        host, port = conn.info.host, conn.info.port
        self.upstream: Tuple[int, Any] = (
            (socket.AF_UNIX, f"{host}/.s.PGSQL.{port}") if host.startswith("/")
            else (socket.AF_INET, (host, port)))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.lose_reply_to: bytes | None = None
        self.lost = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        client, _ = self.listener.accept()
        family, address = self.upstream
        server = socket.socket(family, socket.SOCK_STREAM)
        server.connect(address)
        sent_marker = False
        with client, server:
            while True:
                ready, _, _ = select.select([client, server], [], [])
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    if sock is client:
                        sent_marker = sent_marker or (
                            self.lose_reply_to is not None and self.lose_reply_to in data)
                        server.sendall(data)
                    elif sent_marker:
                        self.lost.set()
                        return
                    else:
                        client.sendall(data)

    def close(self) -> None:
        self.listener.close()
        self.thread.join(timeout=10)


@pytest.fixture
def lossy_alice(database: Dict[str, Any], admin_conn: Any,
                alice: Memory) -> Iterator[Tuple[Memory, ReplyLosingProxy]]:
    """alice's session over a connection whose next reply the proxy can lose."""
    proxy = ReplyLosingProxy(admin_conn)
    conn = psycopg.connect(host="127.0.0.1", port=proxy.port, dbname=database["dbname"],
                           user=AGENTS["alice"], password=database["password"],
                           sslmode="disable", autocommit=True)
    try:
        yield Memory(conn, namespace=alice.namespace), proxy
    finally:
        conn.close()
        proxy.close()


def test_a_lost_propose_reply_is_recovered(lossy_alice: Tuple[Memory, ReplyLosingProxy],
                                           alice: Memory, admin_conn: Any) -> None:
    lossy, proxy = lossy_alice
    assert lossy.lookup("order:6") == []  # the proxy passes replies until armed
    # each call is one statement, its own SQL transaction, which the server commits
    # before it replies (it flushes its reply at the end): lose the reply to the propose
    proxy.lose_reply_to = b'memtx."propose"'
    with pytest.raises(psycopg.OperationalError):
        lossy.propose("order:6", "status", "open", proposal="p-6")
    assert proxy.lost.is_set() and lossy.conn.closed
    # on another connection: the call committed; outcome tells what became of it
    found = alice.outcome("p-6")
    assert found is not None
    assert (found.state, found.reason, found.tx_status) == ("committed", None, "committed")
    # and a retry with the same id and content returns it, writing nothing
    before = written(admin_conn)
    again = alice.propose("order:6", "status", "open", proposal="p-6")
    assert again == ProposeResult(found.tx_id, found.record_id, "committed", None)
    assert written(admin_conn) == before
    assert [r.id for r in alice.lookup("order:6", "status")] == [found.record_id]


# -- history and the past ---------------------------------------------------------

def test_history_lists_each_state_change_in_order(alice: Memory, bob: Memory) -> None:
    alice.begin()
    staged = alice.stage("order:7", "status", "open")
    alice.commit()
    alice.revoke(staged, note="wrong order")
    history = alice.history(staged)
    assert all(isinstance(h, HistoryEntry) and h.record_id == staged for h in history)
    assert [(h.state, h.reason) for h in history] == [
        ("tentative", None), ("committed", None), ("revoked", "revoked")]
    assert [h.pos for h in history] == sorted(h.pos for h in history)
    assert [h.at for h in history] == sorted(h.at for h in history)
    # a proposal is settled within its one call (SPEC §21): nobody could see
    # it tentative, so its first history row is its settled state
    result = alice.propose("order:7b", "status", "open")
    assert [(h.state, h.reason) for h in alice.history(result.record_id)] == [("committed", None)]
    # history is readable with its record only
    assert bob.history(staged) == []
    assert alice.history(2 ** 62) == []


def test_read_as_of_sees_the_slot_as_it_was(alice: Memory) -> None:
    first = alice.propose("order:8", "status", "open", valid="[2020-01-01 00:00+00,)")
    then = committed_at(alice, first.record_id)
    second = alice.propose("order:8", "status", "shipped", expected_head=first.record_id)
    assert second.state == "committed"
    now = committed_at(alice, second.record_id)
    assert [(r.id, r.value, r.state) for r in alice.read_as_of(then, "order:8", "status")] == \
        [(first.record_id, "open", "committed")]
    past = alice.read_as_of(now, "order:8")
    assert [(r.id, r.value, r.state) for r in past] == [(second.record_id, "shipped", "committed")]
    assert alice.read_as_of(then - datetime.timedelta(microseconds=1), "order:8") == []
    # the whole namespace, and bi-temporal: valid time as well as transaction time
    assert [r.id for r in alice.read_as_of(then)] == [first.record_id]
    assert [r.id for r in alice.read_as_of(then, valid_at="2021-06-01 00:00+00")] == \
        [first.record_id]
    assert alice.read_as_of(then, valid_at=datetime.datetime(2019, 1, 1, tzinfo=UTC)) == []
    assert alice.read_as_of(now.isoformat(), "order:8", "status") == past


# -- restore ------------------------------------------------------------------------

def test_restore_stages_a_past_value_over_the_current_head(alice: Memory,
                                                           admin_conn: Any) -> None:
    first = alice.propose("order:9", "status", "open", confidence=0.8)
    then = committed_at(alice, first.record_id)
    second = alice.propose("order:9", "status", "lost", expected_head=first.record_id)
    with alice.turn():
        restored = alice.restore("order:9", "status", then)
        [staged] = [r for r in alice.read("order:9", "status") if r.id == restored]
        assert (staged.id, staged.value, staged.confidence) == (restored, "open", 0.8)
    assert alice.last_commit == [CommitResult(restored, "committed", None)]
    assert [r.id for r in alice.lookup("order:9", "status")] == [restored]
    row = admin_conn.execute("SELECT restored_from, expected_head FROM memtx.records"
                             " WHERE id = %s", (restored,)).fetchone()
    assert row == (first.record_id, second.record_id)
    assert state_of(admin_conn, second.record_id)[0] == "superseded"


def test_restore_without_a_record_then_is_refused(alice: Memory) -> None:
    first = alice.propose("order:10", "status", "open")
    then = committed_at(alice, first.record_id)
    with pytest.raises(NoTransaction):
        Memory(alice.conn, namespace=alice.namespace).restore("order:10", "status", then)
    with alice.turn():
        with pytest.raises(InvalidArgument) as err:
            alice.restore("order:10", "status", then - datetime.timedelta(microseconds=1))
        assert err.value.sqlstate == "22023"
        with pytest.raises(InvalidArgument):
            alice.restore("order:10", "nothing", then)
        # the refusals staged nothing and the turn goes on
        assert [r.id for r in alice.read("order:10")] == [first.record_id]
        assert alice.restore("order:10", "status", then) > first.record_id


# -- fencing ------------------------------------------------------------------------

def test_fence_refuses_the_role_until_unfence(carol: Memory, harness: Memory,
                                              bob: Memory, admin_conn: Any) -> None:
    role = AGENTS["carol"]
    old_tx = carol.begin()
    pending = carol.stage("order:11", "status", "open")
    epoch = harness.fence(role)
    try:
        assert epoch >= 1 and epoch == harness.writer_epochs(role)[-1].epoch
        assert harness.writer_epochs(role)[-1].unfenced_at is None
        assert state_of(admin_conn, pending) == ("revoked", "fenced")
        with pytest.raises(PermissionDenied) as err:
            carol.propose("order:11", "status", "open")
        assert err.value.sqlstate == "42501" and not err.value.retryable
        with pytest.raises(PermissionDenied):
            carol.begin()
        # reads without a transaction still answer
        assert carol.lookup("order:11") == []
    finally:
        harness.unfence(role)
    assert harness.writer_epochs(role)[-1].unfenced_at is not None
    assert carol.propose("order:11", "status", "open").state == "committed"
    # a transaction opened before the fence stays refused for good
    with pytest.raises(PermissionDenied):
        Memory(carol.conn, namespace=carol.namespace, tx=old_tx).commit()
    # a role sees its own fences only; fencing is a harness operation
    assert [e.epoch for e in carol.writer_epochs()] == [e.epoch for e in harness.writer_epochs(role)]
    assert bob.writer_epochs(role) == []
    with pytest.raises(PermissionDenied) as err:
        bob.fence(role)
    assert err.value.sqlstate == "42501"
    assert harness.writer_epochs(role)[-1].epoch == epoch


# -- erasure ------------------------------------------------------------------------

def test_erase_removes_the_value_and_keeps_the_history(alice: Memory, harness: Memory,
                                                       admin_conn: Any) -> None:
    result = alice.propose("customer:12", "email", "someone@example.com")
    with pytest.raises(PermissionDenied):
        alice.erase(result.record_id)
    repairs = harness.erase(result.record_id, note="erasure request 12")
    assert [(r.record_id, r.action, r.reason, r.note) for r in repairs] == [
        (result.record_id, "revoked", "erased", "erasure request 12")]
    row = admin_conn.execute("SELECT value = 'null'::jsonb, erased_at IS NOT NULL"
                             " FROM memtx.records WHERE id = %s", (result.record_id,)).fetchone()
    assert row == (True, True)
    assert [(h.state, h.reason) for h in alice.history(result.record_id)][-1] == \
        ("revoked", "erased")
    # erasing an erased record writes nothing
    before = written(admin_conn)
    assert harness.erase(result.record_id) == []
    assert written(admin_conn) == before
