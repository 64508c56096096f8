"""Replays conformance cases with memtx.propose in place of begin + stage +
commit, and compares each with the case as written (SPEC §21).

SPEC §21 lets memtx.propose write fewer row versions than the three calls
(its record inserted already settled, its transaction row already closed,
no tentative history row) but requires the same observable results.  Every
case is replayed twice on a fresh store: as written, and with each fusible
triple of events played as one memtx.propose call.  A triple is fusible
when an agent's begin (no isolation, no tier other than the one the agent
would get anyway) is followed at once by that agent's stage into it and
its commit of it, none of the three expecting an error or moving the
clock, and the stage does not reuse a proposal id (a retry is where
propose and the three calls differ by definition, SPEC §10).

The two replays must agree on everything but ids, positions, xids,
wall-clock times and random salts: every call's SQLSTATE and outcome, the
final records (every column that is not one of those), the transactions
(status, tier, isolation, verifier calls, end reason), the receipts (kind,
disposition, reason, and the body with record ids named by their records),
each record's history of states and reasons — the proposed records' without
the tentative first row the three calls write — memtx.stats, the receipt
chains (memtx.verify_receipts), the invariants, and the grade.
"""

import copy
import json

import psycopg

import replay
import router

def agent_tier(case, agent):
    """The tier memtx gives agent without a harness tier (SPEC §7)."""
    for a in case["agents"]:
        if a["name"] == agent and a.get("tier"):
            return a["tier"]
    return case["settings"].get("memtx.default_tier", "medium")


def fusion_plan(case):
    """The indexes of the begin events whose triple propose replaces."""
    events = case["events"]
    used = set()                    # (agent, proposal) ids used so far
    for s in case["store"]["seed"]:
        if s.get("proposal"):
            used.add((s["agent"], s["proposal"]))
    plan = set()
    i = 0
    while i < len(events):
        e = events[i]
        if (e["do"] == "begin" and i + 2 < len(events) and e.get("label")
                and not e.get("isolation") and e.get("tier") in (None, agent_tier(case, e["agent"]))
                and not e.get("expect_error")):
            st, co = events[i + 1], events[i + 2]
            tx = "$" + e["label"]
            if (st["do"] == "stage" and co["do"] == "commit"
                    and st["agent"] == co["agent"] == e["agent"]
                    and st.get("tx") == co.get("tx") == tx
                    and not any(x.get("now") or x.get("expect_error") for x in (st, co))
                    and not (st.get("proposal") and (st["agent"], st["proposal"]) in used)):
                plan.add(i)
        if e["do"] == "stage" and e.get("proposal"):
            used.add((e["agent"], e["proposal"]))
        i += 1
    return plan


class ComparedReplay(replay.Replay):
    """A replay as written (propose=False) or with the fusible triples as
    memtx.propose calls; its snapshot adds what the comparison reads."""

    def __init__(self, conn, case, propose):
        super().__init__(conn, case)
        self.propose = propose
        self.plan = {id(case["events"][i]) for i in fusion_plan(case)}
        self.fused_labels = set()
        self.pending = []           # the stage and commit entries of a proposal played

    def play(self, e):
        if self.pending:
            return self.pending.pop(0)
        if id(e) not in self.plan:
            return super().play(e)
        self.fused_labels.add(e["label"])
        if not self.propose:
            return super().play(e)
        i = next(k for k, x in enumerate(self.case["events"]) if x is e)
        st, co = self.case["events"][i + 1], self.case["events"][i + 2]
        args = {k: v for k, v in st.items() if k != "tx"}
        args["namespace"] = e.get("namespace", self.case["namespace"])
        q, params = self.stage_args(args, "propose")
        rows, sqlstate, msg = self.execute(q, params, e["agent"])
        txid = rows[0][0] if rows else None
        rid = rows[0][1] if rows else None
        base = {"sqlstate": sqlstate, "error": msg}
        begin = dict(base, do="begin", agent=e["agent"], label=e["label"], tx=None, value=txid,
                     expect_error=None)
        stage = dict(base, do="stage", agent=st["agent"], label=st.get("label"), tx=txid, value=rid,
                     expect_error=None)
        commit = dict(base, do="commit", agent=co["agent"], label=co.get("label"), tx=txid, value=None,
                      expect_error=None)
        if rows is not None:
            commit["outcomes"] = [{"record_id": r[1], "state": r[2], "reason": r[3]} for r in rows]
        self.labels[e["label"]] = txid
        if st.get("label"):
            self.labels[st["label"]] = rid
        self.pending = [stage, commit]
        return begin

    def snapshot(self):
        snap = super().snapshot()
        rows = self.store_rows
        snap["history"] = rows("SELECT pg_catalog.jsonb_build_array(h.record_id, h.state, h.reason) "
                               "FROM memtx.history h ORDER BY h.record_id, h.pos")
        snap["receipts"] = rows("SELECT pg_catalog.to_jsonb(x) - 'hash' - 'prev_hash' - 'at' "
                                "FROM memtx.receipts x ORDER BY x.namespace, x.appended")
        snap["stats"] = rows("SELECT pg_catalog.to_jsonb(s) FROM memtx.stats s")
        snap["chains"] = rows("SELECT pg_catalog.to_jsonb(v) FROM memtx.verify_receipts() v ORDER BY 1")
        snap["fused_tx"] = sorted(self.labels[la] for la in self.fused_labels if self.labels.get(la))
        return snap


def run_case(conninfo, case, propose):
    """replay.run_case, as written or with propose."""
    case = copy.deepcopy(case)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET statement_timeout = '60s'")
        r = ComparedReplay(conn, case, propose)
        return r.run()


def projection(run, graded, drop_tentative):
    """router.projection, with the records' remaining columns, the
    transactions' counters, receipts, history, stats and chains; records
    are named by their content, not their ids.  drop_tentative: leave out
    the tentative first history row of the records of fused transactions
    (the three calls write it, propose does not)."""
    proj = router.projection(run, graded)
    snap = run["snapshot"]
    if not snap:
        return proj
    fused = set(snap["fused_tx"])
    recs = {r["id"]: r for r in snap["records"]}

    def name(rid):
        r = recs.get(rid)
        if r is None:
            return ["unknown", rid is None]
        return [r["namespace"], r["entity"] if r["kind"] != "tool_action" else "tool",
                r["attribute"] if r["kind"] != "tool_action" else None, r["value_text"], r["owner"],
                r["state"]]

    def extra(r):
        return json.dumps([name(r["id"]), r["expected_head"] is not None and name(r["expected_head"]),
                           r["settled_pos"] is not None, r["committed_seq"] is not None,
                           r["committed_xid"] is not None, r["settled_xid"] is not None,
                           r["tx_id"] in fused], sort_keys=True)
    proj["store"]["record_positions"] = sorted(extra(r) for r in snap["records"])
    proj["store"]["transactions"] = sorted(
        json.dumps([t["namespace"], t["agent"], t["tier"], t["isolation"], t["status"], t["verifier_calls"],
                    t["end_reason"], t["ended_at"] is not None, t["epoch"]])
        for t in snap["transactions"])
    hist = {}
    for rid, state, reason in snap["history"]:
        hist.setdefault(rid, []).append([state, reason])
    for rid, rows in hist.items():
        r = recs.get(rid)
        if drop_tentative and r is not None and r["tx_id"] in fused and rows and rows[0][0] == "tentative":
            rows.pop(0)
    proj["store"]["history"] = sorted(json.dumps([name(rid), rows]) for rid, rows in hist.items())

    def body(b):
        b = dict(b)
        for k in ("tx", "staged_pos", "settled_pos", "committed_seq", "value_digest"):
            b.pop(k, None)
        if "record" in b:
            b["record"] = name(b["record"])
        for k in ("superseded", "repaired", "quarantined"):
            if isinstance(b.get(k), list):
                b[k] = sorted(name(x) for x in b[k])
        if b.get("expected_head") is not None:
            b["expected_head"] = name(b["expected_head"])
        return b
    proj["store"]["receipts"] = sorted(
        json.dumps([x["namespace"], x["kind"], x["disposition"], x["reason"],
                    name(x["subject"]) if x["kind"] == "commit" else None, body(x["body"])], sort_keys=True)
        for x in snap["receipts"] if x["kind"] == "commit")
    proj["store"]["other_receipts"] = sorted(
        json.dumps([x["namespace"], x["kind"], x["disposition"], x["reason"]])
        for x in snap["receipts"] if x["kind"] != "commit")
    proj["store"]["stats"] = snap["stats"]
    proj["store"]["chains"] = snap["chains"]
    proj["store"]["receipt_count"] = len(snap["receipts"])
    return proj


def compare_case(conninfo, case, grade):
    """Replays case as written and with propose; returns the number of
    triples fused and the list of differences (none when nothing fuses)."""
    n = len(fusion_plan(case))
    if n == 0:
        return 0, []
    three = run_case(conninfo, case, False)
    one = run_case(conninfo, case, True)
    a = projection(three, grade(case, three), True)
    b = projection(one, grade(case, one), False)
    diffs = router.differences(a, b)
    return n, [d.replace("one node", "three calls").replace("router", "propose") for d in diffs]
