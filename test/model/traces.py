#!/usr/bin/python3
"""Model-based random traces against the real extension.

Each trace starts from a fresh extension (DROP EXTENSION memtx CASCADE;
CREATE EXTENSION memtx CASCADE in database memtx_model, made when missing,
on the server the PG* environment names, as a superuser) and registers a few
sources and tools.  Then 2..4 agents (roles made here) call begin (through
the harness, at every tier, sometimes pinning a level or with a 1 s lease),
stage, commit, abort, read, revoke, gate, act (with effect keys), propose and
outcome, and the harness calls resolve and expire_transactions, in a random
interleaving, on random parents, kinds, scopes, readers, writers,
confidences, validity ranges, observed_at, expected heads and proposal ids,
on foreign and ended transactions sometimes, while the logical clock moves.  After every call the result is compared with what the
model (model.py, written from SPEC.md alone) predicts, then the state of
every record (state, reason), every transaction's status and the revocation
registry are compared, and memtx.check_invariants() must return no rows.

The background worker must not serve that database (it is not in
memtx.databases), or it would expire the 1 s leases on its own clock.

On a mismatch the trace is shrunk (delta debugging: drop chunks of calls
while the same kind of mismatch at the same kind of call remains), printed,
and written as JSON under regressions/.  Every file of regressions/ is
replayed first on each run; known/ holds traces of open extension bugs,
replayed only with --known.

    traces.py [--seed N] [--traces T] [--steps S] [--agents 2..4] [--known]
              [--seconds N] [--v1] [--database NAME] [--coverage]
              [--shrink-seconds N]

Prints the seed, the figures (calls, calls/s) and "N passed, N failed"
last, N counting traces (replayed files included).
"""

import argparse
import collections
import datetime
import glob
import json
import os
import random
import sys
import time

import psycopg
from psycopg import sql

import model as M

HERE = os.path.dirname(os.path.abspath(__file__))
ORIGIN = datetime.datetime(2031, 1, 1, tzinfo=datetime.timezone.utc)
START = 600                     # the clock starts at ORIGIN + 600 min
LEASE = 30                      # minutes of wall clock: longer than any trace
SOURCES = {"sensor": 0.95, "crm": 0.7, "crm2": 0.7, "rumor": 0.3}
TOOLS = {"refund": False, "note": True}     # "launch" stays unregistered
# few slots, one of them hot, so that rivals meet
ENTITIES = ("e1", "e1", "e1", "e2", "e3")
ATTRIBUTES = ("x", "x", "y")
VALUES = ("1", "1.0", "2", '"x"', '"y"', '{"a": 1}')
KINDS = ("belief",) * 5 + ("summary", "profile", "index_entry", "shared_copy")
TIERS = ("low", "medium", "high", "external_action")
ARGS = ('{"n": 1}', '{"n": 2}')


def ts(minutes):
    if minutes is None:
        return None
    return (ORIGIN + datetime.timedelta(minutes=minutes)).isoformat()


def tsrange(valid):
    if valid is None:
        return None
    lo, hi = valid
    return "[%s,%s)" % (ts(lo) or "", ts(hi) or "")


# the named arguments stage and propose share
CONTENT = ("entity => %s, attribute => %s, value => %s::jsonb,"
           " kind => %s::memtx.kind, source => %s, confidence => %s,"
           " derived_from => %s::bigint[], scope => %s::memtx.scope,"
           " readers => %s::text[], writers => %s::text[],"
           " valid => %s::tstzrange, observed_at => %s::timestamptz,"
           " expected_head => %s, proposal => %s")


def content_args(op):
    return (op["entity"], op["attribute"], op["value"], op["kind"],
            op["source"], op["confidence"], op["parents"], op["scope"],
            op["readers"], op["writers"], tsrange(op["valid"]),
            ts(op["observed_at"]), op.get("expected_head"), op.get("proposal"))


def shape(kind, rows):
    """A call's result rows in the form the model predicts them."""
    if kind in ("begin", "stage", "resolve"):
        return rows[0][0]
    if kind == "propose":
        return tuple(rows[0])
    if kind in ("outcome", "commit"):
        return [tuple(r) for r in rows]
    if kind in ("abort", "revoke"):
        return sorted(tuple(r) for r in rows)
    if kind in ("read", "expire"):
        return sorted(r[0] for r in rows)
    if kind == "gate":
        a, r, b = rows[0]
        return (a, r, sorted(b or []))
    if kind == "act":
        a, r, i, b = rows[0]
        return (a, r, i, sorted(b or []))
    raise ValueError(kind)


class Mismatch(Exception):
    def __init__(self, step, kind, detail):
        super().__init__("step %d (%s): %s" % (step, kind, detail))
        self.step, self.kind, self.detail = step, kind, detail


class Runner:
    """Runs one trace (a list of symbolic calls) against a fresh store."""

    def __init__(self, admin, agents):
        self.admin = admin
        self.conn = None
        self.agents = agents
        self.calls = 0
        self.coverage = collections.Counter()

    def reset(self):
        # a new session per trace: the extension's plans cached in a session
        # would name the dropped objects
        if self.conn is not None:
            self.conn.close()
        self.admin.execute("DROP EXTENSION IF EXISTS memtx CASCADE")
        self.admin.execute("CREATE EXTENSION memtx CASCADE")
        self.conn = c = psycopg.connect(dbname=self.admin.info.dbname,
                                        autocommit=True)
        for name, auth in SOURCES.items():
            c.execute("SELECT memtx.register_source(%s, %s)", (name, auth))
        for name, rev in TOOLS.items():
            c.execute("SELECT memtx.register_tool(%s, %s, %s)",
                      (name, rev, "undo_" + name if rev else None))
        c.execute("SET memtx.lease_timeout = '%dmin'" % LEASE)
        c.execute(sql.SQL("SET memtx.logical_now = {}").format(
            sql.Literal(ts(START))))
        self.role = None
        self.model = M.Model(SOURCES, TOOLS, START)
        self.ids = {}           # label -> id
        self.labels = {}        # ("tx" | "rec", id) -> label

    def as_role(self, caller):
        role = None if caller == "harness" else caller
        if role != self.role:
            if role is None:
                self.conn.execute("RESET ROLE")
            else:
                self.conn.execute(sql.SQL("SET ROLE {}").format(
                    sql.Identifier(role)))
            self.role = role

    def resolve(self, op):
        """The op with labels replaced by ids, or None when one is gone."""
        out = dict(op)
        try:
            if op.get("expected_head") not in (None, 0):
                out["expected_head"] = self.ids[op["expected_head"]]
            for k in ("tx", "record"):
                if k in op:
                    out[k] = self.ids[op[k]]
            for k in ("parents", "inputs"):
                if k in op:
                    out[k] = [self.ids[x] for x in op[k]]
        except KeyError:
            return None
        return out

    def execute(self, op):
        """Runs one call; returns ("ok", value) or ("err", sqlstate)."""
        c = self.conn
        kind = op["op"]
        if kind == "wait":
            time.sleep(1.1)
            return ("ok", None)
        if kind == "tick":
            self.as_role("harness")
            c.execute(sql.SQL("SET memtx.logical_now = {}").format(
                sql.Literal(ts(self.model.now + op["minutes"]))))
            return ("ok", None)
        self.calls += 1
        if not op.get("short_lease"):
            self.as_role(op["caller"])
            return self.call(op)
        # the shortest lease in force for this call (see Generator.next);
        # the setting is a superuser's, and stays in force under SET ROLE
        self.as_role("harness")
        c.execute("SET memtx.lease_timeout = '1s'")
        try:
            self.as_role(op["caller"])
            return self.call(op)
        finally:
            self.as_role("harness")
            c.execute("SET memtx.lease_timeout = '%dmin'" % LEASE)

    def call(self, op):
        c = self.conn
        kind = op["op"]
        try:
            q, args = self.statement(op)
            v = shape(kind, c.execute(q, args).fetchall())
        except psycopg.Error as e:
            # a lost connection is no answer of the extension's
            if c.closed or e.sqlstate is None:
                raise
            return ("err", e.sqlstate)
        return ("ok", v)

    @staticmethod
    def statement(op):
        """The SQL of one call and its parameters."""
        kind = op["op"]
        if kind == "begin":
            return ("SELECT memtx.begin(tier => %s, agent => %s,"
                    " isolation => %s)",
                    (op["tier"], op["agent"], op["isolation"]))
        if kind == "stage":
            return ("SELECT memtx.stage(tx => %s, " + CONTENT + ")",
                    (op["tx"],) + content_args(op))
        if kind == "propose":
            return ("SELECT tx_id, record_id, state::text, reason"
                    " FROM memtx.propose(" + CONTENT + ")", content_args(op))
        if kind == "outcome":
            return ("SELECT record_id, tx_id, state::text, reason, tx_status"
                    " FROM memtx.outcome(%s, agent => %s)", (op["proposal"], op.get("agent")))
        if kind == "commit":
            return ("SELECT record_id, state::text, reason FROM memtx.commit(%s)",
                    (op["tx"],))
        if kind == "abort":
            return ("SELECT record_id, action, reason FROM memtx.abort(%s)",
                    (op["tx"],))
        if kind == "revoke":
            return ("SELECT record_id, action, reason FROM memtx.revoke(%s, %s)",
                    (op["record"], "n"))
        if kind == "read":
            return ("SELECT id FROM memtx.read(%s, %s, %s)",
                    (op["tx"], op["entity"], op["attribute"]))
        if kind == "resolve":
            return ("SELECT memtx.resolve(%s, %s)::text",
                    (op["record"], op["accept"]))
        if kind == "expire":
            return ("SELECT memtx.expire_transactions()", ())
        if kind == "gate":
            return ("SELECT allowed, reason, blockers FROM memtx.gate(%s, %s)",
                    (op["tx"], op["tool"]))
        if kind == "act":
            return ("SELECT allowed, reason, action_id, blockers FROM memtx.act("
                    "tx => %s, tool => %s, args => %s::jsonb,"
                    " derived_from => %s::bigint[], effect_key => %s)",
                    (op["tx"], op["tool"], op["args"], op["inputs"],
                     op["effect_key"]))
        raise ValueError(kind)

    def new_id(self, op, got):
        if got[0] != "ok":
            return None
        if op["op"] in ("begin", "stage"):
            return got[1]
        if op["op"] == "propose":
            return got[1][:2]
        if op["op"] == "act" and got[1][0] and got[1][2] is not None:
            return got[1][2]
        return None

    def step(self, n, sym):
        """Runs symbolic call n; returns the resolved op, or None (skipped)."""
        op = self.resolve(sym)
        if op is None:
            return None
        got = self.execute(op)
        nid = self.new_id(op, got)
        pred = self.model.apply(op, nid)
        if nid is not None:
            label = sym["label"]
            if op["op"] == "propose":
                # a retry answers with the original ids: labelled already
                if ("rec", nid[1]) not in self.labels:
                    self.ids["t" + label[1:]] = nid[0]
                    self.labels["tx", nid[0]] = "t" + label[1:]
                    self.ids[label] = nid[1]
                    self.labels["rec", nid[1]] = label
            elif ("rec", nid) not in self.labels or op["op"] == "begin":
                self.ids[label] = nid
                self.labels["tx" if op["op"] == "begin" else "rec", nid] = label
        self.compare(n, op, pred, got)
        self.compare_state(n, op)
        self.tally(op["op"], got)
        return op

    def tally(self, kind, got):
        """Counts what the calls exercised (printed as coverage)."""
        cov = self.coverage
        if got[0] == "err":
            cov["%s error %s" % (kind, got[1])] += 1
        elif kind == "commit":
            for _, state, reason in got[1]:
                cov["commit %s %s" % (state, reason or "")] += 1
        elif kind in ("gate", "act"):
            cov["%s %s %s" % (kind, "allowed" if got[1][0] else "blocked",
                              got[1][1] or "")] += 1
        elif kind in ("abort", "revoke"):
            for _, action, reason in got[1]:
                cov["%s row %s %s" % (kind, action, reason)] += 1
        elif kind == "expire":
            cov["expire %d" % len(got[1])] += 1
        elif kind == "resolve":
            cov["resolve %s" % got[1]] += 1
        else:
            cov[kind] += 1

    def compare(self, n, op, pred, got):
        kind = op["op"]
        if got[0] == "err" and (got[1].startswith("XX") or got[1] == "P0001"):
            raise Mismatch(n, kind, "error without a specific SQLSTATE: %s"
                           % got[1])
        if pred[0] == "any":
            return
        if pred[0] == "err":
            if got[0] != "err":
                raise Mismatch(n, kind, "expected an error %s, got %r" % (
                    sorted(pred[1]) if pred[1] else "(any code)", got[1]))
            if pred[1] is not None and got[1] not in pred[1]:
                raise Mismatch(n, kind, "expected SQLSTATE %s, got %s" % (
                    sorted(pred[1]), got[1]))
            return
        if got[0] == "err":
            raise Mismatch(n, kind, "expected %r, got error %s" % (
                pred[1], got[1]))
        want = pred[1]
        if want == "id":
            if not isinstance(got[1], int):
                raise Mismatch(n, kind, "expected an id, got %r" % (got[1],))
            return
        if kind in ("abort", "revoke"):
            want = sorted(want, key=lambda r: (r[0], r[1]))
        if not M.matches(want, got[1]):
            raise Mismatch(n, kind, "expected %r, got %r" % (want, got[1]))

    def compare_state(self, n, op, invariants=True):
        c = self.conn
        self.as_role("harness")
        m = self.model
        rows = c.execute("SELECT id, state::text, reason FROM memtx.records "
                         "ORDER BY id").fetchall()
        ids = [r[0] for r in rows]
        if ids != sorted(m.records):
            raise Mismatch(n, op["op"], "records %r, model has %r" % (
                ids, sorted(m.records)))
        for rid, state, reason in rows:
            r = m.records[rid]
            if state != r.state or not M.matches(r.reason, reason):
                raise Mismatch(n, op["op"], "record %d is %s/%s, model: %s/%r"
                               % (rid, state, reason, r.state, r.reason))
        for tid, status in c.execute(
                "SELECT id, status::text FROM memtx.transactions ORDER BY id"):
            t = m.txs.get(tid)
            if t is None or t.status != status:
                raise Mismatch(n, op["op"], "transaction %d is %s, model: %s"
                               % (tid, status, t and t.status))
        reg = {r[0] for r in c.execute(
            "SELECT record_id FROM memtx.revocation_registry")}
        if reg != m.registry:
            raise Mismatch(n, op["op"], "registry %r, model %r" % (
                sorted(reg), sorted(m.registry)))
        if invariants:
            self.check_invariants(n, op)

    def check_invariants(self, n, op):
        bad = self.conn.execute("SELECT invariant, record_id, detail "
                                "FROM memtx.check_invariants()").fetchall()
        if bad:
            raise Mismatch(n, op["op"], "check_invariants: %r" % (bad,))

    def run(self, ops):
        """Runs a symbolic trace from a fresh store; raises Mismatch."""
        self.reset()
        self.done = []          # the calls run (labels resolved), in order
        for sym in ops:
            if self.resolve(sym) is None:
                continue
            self.done.append(sym)
            self.step(len(self.done) - 1, sym)


class Generator:
    """Draws the next call from the model's state."""

    def __init__(self, rnd, agents, known, v2):
        self.rnd = rnd
        self.agents = agents
        # --known draws the calls that reach the open bugs of known/ (none
        # open now; the last, regressions/cross-tx-action-repair.json, is
        # fixed)
        self.known = known
        self.bound = {}         # proposal id -> the call that bound it
        self.binder = {}        # proposal id -> the agent of that call
        self.queue = []         # calls due next: tx labels to stage in, "wait"
        self.v2 = v2            # §10: expected heads, proposals, propose

    def some(self, items, k):
        items = list(items)
        return self.rnd.sample(items, min(k, len(items)))

    def next(self, runner, n):
        rnd, m = self.rnd, runner.model
        lab = self.labels = runner.labels
        self.ids = runner.ids
        txs = list(m.txs.values())
        recs = list(m.records.values())
        choice = rnd.choices(
            ("begin", "stage", "commit", "abort", "read", "revoke", "gate",
             "act", "expire", "tick", "propose", "outcome"),
            (9, 30, 14, 4, 12, 6, 6, 10, 3, 9, 5, 2) if self.v2
            else (9, 30, 14, 4, 12, 6, 6, 10, 3, 9, 0, 0))[0]
        if not txs:
            choice = "begin"
        while self.queue:
            call = self.queue.pop(0)
            if call == "wait":
                return {"op": "wait"}
            t = m.txs.get(runner.ids.get(call))
            if t is not None and t.status == "open":
                return self.content(dict(op="stage", label="r%d" % n,
                                         caller=t.agent, tx=call,
                                         short_lease=True), m, recs, t.agent)
        if choice == "tick":
            return {"op": "tick", "minutes": rnd.choice((7, 14, 21, 49))}
        review = [r for r in recs if r.state == "quarantined"
                  and r.reason == "needs_review"]
        if review and rnd.random() < 0.3:
            r = rnd.choice(review if rnd.random() < 0.9 else recs)
            return {"op": "resolve", "record": lab["rec", r.id],
                    "caller": "harness" if rnd.random() < 0.9
                    else rnd.choice(self.agents),
                    "accept": rnd.random() < 0.6}
        if choice == "expire":
            return {"op": "expire", "caller": "harness"}
        if choice == "propose" or (choice == "outcome" and not self.bound):
            return self.content(dict(op="propose", label="r%d" % n,
                                     caller=rnd.choice(self.agents)), m, recs)
        if choice == "outcome":
            # §17: an agent asks about its own proposals; a harness names the agent
            proposal = rnd.choice(sorted(self.bound))
            caller = rnd.choice(self.agents + ["harness"])
            return {"op": "outcome", "proposal": proposal, "caller": caller,
                    "agent": self.binder[proposal] if caller == "harness" else None}
        if choice == "revoke" and recs:
            r = rnd.choice(recs)
            p = rnd.random()
            caller = (r.owner if p < 0.6 else "harness" if p < 0.9
                      else rnd.choice(self.agents))
            if caller not in ("harness", r.owner) and r.state == "revoked":
                caller = r.owner
            return {"op": "revoke", "caller": caller, "record": lab["rec", r.id]}
        opened = [t for t in txs if t.status == "open"]
        if not opened and choice in ("stage", "read", "abort") and rnd.random() < 0.8:
            choice = "begin"
        if choice == "begin":
            short = rnd.random() < 0.03
            if short:
                # a lease of 1 s: up to three stages at once under it, then
                # a wait past it, so the lease has surely run out (and only
                # then) whatever the machine's load
                self.queue = ["t%d" % n] * rnd.randint(0, 3) + ["wait"]
            return {"op": "begin", "label": "t%d" % n, "caller": "harness",
                    "agent": rnd.choice(self.agents),
                    "tier": rnd.choice(TIERS), "short_lease": short,
                    "isolation": (rnd.choice(M.LEVELS) if rnd.random() < 0.3
                                  else None)}
        if (choice in ("stage", "read", "abort", "act", "gate") and opened
                and rnd.random() < 0.93):
            t = rnd.choice(opened)
        elif choice in ("read", "abort"):
            if not opened:
                return {"op": "tick", "minutes": 7}
            t = rnd.choice(opened)
        else:
            t = rnd.choice(txs)
        if choice == "commit" and t.status == "aborted" and t.outcome is None:
            t = rnd.choice(txs)
        caller = t.agent if rnd.random() < 0.92 else rnd.choice(self.agents)
        base = {"caller": caller, "tx": lab["tx", t.id]}
        if choice in ("commit", "abort"):
            return dict(base, op=choice)
        if choice == "read":
            return dict(base, op="read",
                        entity=rnd.choice(("e1", "e2", "e3", None)),
                        attribute=rnd.choice(("x", "y", None)))
        if choice == "gate":
            return dict(base, op="gate",
                        tool=rnd.choice(("refund", "note", "launch")))
        if choice == "act":
            return dict(base, op="act", label="a%d" % n,
                        tool=rnd.choice(("refund", "note", "launch")),
                        args=rnd.choice(ARGS),
                        inputs=[lab["rec", r.id] for r in self.some(
                            recs, rnd.choice((0, 1, 1, 2)))],
                        effect_key=rnd.choice((None, None, "k1", "k2", "k3")))
        return self.content(dict(base, op="stage", label="r%d" % n), m, recs,
                            t.agent)

    def content(self, call, m, recs, agent=None):
        """A stage's (or a propose's) record content, a retry's sometimes."""
        rnd = self.rnd
        lab = self.labels
        agent = agent or call["caller"]
        if self.v2 and self.bound and rnd.random() < 0.15:
            # §10: the same proposal again, as it was (a retry) or changed
            old = self.bound[rnd.choice(sorted(self.bound))]
            keep = {k: v for k, v in old.items()
                    if k not in ("op", "label", "caller", "tx", "short_lease")}
            if rnd.random() < 0.25:
                keep["value"] = rnd.choice(VALUES)
            return dict(call, **keep)
        now = m.now
        valid = None
        if rnd.random() < 0.35:
            lo = rnd.choice((None, now - 300, now - 60, now + 30))
            hi = rnd.choice((None, 60, 240))
            hi = None if hi is None else (lo if lo is not None else now) + hi
            valid = [lo, hi]
        observed = None
        if rnd.random() < 0.5:
            observed = now - rnd.choice((0, 10, 50, 200))
            if rnd.random() < 0.03:
                observed = now + 5
        readable = [r for r in recs if m.readable(r, agent)]
        pool = readable if rnd.random() < 0.95 else recs
        entity, attribute = rnd.choice(ENTITIES), rnd.choice(ATTRIBUTES)
        head = proposal = None
        if self.v2 and rnd.random() < 0.3:
            slot = [r for r in readable if (r.entity, r.attribute) == (
                entity, attribute) and r.kind != "tool_action"]
            heads = [r for r in slot if r.state in M.ACTIVE] or slot
            head = (lab["rec", rnd.choice(heads).id]
                    if heads and rnd.random() < 0.8 else
                    lab["rec", rnd.choice(recs).id] if recs and rnd.random() < 0.2
                    else 0)
        if self.v2 and rnd.random() < 0.3:
            proposal = "p%d" % rnd.randint(1, 12)
        out = dict(
            call,
            entity=entity, attribute=attribute,
            value=rnd.choice(VALUES), kind=rnd.choice(KINDS),
            source=rnd.choice((None, "sensor", "crm", "crm2", "crm", "crm2",
                               "rumor", "blog")),
            confidence=rnd.choice((1.0, 1.0, 0.9, 0.6, 0.59, 0.3) * 5 + (1.5,)),
            parents=[lab["rec", r.id] for r in self.some(
                pool, rnd.choice((0, 0, 0, 1, 1, 2)))],
            scope=rnd.choice(("private", "shared", "public", "public")),
            readers=(None if rnd.random() < 0.5
                     else self.some(self.agents, rnd.randint(0, 2))),
            writers=(None if rnd.random() < 0.5
                     else self.some(self.agents, rnd.randint(0, 2))),
            valid=valid, observed_at=observed, expected_head=head,
            proposal=proposal)
        parents = [m.records[runner_id] for runner_id in
                   (self.ids[p] for p in out["parents"])]
        if parents and rnd.random() < 0.5:
            # a well-formed derivation: active parents, and a child that
            # widens neither their scope nor their audience, so that views
            # commit and later cascades find them active
            active = [r for r in readable if r.state in M.ACTIVE
                      and r.kind != "tool_action"]
            parents = self.some(active, len(parents))
            out["parents"] = [lab["rec", r.id] for r in parents]
            if parents:
                out["scope"] = min((r.scope for r in parents),
                                   key=M.SCOPE_RANK.get)
                common = set(self.agents)
                for r in parents:
                    if r.scope != "public":
                        common &= r.readers
                out["readers"] = sorted(common) or None
        if proposal is not None and proposal not in self.bound:
            self.bound[proposal] = out
            self.binder[proposal] = agent
        return out


def failure_key(e):
    return (e.kind, e.detail.split(" ")[0])


def shrink(runner, ops, key, budget):
    """Delta debugging: the smallest trace found within budget seconds that
    still fails with the same key."""
    deadline = time.time() + budget

    def fails(candidate):
        """The calls run up to the same failure, or None."""
        try:
            runner.run(candidate)
        except Mismatch as e:
            if failure_key(e) == key:
                return list(runner.done)
        return None

    n = 2
    while len(ops) >= 2 and time.time() < deadline:
        chunk = max(1, len(ops) // n)
        reduced = False
        for i in range(0, len(ops), chunk):
            cand = ops[:i] + ops[i + chunk:]
            if time.time() > deadline:
                break
            got = fails(cand)
            if got is not None:
                ops, n, reduced = got, max(n - 1, 2), True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(ops), n * 2)
    return ops


def setup_roles(conn, n):
    names = ["memtx_model_%s" % "abcd"[i] for i in range(n)]
    for name in names:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                            (name,)).fetchone():
            conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(
                sql.Identifier(name)))
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", default="random")
    ap.add_argument("--traces", type=int, default=20)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--agents", type=int, default=3, choices=(2, 3, 4))
    ap.add_argument("--known", action="store_true",
                    help="also replay known/ (open extension bugs) and draw "
                    "the calls that reach them")
    ap.add_argument("--database", default="memtx_model",
                    help="made when missing; memtx is dropped and recreated "
                    "in it per trace")
    ap.add_argument("--seconds", type=float, default=0,
                    help="start no trace after this many seconds (0: no "
                    "limit)")
    ap.add_argument("--v1", action="store_true",
                    help="leave out §10 (expected heads, proposals, propose, "
                    "outcome)")
    ap.add_argument("--coverage", action="store_true",
                    help="print how often each outcome was exercised")
    ap.add_argument("--shrink-seconds", type=float, default=60)
    opts = ap.parse_args()
    seed = (random.SystemRandom().randrange(1 << 31) if opts.seed == "random"
            else int(opts.seed))
    print("seed %d (traces %d, steps %d, agents %d)" % (
        seed, opts.traces, opts.steps, opts.agents), flush=True)
    with psycopg.connect(autocommit=True) as boot:
        if not boot.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                            (opts.database,)).fetchone():
            boot.execute(sql.SQL("CREATE DATABASE {}").format(
                sql.Identifier(opts.database)))
        agents = setup_roles(boot, 4)
    admin = psycopg.connect(dbname=opts.database, autocommit=True)
    runner = Runner(admin, agents)
    passed = failed = 0
    started = time.time()

    files = sorted(glob.glob(os.path.join(HERE, "regressions", "*.json")))
    if opts.known:
        files += sorted(glob.glob(os.path.join(HERE, "known", "*.json")))
    for path in files:
        with open(path) as f:
            ops = json.load(f)["ops"]
        try:
            runner.run(ops)
            passed += 1
        except Mismatch as e:
            failed += 1
            print("FAILED %s: %s" % (os.path.relpath(path, HERE), e))

    for i in range(opts.traces):
        if opts.seconds and time.time() - started > opts.seconds:
            print("time budget spent after %d traces" % i)
            break
        rnd = random.Random("%d/%d" % (seed, i))
        gen = Generator(rnd, agents[:rnd.randint(2, opts.agents)], opts.known,
                        not opts.v1)
        ops = []
        runner.reset()
        try:
            for n in range(opts.steps):
                sym = gen.next(runner, n)
                ops.append(sym)
                runner.step(n, sym)
            passed += 1
        except Mismatch as e:
            failed += 1
            print("trace %d of seed %d: %s" % (i, seed, e), flush=True)
            small = shrink(runner, ops, failure_key(e), opts.shrink_seconds)
            try:
                runner.run(small)
                msg = "(the shrunk trace passes: not reproducible)"
            except Mismatch as e2:
                msg = str(e2)
            os.makedirs(os.path.join(HERE, "regressions"), exist_ok=True)
            path = os.path.join(HERE, "regressions",
                                "seed%d-trace%d.json" % (seed, i))
            with open(path, "w") as f:
                json.dump({"seed": seed, "trace": i, "mismatch": msg,
                           "ops": small}, f, indent=1)
            print("shrunk to %d calls (%s), written to %s:" % (
                len(small), msg, os.path.relpath(path, HERE)))
            for sym in small:
                print("  " + json.dumps(sym))
    elapsed = time.time() - started
    if opts.coverage:
        for k, v in sorted(runner.coverage.items()):
            print("  %7d  %s" % (v, k))
    print("%d calls in %.1f s: %.0f calls/s (state compared and "
          "check_invariants() run after each)" % (
              runner.calls, elapsed, runner.calls / max(elapsed, 1e-9)))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
