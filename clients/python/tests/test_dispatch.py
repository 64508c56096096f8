"""Dispatcher: the three tool-call formats, routing, results and replies."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from memtx_client import (ActResult, Dispatcher, Memory, NoTransaction, ToolCallError,
                          parse_tool_call)
from memtx_client.dispatch import MEMORY_TOOLS

from conftest import AGENTS, state_of


def openai_call(name: str, arguments: Dict[str, Any], call_id: str = "call_1") -> Dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}


def anthropic_call(name: str, arguments: Dict[str, Any], call_id: str = "toolu_1") -> Dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def mcp_call(name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    return {"name": name, "arguments": arguments}


FORMATS = [openai_call, anthropic_call, mcp_call]


def test_parse_the_three_formats() -> None:
    o = parse_tool_call(openai_call("memory_read", {"entity": "e"}))
    assert (o.format, o.name, o.id, json.loads(o.arguments)) == \
        ("openai", "memory_read", "call_1", {"entity": "e"})
    # the bare function object of a Chat Completions message (no id)
    bare = parse_tool_call({"type": "function", "function": {"name": "x", "arguments": "{}"}})
    assert (bare.format, bare.id) == ("openai", None)
    a = parse_tool_call(anthropic_call("memory_read", {"entity": "e"}))
    assert (a.format, a.name, a.id, a.arguments) == ("anthropic", "memory_read", "toolu_1",
                                                     {"entity": "e"})
    m = parse_tool_call(mcp_call("memory_read", {"entity": "e"}))
    assert (m.format, m.name, m.id, m.arguments) == ("mcp", "memory_read", None, {"entity": "e"})
    rpc = parse_tool_call({"jsonrpc": "2.0", "id": 0, "method": "tools/call",
                           "params": mcp_call("memory_read", {})})
    assert (rpc.format, rpc.jsonrpc_id) == ("mcp", 0)


@pytest.mark.parametrize("bad", [
    [], "memory_read", {}, {"type": "text", "text": "hi"},
    {"type": "function", "function": {"arguments": "{}"}}, {"name": ""},
    {"type": "tool_use", "id": "t", "name": 7, "input": {}},
])
def test_not_a_tool_call(bad: Any) -> None:
    with pytest.raises(ToolCallError):
        parse_tool_call(bad)


@pytest.mark.parametrize("make", FORMATS, ids=["openai", "anthropic", "mcp"])
def test_memory_tools_in_every_format(alice: Memory, make: Any) -> None:
    tools = Dispatcher(alice)
    alice.begin()
    staged = tools.dispatch(make("memory_stage", {
        "entity": "order:841", "attribute": "refund_eligible", "value": {"eligible": True},
        "confidence": 0.9, "derived_from": [], "readers": None}))
    assert staged.content == {"ok": True, "record_id": staged.content["record_id"]}
    rid = staged.content["record_id"]
    read = tools.dispatch(make("memory_read", {"entity": "order:841"})).content
    assert read["ok"] and [r["id"] for r in read["records"]] == [rid]
    assert read["records"][0]["value"] == {"eligible": True}
    committed = tools.dispatch(make("memory_commit", {})).content
    assert committed == {"ok": True, "results": [
        {"record_id": rid, "state": "committed", "reason": None}]}
    revoked = tools.dispatch(make("memory_revoke", {"record": rid, "note": "wrong"})).content
    assert revoked["ok"] and [(r["record_id"], r["action"], r["note"])
                              for r in revoked["repairs"]] == [(rid, "revoked", "wrong")]


def test_memory_abort(alice: Memory, admin_conn: Any) -> None:
    tools = Dispatcher(alice)
    alice.begin()
    rid = tools.dispatch(mcp_call("memory_stage", {"entity": "e", "attribute": "a",
                                                   "value": None})).content["record_id"]
    aborted = tools.dispatch(mcp_call("memory_abort", {})).content
    assert [(r["record_id"], r["reason"]) for r in aborted["repairs"]] == [(rid, "aborted")]
    assert state_of(admin_conn, rid) == ("revoked", "aborted")


def test_memory_recall(alice: Memory, requires: Any) -> None:
    requires("recall")
    tools = Dispatcher(alice)
    with alice.turn():
        rid = alice.stage("order:9", "note", "customer asked for a refund of the lamp")
    with alice.turn():
        res = tools.dispatch(anthropic_call("memory_recall", {"query": "lamp refund", "k": 3}))
    assert [r["record_id"] for r in res.content["records"]] == [rid]


def test_memory_outcome(alice: Memory, requires: Any) -> None:
    requires("outcome")
    tools = Dispatcher(alice)
    assert tools.dispatch(mcp_call("memory_outcome", {"proposal": "nope"})).content == \
        {"ok": True, "outcome": None}


def test_domain_tool_is_gated_through_act(alice: Memory, admin_conn: Any, unique: str) -> None:
    admin_conn.execute("SELECT memtx.register_tool(%s, false)", (unique,))
    effects: List[Dict[str, Any]] = []

    def refund(args: Dict[str, Any], decision: ActResult) -> Dict[str, Any]:
        effects.append(args)
        return {"refunded": args["amount"], "action": decision.action_id}

    tools = Dispatcher(alice, executors={unique: refund})
    alice.begin()
    rid = alice.stage("order:841", "refund_eligible", True)
    call = openai_call(unique, {"args": {"order": 841, "amount": 20}, "derived_from": [rid],
                                "effect_key": f"{unique}-841"})
    blocked = tools.dispatch(call)
    assert blocked.content == {"ok": True, "allowed": False, "reason": "in_flight_tentative",
                               "action_id": None, "blockers": [rid], "repeated": False}
    assert not blocked.is_error and effects == []
    alice.commit()
    allowed = tools.dispatch(call).content
    action = allowed["action_id"]
    assert allowed == {"ok": True, "allowed": True, "reason": None, "action_id": action,
                       "blockers": [], "repeated": False, "output": {"refunded": 20, "action": action}}
    assert state_of(admin_conn, action)[0] == "committed"
    # a retried call under the same effect key gets the stored decision back, marked repeated
    assert tools.dispatch(call).content == {**allowed, "repeated": True}
    assert effects == [{"order": 841, "amount": 20}]
    # another runner (a restarted process) gets the same decision and action id
    assert Dispatcher(alice).dispatch(call).content["action_id"] == action


def test_domain_tool_without_executor(alice: Memory, admin_conn: Any, unique: str) -> None:
    admin_conn.execute("SELECT memtx.register_tool(%s, false)", (unique,))
    tools = Dispatcher(alice)
    with alice.turn():
        res = tools.dispatch(anthropic_call(unique, {"args": {}})).content
    # nothing tentative is in flight: the irreversible tool is allowed, and nothing runs
    assert res == {"ok": True, "allowed": True, "reason": None,
                   "action_id": res["action_id"], "blockers": [], "repeated": False}


@pytest.mark.parametrize("make", FORMATS, ids=["openai", "anthropic", "mcp"])
def test_a_tool_memtx_does_not_offer_runs_nothing(alice: Memory, admin_conn: Any, make: Any) -> None:
    tools = Dispatcher(alice)
    alice.begin()
    before = admin_conn.execute("SELECT count(*) FROM memtx.action_log").fetchone()
    for name in ("delete_everything", "memory_forget"):
        res = tools.dispatch(make(name, {"args": {}}))
        assert res.content == {"ok": False, "error": {"type": "unknown_tool",
                                                      "message": f"Tool {name} not found"}}
    assert admin_conn.execute("SELECT count(*) FROM memtx.action_log").fetchone() == before
    assert alice.read() == []


def test_an_unknown_tool_in_an_mcp_request_is_a_jsonrpc_error(alice: Memory, admin_conn: Any,
                                                               unique: str) -> None:
    tools = Dispatcher(alice)
    alice.begin()
    request = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": unique, "arguments": {"args": {}}}}
    assert tools.handle(request) == {"jsonrpc": "2.0", "id": 3, "error": {
        "code": -32602, "message": f"Tool {unique} not found"}}
    # registered since the dispatcher read the list: found, and it acts
    admin_conn.execute("SELECT memtx.register_tool(%s, true)", (unique,))
    assert tools.handle(request)["result"]["structuredContent"]["allowed"] is True


@pytest.mark.parametrize("name, arguments, message", [
    ("memory_stage", {"entity": "e", "attribute": "a"}, "'value' is a required property"),
    ("memory_stage", {"entity": "e", "attribute": "a", "value": 1, "tx": 5},
     "Additional properties are not allowed ('tx' was unexpected)"),
    ("memory_read", {"namespace": "other"}, "('namespace' was unexpected)"),
    ("memory_stage", {"entity": 5, "attribute": "a", "value": 1}, "argument entity: 5 is not of type 'string'"),
    ("memory_stage", {"entity": "e", "attribute": "a", "value": 1, "confidence": True},
     "argument confidence: True is not of type 'number'"),
    ("memory_stage", {"entity": "e", "attribute": "a", "value": 1, "confidence": 7},
     "argument confidence: 7 is greater than the maximum of 1"),
    ("memory_stage", {"entity": "e", "attribute": "a", "value": 1, "kind": "rumour"},
     "argument kind: 'rumour' is not one of ['belief', 'summary', 'profile', 'index_entry', 'shared_copy']"),
    ("memory_stage", {"entity": "e", "attribute": "a", "value": 1, "derived_from": ["1"]},
     "argument derived_from/0: '1' is not of type 'integer'"),
    ("memory_recall", {"query": "x", "k": 2.5}, "argument k: 2.5 is not of type 'integer'"),
    ("memory_revoke", {"record": None}, "None is not of type 'integer'"),
    ("issue_refund", {"order": 1}, "'args' is a required property"),
    ("issue_refund", {"args": [1]}, "argument args: [1] is not of type 'object'"),
    ("issue_refund", {"args": {}, "tier": "low"}, "('tier' was unexpected)"),
])
def test_invalid_arguments_are_results(alice: Memory, admin_conn: Any, name: str,
                                       arguments: Dict[str, Any], message: str) -> None:
    admin_conn.execute("SELECT memtx.register_tool('issue_refund', false)")
    tools = Dispatcher(alice)
    alice.begin()
    res = tools.dispatch(anthropic_call(name, arguments))
    assert res.is_error
    assert res.content["error"]["type"] == "invalid_arguments"
    assert message in res.content["error"]["message"]
    assert alice.read() == []


def test_arguments_that_are_not_json(alice: Memory) -> None:
    tools = Dispatcher(alice)
    alice.begin()
    for raw in ("{not json", "[1, 2]"):
        call = {"id": "c", "type": "function", "function": {"name": "memory_read", "arguments": raw}}
        res = tools.dispatch(call)
        assert res.content["ok"] is False and res.content["error"]["type"] == "invalid_arguments"
    # empty arguments mean none
    empty = {"id": "c", "type": "function", "function": {"name": "memory_read", "arguments": ""}}
    assert tools.dispatch(empty).content == {"ok": True, "records": []}


@pytest.mark.parametrize("arguments, sqlstate", [
    ({"entity": "e", "attribute": "a", "value": 1, "observed_at": "2999-01-01T00:00:00Z"}, "22008"),
    ({"entity": "e", "attribute": "a", "value": 1, "valid": "[2020-01-01,2020-01-01)"}, "22023"),
    ({"entity": "e", "attribute": "a", "value": 1, "derived_from": [2 ** 62]}, "42704"),
    ({"entity": "tool:x", "attribute": "a", "value": 1}, "22023"),
])
def test_memtx_errors_are_results_with_sqlstate(alice: Memory, arguments: Dict[str, Any],
                                                sqlstate: str) -> None:
    tools = Dispatcher(alice)
    alice.begin()
    res = tools.dispatch(mcp_call("memory_stage", arguments))
    error = res.content["error"]
    assert res.content["ok"] is False and error["type"] == "memtx"
    assert error["sqlstate"] == sqlstate
    assert error["message"]
    assert res.mcp()["isError"] is True
    assert res.anthropic()["is_error"] is True
    assert alice.read() == []


def test_permission_errors_are_results(alice: Memory, bob: Memory) -> None:
    with alice.turn():
        rid = alice.stage("order:1", "eligible", True, scope="public")
    tools = Dispatcher(bob)
    bob.begin()
    res = tools.dispatch(openai_call("memory_revoke", {"record": rid}))
    assert res.content["error"]["sqlstate"] == "42501"


def test_replies_per_provider(alice: Memory) -> None:
    tools = Dispatcher(alice)
    alice.begin()
    o = tools.handle(openai_call("memory_read", {}, call_id="call_9"))
    assert o == {"role": "tool", "tool_call_id": "call_9", "content": '{"ok": true, "records": []}'}
    a = tools.handle(anthropic_call("memory_read", {}, call_id="toolu_9"))
    assert a == {"type": "tool_result", "tool_use_id": "toolu_9",
                 "content": '{"ok": true, "records": []}', "is_error": False}
    m = tools.handle(mcp_call("memory_read", {}))
    assert m == {"content": [{"type": "text", "text": '{"ok": true, "records": []}'}],
                 "structuredContent": {"ok": True, "records": []}, "isError": False}
    rpc = tools.handle({"jsonrpc": "2.0", "id": 42, "method": "tools/call",
                        "params": mcp_call("memory_read", {})})
    assert rpc == {"jsonrpc": "2.0", "id": 42, "result": m}


def test_mcp_tools_list(alice: Memory, requires: Any) -> None:
    requires("tool_specs")
    listed = Dispatcher(alice).handle({"jsonrpc": "2.0", "id": "l1", "method": "tools/list"})
    assert listed == {"jsonrpc": "2.0", "id": "l1", "result": {"tools": alice.tool_specs("mcp")}}
    assert "memory_stage" in [t["name"] for t in listed["result"]["tools"]]


def test_results_are_json_serialisable(alice: Memory, admin_conn: Any, unique: str) -> None:
    admin_conn.execute("SELECT memtx.register_tool(%s, false)", (unique,))
    tools = Dispatcher(alice)
    alice.begin()
    for call in (mcp_call("memory_stage", {"entity": "e", "attribute": "a", "value": [1, {"b": 2}],
                                           "observed_at": "2025-01-01T00:00:00Z",
                                           "valid": "[2020-01-01,)"}),
                 mcp_call("memory_read", {}), mcp_call(unique, {"args": {}}),
                 mcp_call("memory_commit", {})):
        content = tools.dispatch(call).content
        assert json.loads(json.dumps(content)) == content
    [rec] = tools.dispatch(mcp_call("memory_read", {})).content["records"]
    assert rec["observed_at"].startswith("2025-01-01T00:00:00")
    assert rec["valid"].startswith('["2020-01-01')


def test_dispatch_needs_a_transaction(alice: Memory) -> None:
    with pytest.raises(NoTransaction):
        Dispatcher(Memory(alice.conn, namespace=alice.namespace)).dispatch(
            mcp_call("memory_read", {}))


def test_dispatcher_runs_what_tool_specs_offers(alice: Memory, admin_conn: Any,
                                               unique: str) -> None:
    """Every memory tool memtx.tool_specs describes is one the dispatcher runs, and
    the schemas it checks arguments against are tool_specs' own."""
    admin_conn.execute("SELECT memtx.register_tool(%s, true)", (unique,))
    tools = Dispatcher(alice)
    specs = {t["name"]: t["inputSchema"] for t in alice.tool_specs("mcp")}
    assert {n for n in specs if n.startswith("memory_")} == set(MEMORY_TOOLS)
    for name, schema in specs.items():
        assert tools.schema_of(name) == schema, name
        assert not {"tx", "namespace", "tier", "agent", "isolation"} & set(schema["properties"])
    assert tools.schema_of("no_such_tool") is None


def test_two_agents_two_dispatchers(alice: Memory, bob: Memory) -> None:
    a, b = Dispatcher(alice), Dispatcher(bob)
    with alice.turn():
        shared = a.dispatch(openai_call("memory_stage", {
            "entity": "order:7", "attribute": "eligible", "value": True,
            "scope": "shared", "readers": [AGENTS["bob"]]})).content["record_id"]
        private = a.dispatch(openai_call("memory_stage", {
            "entity": "order:7", "attribute": "note", "value": "private"})).content["record_id"]
    with bob.turn():
        seen = b.dispatch(anthropic_call("memory_read", {"entity": "order:7"})).content
    assert [r["id"] for r in seen["records"]] == [shared]
    assert private not in [r["id"] for r in seen["records"]]
