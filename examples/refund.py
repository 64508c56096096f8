#!/usr/bin/python3
"""The running example, two agents, no model: a refund that memtx gates and repairs.

    PYTHONPATH=clients/python /usr/bin/python3 examples/refund.py [--dbname memtx_example]

Every tool call below is one an LLM would make, in the shape its API gives
it (OpenAI, Anthropic, MCP); the runner hands it to memtx_client's Dispatcher
and prints the call and the reply the model would get.

  1. The harness registers the world: a trusted source, an irreversible
     refund tool, a reversible notification tool, two agent roles.
  2. triage_agent (OpenAI) looks up order 841, stages that it is
     refund-eligible (shared with refund_agent) and commits the belief.
  3. refund_agent (Anthropic) recalls it, stages its decision and a customer
     profile derived from it; the refund is blocked while they are in flight,
     commit admits them, the refund runs once under its effect key (a retry
     gets the same decision back), the customer is notified.
  4. triage_agent (MCP) learns the order had already been refunded and
     revokes the belief: the decision is revoked, the profile quarantined, the
     notification compensated, the refund reported as leaked.

Connects through the PG* environment as a superuser (the harness) and works
in database memtx_example (created when missing; memtx is re-created in it,
so ids start at 1).  The agents are roles triage_agent and refund_agent
(created when missing), each on a connection of its own (SET ROLE).  Exits
non-zero when memtx does not behave as the story says.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Set

try:
    import memtx_client  # noqa: F401  (installed: pip install clients/python)
except ImportError:      # else the checkout's copy
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))

import psycopg  # noqa: E402
from psycopg import sql  # noqa: E402

from memtx_client import ActResult, Dispatcher, Memory  # noqa: E402

NAMESPACE = "shop"
AGENTS = ("triage_agent", "refund_agent")


def connect(dbname: str, role: str | None = None) -> "psycopg.Connection[Any]":
    conn = psycopg.connect(dbname=dbname, autocommit=True)
    if role:
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
    return conn


def setup(dbname: str) -> None:
    """The harness's part: a fresh memtx, the registries, the agents and their namespace."""
    with psycopg.connect(autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_catalog.pg_database WHERE datname = %s",
                             (dbname,)).fetchone():
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
        for role in AGENTS:
            if not admin.execute("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = %s",
                                 (role,)).fetchone():
                admin.execute(sql.SQL("CREATE ROLE {}").format(sql.Identifier(role)))
    with connect(dbname) as harness:
        harness.execute("SET client_min_messages = warning")
        harness.execute("DROP EXTENSION IF EXISTS memtx CASCADE")
        harness.execute("CREATE EXTENSION memtx CASCADE")
        harness.execute("SELECT memtx.register_source('order_lookup', 0.8)")
        harness.execute("SELECT memtx.register_tool('issue_refund', reversible => false)")
        harness.execute("SELECT memtx.register_tool('notify_customer', reversible => true,"
                        " compensator => 'send_correction')")
        harness.execute("SELECT memtx.set_role_tier('refund_agent', 'high')")
        for role in AGENTS:
            harness.execute("SELECT memtx.grant_namespace(%s, %s)", (NAMESPACE, role))


def say(text: str) -> None:
    print(f"\n== {text}")


def step(text: str) -> None:
    print(f"-- {text}")


class Agent:
    """An agent's runner: its role's connection, its Memory, its Dispatcher."""

    def __init__(self, dbname: str, role: str, fmt: str) -> None:
        self.role = role
        self.format = fmt
        self.memory = Memory(connect(dbname, role), namespace=NAMESPACE)
        self.refunds: List[int] = []
        self.tools = Dispatcher(self.memory, executors={
            "issue_refund": self.issue_refund, "notify_customer": self.notify_customer})

    def issue_refund(self, args: Dict[str, Any], decision: ActResult) -> Dict[str, Any]:
        # the payment system would get decision.action_id as its idempotency key
        self.refunds.append(args["order"])
        return {"refund": f"rf-{decision.action_id}", "amount": args["amount"]}

    def notify_customer(self, args: Dict[str, Any], decision: ActResult) -> Dict[str, Any]:
        return {"sent": f"msg-{decision.action_id}"}

    def call(self, name: str, arguments: Dict[str, Any], **expect: Any) -> Dict[str, Any]:
        """Make the tool call the model would make, in this agent's provider format;
        print it and the reply; check the result has the expected values."""
        call_id = f"call_{name}"
        if self.format == "openai":
            call: Dict[str, Any] = {"id": call_id, "type": "function", "function": {
                "name": name, "arguments": json.dumps(arguments)}}
        elif self.format == "anthropic":
            call = {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
        else:
            call = {"name": name, "arguments": arguments}
        result = self.tools.dispatch(call)
        print(f"{self.role} -> {name} {json.dumps(arguments)}")
        print(f"   <- {result.text()}")
        for key, want in expect.items():
            if result.content.get(key) != want:
                sys.exit(f"unexpected {key}: {result.content.get(key)!r}, expected {want!r}")
        return result.content


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dbname", default="memtx_example")
    opts = ap.parse_args()
    setup(opts.dbname)
    triage = Agent(opts.dbname, "triage_agent", "openai")
    refund = Agent(opts.dbname, "refund_agent", "anthropic")

    say("1. triage_agent (OpenAI tool calls) looks up order 841 and commits what it learned")
    with triage.memory.turn():
        belief = triage.call("memory_stage", {
            "entity": "order:841", "attribute": "refund_eligible",
            "value": {"eligible": True, "reason": "lamp arrived broken"},
            "source": "order_lookup", "confidence": 0.9,
            "scope": "shared", "readers": ["refund_agent"]}, ok=True)["record_id"]
        triage.call("memory_commit", {}, ok=True)

    say("2. refund_agent (Anthropic tool_use blocks) recalls it and plans the refund")
    with refund.memory.turn():
        hits = refund.call("memory_recall", {"query": "refund for order 841"})["records"]
        if [h["record_id"] for h in hits] != [belief]:
            sys.exit("recall did not find the triage belief")
        decision = refund.call("memory_stage", {
            "entity": "refund:841", "attribute": "decision", "value": {"approve": True, "amount": 20},
            "derived_from": [belief]})["record_id"]
        profile = refund.call("memory_stage", {
            "entity": "customer:7", "attribute": "profile", "value": {"refund_pending": "order:841"},
            "kind": "profile", "derived_from": [belief]})["record_id"]
        refund_call = {"args": {"order": 841, "amount": 20}, "derived_from": [decision],
                       "effect_key": "refund-order-841"}

        step("the refund is blocked while its support is tentative")
        refund.call("issue_refund", refund_call, ok=True, allowed=False,
                    reason="in_flight_tentative", blockers=[decision, profile])

        step("commit admits the decision and the profile")
        refund.call("memory_commit", {}, ok=True)

        step("now the refund runs, once: a retry under the same effect key gets the same decision")
        first = refund.call("issue_refund", refund_call, ok=True, allowed=True)
        refund.call("issue_refund", refund_call, ok=True, allowed=True,
                    action_id=first["action_id"], output=first["output"])
        if refund.refunds != [841]:
            sys.exit(f"the refund ran {len(refund.refunds)} times")
        refund.call("notify_customer", {"args": {"customer": 7, "text": "refund issued"},
                                        "derived_from": [decision]}, ok=True, allowed=True)

    say("3. triage_agent, now behind an MCP server (tools/call), learns order 841 had already been refunded")
    triage.format = "mcp"
    with triage.memory.turn():
        repairs = triage.call("memory_revoke", {
            "record": belief, "note": "order 841 had already been refunded"}, ok=True)["repairs"]
    print("   the cascade, by kind:")
    for r in repairs:
        print(f"   record {r['record_id']:>2} {r['kind']:<12} {r['action']:<12} {r['reason']}")
    actions: Dict[str, Set[str]] = {}
    for r in repairs:
        actions.setdefault(r["kind"], set()).add(r["action"])
    if actions != {"belief": {"revoked"}, "profile": {"quarantined"},
                   "tool_action": {"leaked", "compensated"}}:
        sys.exit(f"unexpected cascade: {actions}")

    say("4. what the store says afterwards")
    print("   order 841, active records:", [r.id for r in refund.memory.lookup("order:841")])
    with connect(opts.dbname) as harness:
        for tool, compensator, status in harness.execute(
                "SELECT tool, compensator, status FROM memtx.compensations ORDER BY id"):
            print(f"   compensation owed: {tool} -> {compensator} ({status})")
        broken = harness.execute("SELECT count(*) FROM memtx.check_invariants()").fetchone()
        print("   invariants violated:", broken[0] if broken else "?")
        if not broken or broken[0] != 0:
            sys.exit("the invariants do not hold")


if __name__ == "__main__":
    main()
