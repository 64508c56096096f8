"""Memory: every method against a live memtx, the turn, errors with their SQLSTATE."""
from __future__ import annotations

import dataclasses
import datetime
from typing import Any, Callable, List

import psycopg
import pytest

from memtx_client import (ActResult, CommitResult, Conflict, GateResult, InvalidArgument,
                          InvalidState, Memory, MemtxError, NoTransaction, NotFound,
                          PermissionDenied, Record, Repair)

from conftest import AGENTS, state_of


def test_turn_commits_what_it_staged(alice: Memory) -> None:
    with alice.turn() as mem:
        assert mem is alice and alice.is_open
        rid = alice.stage("order:841", "refund_eligible", True, confidence=0.9)
        assert isinstance(rid, int)
        tx = alice.tx
    assert not alice.is_open
    assert alice.last_commit == [CommitResult(rid, "committed", None)]
    with alice.turn():
        assert alice.tx != tx
        assert [r.id for r in alice.read("order:841", "refund_eligible")] == [rid]


def test_turn_aborts_on_exception(alice: Memory, admin_conn: Any) -> None:
    with pytest.raises(RuntimeError, match="tool crashed"):
        with alice.turn():
            rid = alice.stage("order:1", "note", "half-done")
            raise RuntimeError("tool crashed")
    assert not alice.is_open
    assert state_of(admin_conn, rid) == ("revoked", "aborted")
    assert alice.last_commit == []


def test_turn_keeps_an_explicit_commit_and_acts_after_it(alice: Memory, admin_conn: Any,
                                                         unique: str) -> None:
    admin_conn.execute("SELECT memtx.register_tool(%s, false)", (unique,))
    with alice.turn():
        rid = alice.stage("order:2", "eligible", True)
        outcome = alice.commit()
        # an agent commits its plan, then acts in the same (committed) transaction
        act = alice.act(unique, {"order": 2}, [rid])
        assert act.allowed and act.action_id is not None
    assert alice.last_commit == outcome == [CommitResult(rid, "committed", None)]


def test_stage_named_arguments_reach_the_record(alice: Memory, admin_conn: Any,
                                                unique: str) -> None:
    admin_conn.execute("SELECT memtx.register_source(%s, 0.8)", (unique,))
    with alice.turn():
        parent = alice.stage("order:3", "amount", 20)
        rid = alice.stage("customer:7", "profile", {"pending": ["order:3"], "vip": False},
                          kind="profile", source=unique, confidence=0.75,
                          derived_from=[parent], scope="shared",
                          readers=[AGENTS["bob"]], writers=[AGENTS["bob"]],
                          valid="[2020-01-01 00:00+00,)",
                          observed_at=datetime.datetime(2025, 6, 1, tzinfo=datetime.timezone.utc))
        [rec] = alice.read("customer:7")
    assert rec == Record(
        id=rid, tx_id=alice.tx, namespace=alice.namespace, entity="customer:7",
        attribute="profile", value={"pending": ["order:3"], "vip": False}, kind="profile",
        state="tentative", source=unique, authority=0.8, confidence=0.75,
        owner=AGENTS["alice"], readers=[AGENTS["bob"]], writers=[AGENTS["bob"]],
        scope="shared", valid='["2020-01-01 00:00:00+00",)',
        observed_at=rec.observed_at, reason=None)
    assert rec.observed_at == datetime.datetime(2025, 6, 1, tzinfo=datetime.timezone.utc)
    assert rec.to_json()["observed_at"].startswith("2025-06-01T00:00:00")


def test_stage_values_are_any_json(alice: Memory) -> None:
    values = [None, True, 0, 1.5, "text", [1, "two"], {"nested": {"list": [None]}}]
    with alice.turn():
        ids = [alice.stage("values", f"v{i}", v) for i, v in enumerate(values)]
        by_id = {r.id: r.value for r in alice.read("values")}
    assert [by_id[i] for i in ids] == values


def test_read_slot_entity_and_namespace(alice: Memory) -> None:
    with alice.turn():
        a = alice.stage("order:4", "status", "open")
        b = alice.stage("order:4", "amount", 40)
        c = alice.stage("order:5", "status", "open")
        assert [r.id for r in alice.read("order:4", "status")] == [a]
        assert sorted(r.id for r in alice.read("order:4")) == [a, b]
        assert sorted(r.id for r in alice.read()) == [a, b, c]


def test_commit_reports_quarantine(alice: Memory) -> None:
    with alice.turn():
        good = alice.stage("order:6", "eligible", True, confidence=0.9)
        weak = alice.stage("order:6", "fraud", True, confidence=0.1)
    assert alice.last_commit == [CommitResult(good, "committed", None),
                                 CommitResult(weak, "quarantined", "low_evidence")]


def test_commit_is_idempotent(alice: Memory) -> None:
    alice.begin()
    rid = alice.stage("order:7", "eligible", True)
    first = alice.commit()
    assert alice.commit() == first == [CommitResult(rid, "committed", None)]


def test_abort_returns_the_repairs(alice: Memory, admin_conn: Any) -> None:
    alice.begin()
    rid = alice.stage("order:8", "eligible", True)
    repairs = alice.abort()
    assert [(r.record_id, r.action, r.reason) for r in repairs] == [(rid, "revoked", "aborted")]
    assert all(isinstance(r, Repair) for r in repairs)
    assert state_of(admin_conn, rid) == ("revoked", "aborted")
    assert not alice.is_open


def test_revoke_cascades_by_kind(alice: Memory, admin_conn: Any) -> None:
    with alice.turn():
        belief = alice.stage("order:9", "eligible", True)
        derived = alice.stage("order:9", "decision", "refund", derived_from=[belief])
        summary = alice.stage("customer:9", "summary", "refund due",
                              kind="summary", derived_from=[belief])
    repairs = alice.revoke(belief, note="order 9 was already refunded")
    assert [(r.record_id, r.kind, r.action, r.reason) for r in repairs] == [
        (belief, "belief", "revoked", "revoked"),
        (derived, "belief", "revoked", "revoked_parent"),
        (summary, "summary", "quarantined", "invalidated")]
    assert {r.note for r in repairs} == {"order 9 was already refunded"}
    assert {r.root_id for r in repairs} == {belief}
    assert alice.revoke(belief) == []


def test_gate_and_act_refusals_are_results(alice: Memory, admin_conn: Any, unique: str) -> None:
    admin_conn.execute("SELECT memtx.register_tool(%s, false)", (unique,))
    alice.begin()
    rid = alice.stage("order:10", "eligible", True)
    assert alice.gate(unique) == GateResult(False, "in_flight_tentative", [rid])
    blocked = alice.act(unique, {"order": 10}, [rid], effect_key=f"{unique}-10")
    assert blocked == ActResult(False, "in_flight_tentative", None, [rid], False)
    alice.commit()
    assert alice.gate(unique) == GateResult(True, None, [])
    allowed = alice.act(unique, {"order": 10}, [rid], effect_key=f"{unique}-10")
    assert allowed.allowed and allowed.reason is None and allowed.action_id is not None
    # a blocked call did not use the key up; a repeat returns the stored decision
    assert not allowed.repeated
    assert alice.act(unique, {"order": 10}, [rid], effect_key=f"{unique}-10") == \
        dataclasses.replace(allowed, repeated=True)
    # the same key with other arguments is an error, not a decision
    with pytest.raises(Conflict) as err:
        alice.act(unique, {"order": 11}, [rid], effect_key=f"{unique}-10")
    assert err.value.sqlstate == "23505"


def test_reversible_tools_pass_the_gate(alice: Memory, admin_conn: Any, unique: str) -> None:
    admin_conn.execute("SELECT memtx.register_tool(%s, true, 'undo')", (unique,))
    with alice.turn():
        alice.stage("order:11", "eligible", True)
        assert alice.gate(unique).allowed


def test_recall_ranks_visible_matches(alice: Memory, requires: Any) -> None:
    requires("recall")
    with alice.turn():
        a = alice.stage("order:12", "refund_eligible", "refund approved for the damaged lamp")
        alice.stage("order:13", "shipping", "shipped by courier")
    with alice.turn():
        hits = alice.recall("refund lamp")
        assert [h.record_id for h in hits] == [a]
        assert hits[0].entity == "order:12" and hits[0].rank > 0
        assert alice.recall("refund", k=1, entity_prefix="customer:") == []
        with pytest.raises(InvalidArgument) as err:
            alice.recall("refund", k=0)
        assert err.value.sqlstate == "22003"


def test_lookup_needs_no_transaction(alice: Memory, bob: Memory, requires: Any) -> None:
    requires("lookup")
    with alice.turn():
        kept = alice.stage("order:14", "status", "open", scope="public")
        alice.stage("order:14", "status_weak", "x", confidence=0.1, scope="public")
    fresh = Memory(bob.conn, namespace=bob.namespace)
    assert [r.id for r in fresh.lookup("order:14")] == [kept]
    assert [r.state for r in fresh.lookup("order:14", "status")] == ["committed"]
    assert fresh.lookup("order:14", "nothing") == []


def test_outcome_of_a_proposal(alice: Memory, requires: Any) -> None:
    requires("outcome")
    with alice.turn():
        rid = alice.stage("order:15", "eligible", True, proposal="p-15")
    found = alice.outcome("p-15")
    assert found is not None and (found.record_id, found.state) == (rid, "committed")
    assert alice.outcome("p-unknown") is None


def test_tool_specs_in_three_formats(alice: Memory, requires: Any) -> None:
    requires("tool_specs")
    openai = alice.tool_specs()
    assert alice.tool_specs("openai") == openai
    names = [t["function"]["name"] for t in openai]
    assert "memory_stage" in names
    assert [t["name"] for t in alice.tool_specs("anthropic")] == names
    assert [t["name"] for t in alice.tool_specs("mcp")] == names
    with pytest.raises(InvalidArgument) as err:
        alice.tool_specs("gemini")
    assert err.value.sqlstate == "22023"


# -- errors -------------------------------------------------------------------

def test_calls_need_a_transaction(alice: Memory) -> None:
    fresh = Memory(alice.conn, namespace=alice.namespace)
    calls: List[Callable[[], Any]] = [
        fresh.commit, fresh.abort, fresh.read, lambda: fresh.stage("a", "b", 1),
        lambda: fresh.gate("x"), lambda: fresh.act("x", {})]
    for call in calls:
        with pytest.raises(NoTransaction):
            call()
    with pytest.raises(NoTransaction):
        fresh.tx


@pytest.mark.parametrize("kwargs, sqlstate", [
    ({"confidence": 1.5}, "22003"),
    ({"kind": "rumour"}, "22P02"),
    ({"valid": "not a range"}, "22P02"),
    ({"derived_from": [2 ** 62]}, "42704"),
    ({"observed_at": "2999-01-01 00:00+00"}, "22008"),
])
def test_bad_input_raises_with_its_sqlstate_and_writes_nothing(
        alice: Memory, kwargs: Any, sqlstate: str) -> None:
    alice.begin()
    with pytest.raises(MemtxError) as err:
        alice.stage("order:16", "eligible", True, **kwargs)
    assert err.value.sqlstate == sqlstate
    assert err.value.message
    # nothing was written and the transaction is still usable
    assert alice.read() == []
    rid = alice.stage("order:16", "eligible", True)
    assert alice.commit() == [CommitResult(rid, "committed", None)]


def test_error_classes_follow_the_sqlstate(alice: Memory, bob: Memory) -> None:
    with pytest.raises(NotFound) as nf:
        Memory(alice.conn, namespace=alice.namespace, tx=2 ** 62).read()
    assert nf.value.sqlstate == "42704"
    alice.begin()
    with pytest.raises(InvalidArgument):
        alice.stage("tool:refund", "x", 1)
    # another agent's transaction
    with pytest.raises(PermissionDenied) as pd:
        Memory(bob.conn, namespace=bob.namespace, tx=alice.tx).read()
    assert pd.value.sqlstate == "42501"
    # tier is trusted configuration: an agent may not pass it
    with pytest.raises(PermissionDenied):
        Memory(alice.conn, namespace=alice.namespace).begin(tier="low")
    # an ended transaction
    alice.abort()
    with pytest.raises(InvalidState) as st:
        alice.stage("order:17", "eligible", True)
    assert st.value.sqlstate == "25000"
    assert str(st.value).startswith(st.value.sqlstate + ": ")


def test_namespace_membership_is_enforced(alice_conn: Any) -> None:
    with pytest.raises(PermissionDenied) as err:
        Memory(alice_conn, namespace="not-granted-to-anyone").begin()
    assert err.value.sqlstate == "42501"


def test_connection_errors_are_not_wrapped(database: Any) -> None:
    conn = psycopg.connect(dbname=database["dbname"], autocommit=True)
    mem = Memory(conn)
    conn.close()
    with pytest.raises(psycopg.OperationalError):
        mem.begin()


# -- the caller's SQL transactions ---------------------------------------------

def test_each_call_is_its_own_sql_transaction(database: Any) -> None:
    with psycopg.connect(dbname=database["dbname"], user=AGENTS["alice"],
                         password=database["password"]) as conn:
        assert not conn.autocommit
        mem = Memory(conn)
        mem.begin()
        mem.stage("order:18", "eligible", True)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        mem.commit()
        assert [r.state for r in mem.read("order:18")] == ["committed"]


def test_calls_inside_a_caller_transaction_roll_back_with_it(alice: Memory) -> None:
    alice.begin()
    with alice.conn.transaction():
        alice.stage("order:19", "eligible", True)
        assert len(alice.read("order:19")) == 1
        raise psycopg.Rollback()  # leaves the block, rolling back what it did
    assert alice.read("order:19") == []


# -- two agents, two roles ------------------------------------------------------

def test_two_agents_share_and_hide(alice: Memory, bob: Memory, admin_conn: Any,
                                   unique: str) -> None:
    admin_conn.execute("SELECT memtx.register_tool(%s, false)", (unique,))
    with alice.turn():
        shared = alice.stage("order:20", "eligible", True, scope="shared",
                             readers=[AGENTS["bob"]])
        alice.stage("order:20", "internal_note", "do not share")
    with bob.turn():
        assert [(r.id, r.owner) for r in bob.read("order:20")] == [(shared, AGENTS["alice"])]
        decision = bob.stage("refund:20", "approved", True, derived_from=[shared])
        # bob's own staging blocks his irreversible tool until he commits
        assert bob.gate(unique) == GateResult(False, "in_flight_tentative", [decision])
        bob.commit()
        # alice's staging in flight in the same namespace blocks bob too
        alice.begin()
        pending = alice.stage("order:20", "amount", 25)
        assert bob.act(unique, {"order": 20}, [decision]) == \
            ActResult(False, "in_flight_tentative", None, [pending], False)
        alice.commit()
    with bob.turn():
        assert bob.act(unique, {"order": 20}, [decision]).allowed
    # bob may not revoke alice's record; alice may, and the cascade reaches bob's
    with pytest.raises(PermissionDenied):
        bob.revoke(shared)
    repairs = alice.revoke(shared, "wrong order")
    assert [(r.record_id, r.action) for r in repairs][:2] == [(shared, "revoked"),
                                                            (decision, "revoked")]
    assert {r.kind: r.action for r in repairs}["tool_action"] == "leaked"


def test_harness_opens_a_turn_for_an_agent(harness: Memory, alice: Memory) -> None:
    tx = harness.begin(tier="high", agent=AGENTS["alice"])
    alice.attach(tx)
    rid = alice.stage("order:21", "eligible", True)
    assert alice.commit() == [CommitResult(rid, "committed", None)]
    row = harness.conn.execute("SELECT agent, tier::text FROM memtx.transactions WHERE id = %s",
                               (tx,)).fetchone()
    assert row == (AGENTS["alice"], "high")


def test_a_turn_resumes_on_another_connection(alice: Memory, database: Any) -> None:
    """A memtx transaction outlives its connection (a pool hands out another)."""
    tx = alice.begin()
    first = alice.stage("order:22", "eligible", True)
    with psycopg.connect(dbname=database["dbname"], user=AGENTS["alice"],
                         password=database["password"], autocommit=True) as other:
        resumed = Memory(other, namespace=alice.namespace, tx=tx)
        assert resumed.is_open and [r.id for r in resumed.read("order:22")] == [first]
        assert resumed.commit() == [CommitResult(first, "committed", None)]


def test_repeatable_read_is_refused(alice: Memory, database: Any) -> None:
    with psycopg.connect(dbname=database["dbname"], user=AGENTS["alice"],
                         password=database["password"]) as conn:
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with pytest.raises(InvalidState) as err:
            Memory(conn, namespace=alice.namespace).begin()
        assert err.value.sqlstate == "0A000"
