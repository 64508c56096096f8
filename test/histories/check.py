#!/usr/bin/python3
"""Checks a concurrent history of memtx operations against the final store.

    check.py HISTORY.jsonl [--dsn CONNINFO]     (PG* environment, superuser)
    check.py --self-test

HISTORY is what run_history.py wrote: one operation per line with its
invocation and completion times on one monotonic clock and its outcome:
"ok" (acknowledged, with the server's result), "fail" (an error that rolled
it back: it did not happen) or "maybe" (the connection was lost while it
ran: it may have happened, at any time after its invocation).  The final
store is read from the history's namespace: records, history, commit
receipts, the action log, the rollback log, memtx.check_invariants() and
memtx.verify_receipts().  Each property below prints its violations with
the operations involved; the run ends with "N passed, N failed" (one count
per property).

Time.  An operation took effect at one instant inside [invoke_t, complete_t]
(complete_t unbounded for "maybe").  A record's settling interval S(r) is
that of the operation that committed or quarantined it; for a proposal it
runs from the first invocation of any operation under its proposal id (a
retry can race the original) to the first acknowledgement that returned the
record.  "a before b in real time" means S(a) ended before S(b) began.

Properties:

  realtime_order   per slot, the store's order of settlings and revocations
                   (the settled_pos of each commit receipt and the position of
                   each revocation in memtx.history, one global clock)
                   respects real time: a comes first whenever a's operation
                   completed before b's was invoked.  With the next property this is the
                   serial order the acknowledged commits admit.
  slot_replay      replaying each slot's commits and revocations in that
                   order: every commit supersedes exactly the active records
                   of another value (its receipt lists them); a commit with
                   an expected head found exactly that head (0: none); a
                   stale_head verdict is given only when the head set at that
                   point was not the expected one (SPEC §10); the active
                   records at the end are the replay's.
  no_lost_commit   every acknowledged commit exists with verdict committed
                   and a state consistent with what came later (committed,
                   or superseded by a listed commit, or revoked by a cascade
                   whose root an operation of the history revoked); every
                   acknowledged quarantine, revoke and abort is in the store;
                   the store holds no record that no operation could have
                   made.
  proposal_stable  every proposal id has one disposition: every
                   acknowledged call returned the same record and
                   transaction, the store binds the id to it, the states
                   returned start at its verdict and only move forward in
                   real time (committed -> superseded -> revoked); a retry
                   with the same content is never refused, and no call whose
                   content differs from the bound record's (the driver
                   changes the value on purpose) is acknowledged (§10:
                   23505); an id whose calls all failed is not bound.
                   Likewise a commit repeated after a lost reply returns the
                   stored outcome: the same records, each in its verdict or
                   a later state.
  effect_once      per effect key at most one allowed action in the log; an
                   acknowledged allowed call returned that action, and made
                   or repeats exactly the call the log holds for it (tool,
                   agent, canonical args: §16; the driver varies each on
                   purpose); a true repeat is never refused; no call was
                   blocked after the key's allowed call had completed.
  gate_sound       a reversible tool is always allowed; an allowed
                   irreversible decision had no tentative record throughout
                   its interval; every blocker of an in_flight_tentative
                   decision could have been in flight then; a gate or act
                   with the caller's own staging in flight is blocked
                   (in_flight_tentative) with that staging among its
                   blockers (§5 (1)).
  read_fresh       memtx.lookup returns a record only when its commit began
                   before the read ended and nothing known to have ended it
                   had completed before the read began; and it returns every
                   record committed before the read began that nothing could
                   have ended before the read ended.
  read_snapshot    every memtx.read of a snapshot reader (a memtx transaction
                   at committed_read in the snapshot namespace, where
                   records are only ever committed, each on a slot of its
                   own) returned exactly the snapshot of §3: no record whose
                   SQL COMMIT was invoked after the reader's begin had
                   completed (so it was not committed before the
                   transaction began, whatever sequence number it drew),
                   every record whose writer was acknowledged before the
                   begin was invoked, and every read of one transaction the
                   same set.
  invariants       memtx.check_invariants() returns no rows.
  receipts         memtx.verify_receipts() finds every chain intact.

What a history cannot decide, and is therefore not checked: the order of
operations whose intervals overlap (the store's order is then taken as the
witness, and only its agreement with the slot rules is checked); whether a
"maybe" operation happened (any record it may have made is allowed, any
effect it may have had may explain a later state); whether an allowed gate
whose interval only partly overlaps a record's tentative life ran before
the staging became visible or after it settled (only a gate that ran
entirely inside a record's certain tentative life, from its staging's
acknowledgement to the invocation of its commit or abort, must have been
blocked); blockers staged by an unacknowledged operation (they need only
exist in the namespace and come from no operation that never leaves a
record in flight); a decision an effect-key repeat returned (it was taken
by the first call, which is checked).
"""

import argparse
import heapq
import json
import sys

INF = float("inf")
ACTIVE = ("committed", "action_safe")
# states an outcome may reach after its verdict, ranked by how far along
RANK = {"committed": 0, "action_safe": 0, "quarantined": 0, "superseded": 1, "revoked": 2}
PROPERTIES = ("realtime_order", "slot_replay", "no_lost_commit", "proposal_stable",
              "effect_once", "gate_sound", "read_fresh", "read_snapshot", "invariants",
              "receipts")


# ---------------------------------------------------------------- the store

def load_store(conn, ns, snapshot_ns=None):
    """The final store of namespace ns (and the snapshot namespace) as plain
    lists of dicts."""
    def rows(sql, *args):
        cur = conn.execute(sql, args)
        names = [d.name for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    return {
        "records": rows(
            "SELECT id, tx_id, entity, attribute, value::text AS value, kind::text AS kind,"
            " state::text AS state, verdict::text AS verdict, verdict_reason, proposal,"
            " expected_head FROM memtx.records WHERE namespace = %s", ns),
        "history": rows(
            "SELECT record_id, state::text AS state, reason, pos FROM memtx.history"
            " WHERE namespace = %s", ns),
        "receipts": rows(
            "SELECT subject AS record, disposition, reason,"
            " (body->>'settled_pos')::bigint AS pos,"
            " ARRAY(SELECT jsonb_array_elements_text(body->'superseded')::bigint) AS superseded"
            " FROM memtx.receipts WHERE namespace = %s AND kind = 'commit'", ns),
        "action_log": rows(
            "SELECT a.tx_id, a.tool, a.reversible, a.allowed, a.reason, a.blockers, a.action_id,"
            " a.effect_key, a.args, x.agent"
            " FROM memtx.action_log a JOIN memtx.transactions x ON x.id = a.tx_id"
            " WHERE a.namespace = %s", ns),
        "snapshot_records": rows(
            "SELECT id, tx_id, state::text AS state FROM memtx.records WHERE namespace = %s",
            snapshot_ns),
        "rollback_log": rows(
            "SELECT root_id, record_id, action, reason FROM memtx.rollback_log"
            " WHERE namespace = %s", ns),
        "transactions": rows(
            "SELECT id, status::text AS status FROM memtx.transactions WHERE namespace = %s", ns),
        "invariants": rows("SELECT invariant, record_id, detail FROM memtx.check_invariants()"),
        "verify": rows("SELECT namespace, checked, first_bad_seq, detail"
                       " FROM memtx.verify_receipts(%s)", ns)
        + rows("SELECT namespace, checked, first_bad_seq, detail"
               " FROM memtx.verify_receipts(%s)", snapshot_ns),
    }


# ---------------------------------------------------------------- the checker

def follows(verdict, state):
    """Whether a state may be reported for a record settled with verdict:
    the verdict itself or a later state (superseded after a commit, revoked)."""
    return state == verdict or (RANK.get(state, 0) > RANK.get(verdict, 0) and
                                (verdict in ACTIVE or state == "revoked"))


def covering(queries, items):
    """Yields (operation, [payload]) for each operation of queries and the
    items (begin, end, payload) with begin < invoke_t and complete_t < end:
    a sweep in invocation order that drops an item once it ended before an
    invocation, so it costs what is alive at each moment, not a product."""
    items = sorted(items, key=lambda i: i[0])
    alive, k = [], 0
    for o in sorted(queries, key=lambda o: o["invoke_t"]):
        while k < len(items) and items[k][0] < o["invoke_t"]:
            heapq.heappush(alive, (items[k][1], k, items[k][2]))
            k += 1
        while alive and alive[0][0] <= o["invoke_t"]:
            heapq.heappop(alive)
        yield o, [p for end, _, p in alive if o["complete_t"] < end]


class Checker:
    AGENTS = ("memtx_hist_a", "memtx_hist_b")

    def __init__(self, ops, store):
        self.ops = [o for o in ops if o["op"] not in ("start", "terminate")]
        for i, o in enumerate(self.ops):
            o.setdefault("id", i)
            if o["outcome"] == "maybe" or o["complete_t"] is None:
                o["complete_t"] = INF
        self.store = store
        self.violations = {p: [] for p in PROPERTIES}
        self.checked = {p: 0 for p in PROPERTIES}
        self.rec = {r["id"]: r for r in store["records"]}
        self.receipt = {r["record"]: r for r in store["receipts"]}
        self.superseded_by = {}
        for r in store["receipts"]:
            for x in r["superseded"]:
                self.superseded_by[x] = r["record"]
        self.roots = {}  # record -> roots of the cascades that repaired it
        for row in store["rollback_log"]:
            self.roots.setdefault(row["record_id"], set()).add(row["root_id"])
        self.log_of_tx = {row["tx_id"]: row for row in store["action_log"]}
        self.revokes = {}  # record -> revoke operations on it that did not fail
        for o in self.ops:
            if o["op"] == "revoke" and o["outcome"] != "fail":
                self.revokes.setdefault(o["args"]["record"], []).append(o)
        self.ended = {}
        self.index_history()

    def count(self, prop, n=1):
        self.checked[prop] += n

    def fail(self, prop, text, *ops):
        self.violations[prop].append((text, ops))

    @staticmethod
    def acked(o):
        return o["outcome"] == "ok"

    @staticmethod
    def slot_of(r):
        return (r["entity"], r["attribute"])

    # -- what the history says about each record
    def index_history(self):
        """settle[r] = (start, end, [ops]); staged_by[r] = op; verdicts acked."""
        self.settle = {}
        self.staged_by = {}
        self.acked_verdict = {}  # record -> (state, op) reported by its settling op
        self.finish_of = {}  # tx -> first commit/abort op
        self.open_of = {}  # tx -> open op
        by_proposal = {}
        for o in self.ops:
            kind, res = o["op"], o["result"]
            if kind == "propose":
                pid = o["args"]["proposal"]
                if pid is not None:
                    by_proposal.setdefault(pid, []).append(o)
                elif self.acked(o):
                    self.note_settle(res["record"], o["invoke_t"], o["complete_t"], o)
                    self.staged_by[res["record"]] = o
                    self.acked_verdict[res["record"]] = (res["state"], o)
            elif kind == "own" and self.acked(o):
                for rec in res["own"]:
                    self.staged_by[rec] = o
                    self.note_settle(rec, o["invoke_t"], o["complete_t"], o)
            elif kind in ("txn", "open") and self.acked(o):
                for rec in res["records"]:
                    self.staged_by[rec] = o
                if kind == "open":
                    self.open_of[res["tx"]] = o
                for rec, state, _ in res.get("verdicts", []):
                    self.note_settle(rec, o["invoke_t"], o["complete_t"], o)
                    self.acked_verdict[rec] = (state, o)
            elif kind in ("commit", "abort"):
                tx = o["args"]["tx"]
                if tx not in self.finish_of or o["invoke_t"] < self.finish_of[tx]["invoke_t"]:
                    self.finish_of[tx] = o
        for o in self.ops:
            if o["op"] == "commit" and self.acked(o):
                for rec, state, _ in o["result"]["verdicts"]:
                    self.note_settle(rec, o["invoke_t"], o["complete_t"], o)
                    self.acked_verdict[rec] = (state, o)
        self.by_proposal = by_proposal
        for pid, ops in by_proposal.items():
            start = min(o["invoke_t"] for o in ops)
            acks = [o for o in ops if self.acked(o)]
            if not acks:
                continue
            first = min(acks, key=lambda o: o["complete_t"])
            rec = first["result"]["record"]
            self.note_settle(rec, start, first["complete_t"], *ops)
            self.staged_by[rec] = first
            self.acked_verdict[rec] = (self.first_state(rec, acks), first)

    def first_state(self, rec, acks):
        """The verdict a proposal's acknowledgements imply: the earliest-ranked state."""
        return min((o["result"]["state"] for o in acks if o["result"]["record"] == rec),
                   key=lambda s: RANK.get(s, 0))

    def note_settle(self, rec, start, end, *ops):
        old = self.settle.get(rec)
        if old:
            start, end = min(start, old[0]), min(end, old[1])
            ops = tuple(old[2]) + ops
        self.settle[rec] = (start, end, list(ops))

    def slot_records(self):
        slots = {}
        for r in self.store["records"]:
            if r["kind"] != "tool_action":
                slots.setdefault(self.slot_of(r), []).append(r)
        return slots

    def revoke_ops(self, root):
        return list(self.revokes.get(root, []))

    # -- properties
    def check_realtime_order(self):
        revoked_at = {h["record_id"]: h["pos"] for h in self.store["history"]
                      if h["state"] == "revoked"}
        revoked_by = {}  # record -> the acknowledged revoke that revoked it
        for o in self.ops:
            if o["op"] == "revoke" and self.acked(o):
                for _, rid, _, _ in o["result"]["repaired"]:
                    revoked_by[rid] = o
        for slot, recs in sorted(self.slot_records().items()):
            # (position, what, start, end, ops): settlings and revocations
            events = []
            for r in recs:
                rid = r["id"]
                if rid in self.receipt and rid in self.settle:
                    start, end, ops = self.settle[rid]
                    events.append((self.receipt[rid]["pos"], "settling of %d" % rid,
                                   start, end, ops))
                if rid in revoked_by and rid in revoked_at:
                    o = revoked_by[rid]
                    events.append((revoked_at[rid], "revocation of %d" % rid,
                                   o["invoke_t"], o["complete_t"], [o]))
            latest = None  # the event with the greatest start so far
            for event in sorted(events, key=lambda e: e[0]):
                self.count("realtime_order")
                if latest and event[3] < latest[2]:
                    self.fail("realtime_order",
                              "slot %s: the %s comes before the %s in the store, but the latter's "
                              "operation completed before the former's was invoked"
                              % ("/".join(slot), latest[1], event[1]), *(event[4] + latest[4]))
                if latest is None or event[2] > latest[2]:
                    latest = event

    def check_slot_replay(self):
        revoked_at = {h["record_id"]: h["pos"] for h in self.store["history"]
                      if h["state"] == "revoked"}
        for slot, recs in sorted(self.slot_records().items()):
            events = []
            for r in recs:
                rc = self.receipt.get(r["id"])
                if rc:
                    events.append((rc["pos"], 1, r["id"]))
                if r["id"] in revoked_at:
                    events.append((revoked_at[r["id"]], 0, r["id"]))
            active = set()
            for pos, is_commit, rid in sorted(events):
                if not is_commit:
                    active.discard(rid)
                    continue
                r, rc = self.rec[rid], self.receipt[rid]
                self.count("slot_replay")
                ops = self.settle.get(rid, (0, 0, []))[2]
                head = r["expected_head"]
                want = set() if head == 0 else {head}
                if rc["disposition"] in ACTIVE:
                    if head is not None and active != want:
                        self.fail("slot_replay", "slot %s: record %d committed expecting head %s, "
                                  "but the heads were %s" % ("/".join(slot), rid, head,
                                                             sorted(active)), *ops)
                    gone = {x for x in active if self.rec[x]["value"] != r["value"]}
                    if gone != set(rc["superseded"]):
                        self.fail("slot_replay", "slot %s: record %d superseded %s, the replay "
                                  "expects %s" % ("/".join(slot), rid, sorted(rc["superseded"]),
                                                  sorted(gone)), *ops)
                    active = (active - gone) | {rid}
                elif rc["reason"] == "stale_head" and active == want:
                    self.fail("slot_replay", "slot %s: record %d got stale_head, but its expected "
                              "head %s was the head" % ("/".join(slot), rid, head), *ops)
            final = {r["id"] for r in recs if r["state"] in ACTIVE}
            if final != active:
                self.fail("slot_replay", "slot %s: active at the end %s, the replay gives %s"
                          % ("/".join(slot), sorted(final), sorted(active)))

    def explained_end(self, rid):
        """Why an acknowledged commit is no longer active, or None if unexplained."""
        r = self.rec[rid]
        if r["state"] in ACTIVE:
            return "active"
        if r["state"] == "superseded":
            return "superseded" if rid in self.superseded_by else None
        if r["state"] == "revoked":
            roots = self.roots.get(rid, ())
            return "revoked" if any(self.revoke_ops(root) for root in roots) else None
        return None

    def check_no_lost_commit(self):
        for rid, (state, op) in sorted(self.acked_verdict.items()):
            self.count("no_lost_commit")
            r = self.rec.get(rid)
            if r is None:
                self.fail("no_lost_commit", "acknowledged record %d (%s) is missing" % (rid, state), op)
                continue
            verdict = "committed" if state in ("superseded", "revoked") and r["verdict"] == "committed" else state
            if r["verdict"] != verdict and not (state == "revoked" and r["verdict"] is not None):
                self.fail("no_lost_commit", "record %d acknowledged %s, stored verdict %s"
                          % (rid, state, r["verdict"]), op)
            elif r["verdict"] in ACTIVE and self.explained_end(rid) is None:
                self.fail("no_lost_commit", "acknowledged commit %d is %s with nothing in the "
                          "history to explain it" % (rid, r["state"]), op)
            elif r["verdict"] == "quarantined" and r["state"] not in ("quarantined", "revoked"):
                self.fail("no_lost_commit", "quarantined record %d is %s" % (rid, r["state"]), op)
        for rid, op in sorted(self.staged_by.items()):
            if rid not in self.rec:
                self.fail("no_lost_commit", "acknowledged staging of record %d is missing" % rid, op)
        txs = {t["id"]: t["status"] for t in self.store["transactions"]}
        for o in self.ops:
            if not self.acked(o):
                continue
            if o["op"] == "revoke":
                r = self.rec.get(o["args"]["record"])
                if r is None or r["state"] != "revoked":
                    self.fail("no_lost_commit", "acknowledged revoke of %d, record is %s"
                              % (o["args"]["record"], r and r["state"]), o)
            elif o["op"] == "abort":
                if txs.get(o["args"]["tx"]) != "aborted":
                    self.fail("no_lost_commit", "acknowledged abort of transaction %d, status %s"
                              % (o["args"]["tx"], txs.get(o["args"]["tx"])), o)
                op = self.open_of.get(o["args"]["tx"])
                for rid in (op["result"]["records"] if op else []):
                    if self.rec.get(rid, {}).get("state") != "revoked":
                        self.fail("no_lost_commit", "record %d of aborted transaction %d is not "
                                  "revoked" % (rid, o["args"]["tx"]), o, op)
        # records no operation could have made
        known_tx = {o["result"]["tx"] for o in self.ops if self.acked(o) and
                    o["op"] in ("propose", "txn", "open", "act", "gate", "own")}
        known_pid = {p for p, ops in self.by_proposal.items()
                     if any(o["outcome"] != "fail" for o in ops)}
        may = sum(len(o["args"].get("stages", [None] * o["args"].get("staged", 1)))
                  for o in self.ops
                  if o["outcome"] == "maybe" and o["op"] in ("propose", "txn", "open", "own"))
        stray = [r["id"] for r in self.store["records"] if r["kind"] != "tool_action"
                 and r["tx_id"] not in known_tx and r["proposal"] not in known_pid]
        if len(stray) > may:
            self.fail("no_lost_commit", "%d records no operation made (at most %d from "
                      "unacknowledged operations): %s" % (len(stray), may, stray[:10]))
        for r in self.store["records"]:
            if r["proposal"] is not None and r["proposal"] not in known_pid:
                self.fail("no_lost_commit", "record %d bound to proposal %s, which no operation "
                          "that did not fail used" % (r["id"], r["proposal"]))

    def check_proposal_stable(self):
        bound = {r["proposal"]: r for r in self.store["records"] if r["proposal"] is not None}
        def same_content(a, r):
            return (r is not None and tuple(a["slot"]) == (r["entity"], r["attribute"])
                    and json.loads(a["value"]) == json.loads(r["value"])
                    and a["expected_head"] == r["expected_head"])

        for pid, ops in sorted(self.by_proposal.items()):
            for o in ops:
                if o["outcome"] == "fail" and o["sqlstate"] == "23505" and \
                        same_content(o["args"], bound.get(pid)):
                    self.fail("proposal_stable", "proposal %s: a retry with the same content was "
                              "refused (23505)" % pid, o)
            acks = [o for o in ops if self.acked(o)]
            self.count("proposal_stable", len(ops))
            if not acks:
                if pid in bound and all(o["outcome"] == "fail" for o in ops):
                    self.fail("proposal_stable", "proposal %s is bound to record %d but every "
                              "call failed" % (pid, bound[pid]["id"]), *ops)
                continue
            ids = {(o["result"]["record"], o["result"]["tx"]) for o in acks}
            if len(ids) != 1:
                self.fail("proposal_stable", "proposal %s returned several records/transactions "
                          "%s" % (pid, sorted(ids)), *acks)
                continue
            rid = acks[0]["result"]["record"]
            r = bound.get(pid)
            if r is None or r["id"] != rid:
                self.fail("proposal_stable", "proposal %s returned record %d, the store binds %s"
                          % (pid, rid, r and r["id"]), *acks)
                continue
            for o in ops:
                a = o["args"]
                self.count("proposal_stable")
                if self.acked(o) and not same_content(a, r):
                    self.fail("proposal_stable", "proposal %s: a call with other content "
                              "(value %s, bound %s) was accepted" % (pid, a["value"], r["value"]), o)
            verdict = r["verdict"]
            for o in acks:
                s = o["result"]["state"]
                if not follows(verdict, s):
                    self.fail("proposal_stable", "proposal %s: verdict %s, a call returned %s"
                              % (pid, verdict, s), o)
            for a in acks:
                for b in acks:
                    if a["complete_t"] < b["invoke_t"] and \
                            RANK[b["result"]["state"]] < RANK[a["result"]["state"]]:
                        self.fail("proposal_stable", "proposal %s went back from %s to %s"
                                  % (pid, a["result"]["state"], b["result"]["state"]), a, b)

        # a repeated commit returns the stored outcome
        commits = {}
        for o in self.ops:
            if o["op"] == "commit" and self.acked(o):
                commits.setdefault(o["args"]["tx"], []).append(o)
        for tx, ops in sorted(commits.items()):
            self.count("proposal_stable", len(ops) - 1)
            ids = {tuple(sorted(v[0] for v in o["result"]["verdicts"])) for o in ops}
            if len(ids) != 1:
                self.fail("proposal_stable", "commits of transaction %d returned different "
                          "records %s" % (tx, sorted(ids)), *ops)
            for o in ops[1:]:
                for rid, state, _ in o["result"]["verdicts"]:
                    r = self.rec.get(rid)
                    if r is None or not follows(r["verdict"], state):
                        self.fail("proposal_stable", "a repeated commit of transaction %d "
                                  "returned %s for record %d, verdict %s"
                                  % (tx, state, rid, r and r["verdict"]), o)

    def decided_here(self, o):
        """The action log row an act operation wrote, or None (a key repeat)."""
        return self.log_of_tx.get(o["result"]["tx"])

    def check_effect_once(self):
        allowed = {}
        for row in self.store["action_log"]:
            if row["allowed"] and row["effect_key"] is not None:
                allowed.setdefault(row["effect_key"], []).append(row)
        for key, rows in sorted(allowed.items()):
            if len(rows) > 1:
                self.fail("effect_once", "effect key %s was allowed %d times (actions %s)"
                          % (key, len(rows), [r["action_id"] for r in rows]))
        acts = [o for o in self.ops if o["op"] == "act" and o["args"]["effect_key"]]
        act_of_tx = {o["result"]["tx"]: o for o in acts if self.acked(o)}
        harness = {r["agent"] for r in self.store["action_log"]} - set(self.AGENTS)

        def same_call(o, row):
            a = o["args"]
            agent_ok = (row["agent"] == a["agent"] if a.get("agent")
                        else row["agent"] in harness)
            return a["tool"] == row["tool"] and agent_ok and a["args"] == row["args"]

        for o in acts:
            key = o["args"]["effect_key"]
            if o["outcome"] == "fail" and o["sqlstate"] == "23505":
                for r in allowed.get(key, []):
                    first = act_of_tx.get(r["tx_id"])
                    self.count("effect_once")
                    if same_call(o, r) and first and first["complete_t"] < o["invoke_t"]:
                        self.fail("effect_once", "a true repeat under key %s (the same tool, "
                                  "agent and args) was refused" % key, first, o)
            if not self.acked(o):
                continue
            res = o["result"]
            self.count("effect_once")
            rows = allowed.get(key, [])
            if res["allowed"] and res["action_id"] not in [r["action_id"] for r in rows]:
                self.fail("effect_once", "act under key %s was allowed as action %s, which the "
                          "log does not hold" % (key, res["action_id"]), o)
            for r in rows:
                if res["allowed"] and res["action_id"] == r["action_id"] and not same_call(o, r):
                    self.fail("effect_once", "act under key %s (tool %s, agent %s, args %s) "
                              "answered with the decision of another call (tool %s, agent %s, "
                              "args %s)" % (key, o["args"]["tool"], o["args"].get("agent"),
                                            o["args"]["args"], r["tool"], r["agent"], r["args"]),
                              o)
            if not res["allowed"]:
                for r in rows:
                    first = act_of_tx.get(r["tx_id"])
                    if first and first["complete_t"] < o["invoke_t"]:
                        self.fail("effect_once", "act under key %s was blocked after the key's "
                                  "allowed call had completed" % key, first, o)

    def tentative_life(self, rid):
        """(certain start, certain end, possible start, possible end) of a record in flight:
        from its staging to its transaction's commit or abort or its own revocation."""
        op = self.staged_by.get(rid)
        if op is None or op["op"] != "open":
            return None
        ends = self.revoke_ops(rid)
        fin = self.finish_of.get(op["result"]["tx"])
        if fin:
            ends.append(fin)
        return (op["complete_t"], min([o["invoke_t"] for o in ends], default=INF),
                op["invoke_t"], min([o["complete_t"] for o in ends], default=INF))

    def check_gate_sound(self):
        lives = {}
        for rid, op in self.staged_by.items():
            life = self.tentative_life(rid)
            if life:
                lives[rid] = life
        allowed = []
        for o in self.ops:
            if o["op"] not in ("gate", "act") or not self.acked(o):
                continue
            res = o["result"]
            if o["op"] == "act" and self.decided_here(o) is None:
                continue
            if o["args"]["tool"] == "hist_hold":
                if not res["allowed"]:
                    self.fail("gate_sound", "a reversible tool was blocked (%s)" % res["reason"], o)
                continue
            self.count("gate_sound")
            if res["allowed"]:
                allowed.append(o)
            elif res["reason"] == "in_flight_tentative":
                for rid in res["blockers"]:
                    life = lives.get(rid)
                    if life and not (life[2] < o["complete_t"] and o["invoke_t"] < life[3]):
                        self.fail("gate_sound", "blocker %d was not in flight during the call"
                                  % rid, o, self.staged_by[rid])
                    elif life is None and (rid not in self.rec or rid in self.staged_by):
                        self.fail("gate_sound", "blocker %d was never in flight (made by %s)"
                                  % (rid, self.staged_by.get(rid, {}).get("op", "nothing")),
                                  o, *([self.staged_by[rid]] if rid in self.staged_by else []))
        for o in self.ops:
            if o["op"] != "own" or not self.acked(o):
                continue
            self.count("gate_sound")
            res = o["result"]
            if res["allowed"] or res["reason"] != "in_flight_tentative":
                self.fail("gate_sound", "%s of an irreversible tool with the caller's own staging "
                          "%s in flight was not blocked by it (%s, %s)"
                          % (o["args"]["call"], res["own"], res["allowed"], res["reason"]), o)
            elif not set(res["own"]) <= set(res["blockers"] or []):
                self.fail("gate_sound", "%s blocked with blockers %s, without the caller's own "
                          "staging %s" % (o["args"]["call"], res["blockers"], res["own"]), o)
        for o, rids in covering(allowed, [(s, e, rid) for rid, (s, e, _, _) in lives.items()]):
            for rid in sorted(rids):
                self.fail("gate_sound", "%s allowed while record %d was in flight for the whole "
                          "call" % (o["op"], rid), o, self.staged_by[rid])

    def ended_at(self, rid):
        """(earliest start, earliest completion) of an operation that ended record rid."""
        if rid not in self.ended:
            self.ended[rid] = self.compute_ended_at(rid)
        return self.ended[rid]

    def compute_ended_at(self, rid):
        r = self.rec[rid]
        if r["state"] in ACTIVE:
            return (INF, INF)
        starts, ends = [], []
        y = self.superseded_by.get(rid)
        if y is not None:
            s = self.settle.get(y)
            starts.append(s[0] if s else -INF)
            ends.append(s[1] if s else INF)
        for root in self.roots.get(rid, ()):
            for o in self.revoke_ops(root):
                starts.append(o["invoke_t"])
                ends.append(o["complete_t"])
        if not starts:
            return (-INF, INF)
        return (min(starts), min(ends))

    def check_read_fresh(self):
        reads = [o for o in self.ops if o["op"] == "read" and self.acked(o)]
        for o in reads:
            got = {rid for rid, _ in o["result"]}
            self.count("read_fresh", len(got))
            for rid in sorted(got):
                r = self.rec.get(rid)
                s = self.settle.get(rid)
                if r is None or r["verdict"] not in ACTIVE:
                    self.fail("read_fresh", "read returned record %d, never committed" % rid, o)
                elif s and s[0] > o["complete_t"]:
                    self.fail("read_fresh", "read returned record %d before its commit began"
                              % rid, o, *s[2])
                elif self.ended_at(rid)[1] < o["invoke_t"]:
                    self.fail("read_fresh", "read returned record %d after it had been "
                              "superseded or revoked" % rid, o)
        # every record committed before a read began and certainly active
        # until it ended must be in it
        for slot, recs in sorted(self.slot_records().items()):
            lives = [(self.settle[r["id"]][1], self.ended_at(r["id"])[0], r["id"]) for r in recs
                     if r["verdict"] in ACTIVE and r["id"] in self.settle]
            mine = [o for o in reads if tuple(o["args"]["slot"]) == slot]
            for o, rids in covering(mine, lives):
                got = {rid for rid, _ in o["result"]}
                self.count("read_fresh", len(rids))
                for rid in sorted(set(rids) - got):
                    self.fail("read_fresh", "read missed record %d, committed before it began "
                              "and active throughout" % rid, o, *self.settle[rid][2])

    def check_read_snapshot(self):
        writer = {}  # record -> its acknowledged writer
        for o in self.ops:
            if o["op"] == "swrite":
                if self.acked(o):
                    writer[o["result"]["record"]] = o
        stored = {r["id"] for r in self.store["snapshot_records"]}
        begun = {}
        for o in self.ops:
            if o["op"] == "sbegin" and self.acked(o):
                begun[o["result"]["tx"]] = o
        seen = {}
        for o in self.ops:
            if o["op"] != "sread" or not self.acked(o):
                continue
            b = begun.get(o["args"]["tx"])
            if b is None:
                continue
            got = set(o["result"]["records"])
            first = seen.setdefault(o["args"]["tx"], (got, o))
            self.count("read_snapshot")
            if first[0] != got:
                self.fail("read_snapshot", "two reads of transaction %d returned %s and %s: its "
                          "snapshot changed" % (o["args"]["tx"], sorted(first[0]), sorted(got)),
                          b, first[1], o)
            for rid in sorted(got - stored):
                self.fail("read_snapshot", "read returned record %d, which the namespace does "
                          "not hold" % rid, o)
            for rid in sorted(stored):
                w = writer.get(rid)
                if w is None:
                    continue  # its writer's outcome is unknown: either is right
                self.count("read_snapshot")
                if rid in got and w["result"]["commit_invoke_t"] > b["complete_t"]:
                    self.fail("read_snapshot", "read of transaction %d returned record %d, whose "
                              "SQL COMMIT was invoked after the transaction's begin had completed"
                              % (o["args"]["tx"], rid), b, w, o)
                elif rid not in got and w["complete_t"] < b["invoke_t"]:
                    self.fail("read_snapshot", "read of transaction %d missed record %d, "
                              "committed before the transaction began" % (o["args"]["tx"], rid),
                              w, b, o)

    def check_invariants(self):
        self.count("invariants")
        for row in self.store["invariants"]:
            self.fail("invariants", "check_invariants: %s" % json.dumps(row, default=str))

    def check_receipts(self):
        self.count("receipts", sum(r["checked"] or 0 for r in self.store["verify"]))
        if not self.store["verify"]:
            self.fail("receipts", "verify_receipts returned no chain")
        for row in self.store["verify"]:
            if row["first_bad_seq"] is not None:
                self.fail("receipts", "verify_receipts: %s" % json.dumps(row, default=str))

    def run(self, out=sys.stdout):
        for prop in PROPERTIES:
            getattr(self, "check_" + prop)()
        failed = [p for p in PROPERTIES if self.violations[p]]
        for p in PROPERTIES:
            v = self.violations[p]
            print("%-16s %-12s %d checked" % (p, "ok" if not v else "FAILED (%d)" % len(v),
                                              self.checked[p]), file=out)
            for text, ops in v[:20]:
                print("    " + text, file=out)
                for o in ops[:4]:
                    print("      " + json.dumps(o, sort_keys=True, default=str), file=out)
        print("%d passed, %d failed" % (len(PROPERTIES) - len(failed), len(failed)), file=out)
        return failed


# ---------------------------------------------------------------- self-test

def self_test():
    """Hand-made histories with one defect each: every one must be caught."""
    import copy
    import io

    def op(client, kind, args, t0, t1, result, outcome="ok"):
        return {"client": client, "op": kind, "args": args, "invoke_t": t0,
                "complete_t": t1, "outcome": outcome, "result": result, "sqlstate": None}

    def rec(rid, tx, value, state, verdict, proposal=None, head=None):
        return {"id": rid, "tx_id": tx, "entity": "acct", "attribute": "owner", "value": value,
                "kind": "belief", "state": state, "verdict": verdict, "verdict_reason": None,
                "proposal": proposal, "expected_head": head}

    prop = {"slot": ["acct", "owner"], "expected_head": None, "kind": "new"}
    ops = [
        op(0, "propose", dict(prop, value='"a"', proposal="p1"), 0.0, 1.0,
           {"tx": 1, "record": 1, "state": "committed", "reason": None}),
        op(1, "propose", dict(prop, value='"b"', proposal="p2"), 2.0, 3.0,
           {"tx": 2, "record": 2, "state": "committed", "reason": None}),
        op(0, "propose", dict(prop, value='"a"', proposal="p1", kind="retry"), 4.0, 5.0,
           {"tx": 1, "record": 1, "state": "superseded", "reason": None}),
        op(1, "act", {"tool": "hist_wire", "args": {"key": "k0"}, "effect_key": "k0",
                      "agent": None, "variant": "same"}, 6.0, 7.0,
           {"tx": 3, "allowed": True, "reason": None, "action_id": 3, "blockers": [], "own": []}),
        op(2, "read", {"slot": ["acct", "owner"]}, 8.0, 9.0, [[2, '"b"']]),
    ]
    store = {
        "records": [rec(1, 1, '"a"', "superseded", "committed", "p1"),
                    rec(2, 2, '"b"', "committed", "committed", "p2"),
                    dict(rec(3, 3, '{}', "committed", None), kind="tool_action",
                         entity="tool:hist_wire", attribute="3")],
        "history": [],
        "receipts": [{"record": 1, "disposition": "committed", "reason": None, "pos": 3,
                      "superseded": []},
                     {"record": 2, "disposition": "committed", "reason": None, "pos": 7,
                      "superseded": [1]}],
        "action_log": [{"tx_id": 3, "tool": "hist_wire", "reversible": False, "allowed": True,
                        "reason": None, "blockers": [], "action_id": 3, "effect_key": "k0",
                        "args": {"key": "k0"}, "agent": "postgres"}],
        "snapshot_records": [],
        "rollback_log": [],
        "transactions": [{"id": i, "status": "committed"} for i in (1, 2, 3)],
        "invariants": [],
        "verify": [{"namespace": "n", "checked": 2, "first_bad_seq": None, "detail": None}],
    }

    def lost(o, s):
        del s["records"][1]

    def twice(o, s):
        s["action_log"].append(dict(s["action_log"][0], tx_id=4, action_id=4))

    def reorder(o, s):
        s["receipts"][0]["pos"], s["receipts"][1]["pos"] = 7, 3

    def stale(o, s):
        o.append(op(3, "read", {"slot": ["acct", "owner"]}, 10.0, 11.0, [[1, '"a"']]))

    def unstable(o, s):
        o.append(op(3, "propose", dict(prop, value='"a"', proposal="p1", kind="retry"),
                    12.0, 13.0, {"tx": 9, "record": 9, "state": "committed", "reason": None}))

    def gate(o, s):
        o.append(op(3, "open", {"stages": [{"slot": ["acct", "owner"], "value": '"c"'}]},
                    10.0, 11.0, {"tx": 5, "records": [5]}))
        o.append(op(2, "gate", {"tool": "hist_wire"}, 12.0, 13.0,
                    {"tx": 6, "allowed": True, "reason": None, "blockers": []}))
        o.append(op(3, "abort", {"tx": 5}, 14.0, 15.0, {"repaired": [[5, "revoked"]]}))

    def changed(o, s):
        o.append(op(3, "propose", dict(prop, value='"c"', proposal="p1", kind="changed"),
                    12.0, 13.0, {"tx": 1, "record": 1, "state": "superseded", "reason": None}))

    def other_args(o, s):
        o.append(op(2, "act", {"tool": "hist_wire", "args": {"key": "k0", "n": 2},
                               "effect_key": "k0", "agent": None, "variant": "args"},
                    10.0, 11.0, {"tx": 4, "allowed": True, "reason": None, "action_id": 3,
                                 "blockers": [], "own": []}))

    def other_agent(o, s):
        o.append(op(2, "act", {"tool": "hist_wire", "args": {"key": "k0"}, "effect_key": "k0",
                               "agent": "memtx_hist_a", "variant": "agent"},
                    10.0, 11.0, {"tx": 4, "allowed": True, "reason": None, "action_id": 3,
                                 "blockers": [], "own": []}))

    def repeat_refused(o, s):
        bad = op(2, "act", {"tool": "hist_wire", "args": {"key": "k0"}, "effect_key": "k0",
                            "agent": None, "variant": "same"}, 10.0, 11.0, None, "fail")
        bad["sqlstate"] = "23505"
        o.append(bad)

    def own_allowed(o, s):
        o.append(op(2, "own", {"tool": "hist_wire", "call": "gate", "staged": 1}, 10.0, 11.0,
                    {"tx": 5, "allowed": True, "reason": None, "blockers": [], "own": [9]}))
        s["records"].append(dict(rec(9, 5, '"c"', "committed", "committed"), attribute="limit"))
        s["receipts"].append({"record": 9, "disposition": "committed", "reason": None,
                              "pos": 12, "superseded": []})

    def snapshot(o, s, got, commit_invoke, complete):
        o.append(op(4, "swrite", {"slot": "s4-1"}, 8.0, complete,
                    {"tx": 20, "record": 20, "state": "committed", "mcommit_t": 8.5,
                     "commit_invoke_t": commit_invoke}))
        o.append(op(5, "sbegin", {}, 10.0, 10.5, {"tx": 21}))
        o.append(op(5, "sread", {"tx": 21}, 12.0, 12.5, {"records": got}))
        s["snapshot_records"].append({"id": 20, "tx_id": 20, "state": "committed"})

    def late_read(o, s):
        snapshot(o, s, [20], 10.8, 11.0)

    def missed_read(o, s):
        snapshot(o, s, [], 9.0, 9.5)

    def moving_snapshot(o, s):
        snapshot(o, s, [], 10.2, 10.7)
        o.append(op(5, "sread", {"tx": 21}, 13.0, 13.5, {"records": [20]}))

    def clean_snapshot(o, s):
        snapshot(o, s, [20], 9.0, 9.5)
        o.append(op(5, "sread", {"tx": 21}, 13.0, 13.5, {"records": [20]}))

    cases = [("a clean history", None, []),
             ("a clean snapshot read", clean_snapshot, []),
             ("a lost commit", lost, ["no_lost_commit"]),
             ("a duplicated effect key", twice, ["effect_once"]),
             ("a real-time order violation", reorder, ["realtime_order"]),
             ("a stale read", stale, ["read_fresh"]),
             ("a proposal with two records", unstable, ["proposal_stable"]),
             ("a gate allowed while in flight", gate, ["gate_sound"]),
             ("a retry with other content accepted", changed, ["proposal_stable"]),
             ("a key answering a call with other args", other_args, ["effect_once"]),
             ("a key answering another agent", other_agent, ["effect_once"]),
             ("a true repeat refused", repeat_refused, ["effect_once"]),
             ("a gate allowed with own staging", own_allowed, ["gate_sound"]),
             ("a read beyond its snapshot", late_read, ["read_snapshot"]),
             ("a read missing its snapshot", missed_read, ["read_snapshot"]),
             ("a snapshot that moved", moving_snapshot, ["read_snapshot"])]
    bad = 0
    for name, mutate, expect in cases:
        o, s = copy.deepcopy(ops), copy.deepcopy(store)
        if mutate:
            mutate(o, s)
        buf = io.StringIO()
        failed = Checker(o, s).run(buf)
        caught = all(p in failed for p in expect) and (expect or not failed)
        print("self-test %-32s %s (failed: %s)" % (name, "ok" if caught else "NOT CAUGHT",
                                                   ", ".join(failed) or "none"))
        if not caught:
            bad += 1
            print(buf.getvalue())
    print("%d passed, %d failed" % (len(cases) - bad, bad))
    return bad == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("history", nargs="?")
    ap.add_argument("--dsn", default="")
    ap.add_argument("--self-test", action="store_true")
    opt = ap.parse_args()
    if opt.self_test:
        sys.exit(0 if self_test() else 1)
    if not opt.history:
        ap.error("a history file is required")
    ops = [json.loads(line) for line in open(opt.history)]
    start = next(o for o in ops if o["op"] == "start")
    ns = start["args"]["namespace"]
    import psycopg
    with psycopg.connect(opt.dsn, autocommit=True) as conn:
        store = load_store(conn, ns, start["args"].get("snapshot_namespace", ns + "-snapshot"))
    n = sum(1 for o in ops if o["op"] not in ("start", "terminate"))
    kills = sum(1 for o in ops if o["op"] == "terminate" and o["result"])
    print("history %s: namespace %s, %d operations (%d acknowledged, %d unknown), "
          "%d backends terminated" % (opt.history, ns, n,
                                      sum(1 for o in ops if o["outcome"] == "ok" and o["op"] not in ("start", "terminate")),
                                      sum(1 for o in ops if o["outcome"] == "maybe"), kills))
    failed = Checker(ops, store).run()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
