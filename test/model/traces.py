#!/usr/bin/python3
"""Model-based random traces against the real extension.

Each trace starts from a fresh extension (DROP EXTENSION memtx CASCADE;
CREATE EXTENSION memtx CASCADE in database memtx_model, made when missing,
on the server the PG* environment names, as a superuser), with the trace's
settings (thresholds, default authority: sometimes moved, so that a
threshold coded in the extension shows), registers sources (one at the
authority bypass exactly, one with claimants) and tools, and grants a
second namespace to some of the agents.  Then 2..4 agents (roles made here)
and the harness call every function of the contract in a random
interleaving: begin (at every tier, pinned levels, in either namespace, by
the harness for an agent or by the agent itself), stage, commit, abort,
read, revoke, resolve, gate, act (effect keys), propose, outcome,
expire_transactions, fence and unfence, erase, restore, read_as_of, recall,
lookup, lineage, the registries, verify_receipts, and changes behind the
API (in a rolled-back SQL transaction) that verify_receipts must find.
Arguments are drawn at the boundaries on purpose: confidence exactly at the
threshold, authority exactly at the bypass, validity ranges that start or
end at memtx.now(), observed_at equal to a rival's or to now, ids of the
other namespace, of tool actions, of erased and unreadable records, k at
0, 1, 1000 and 1001.  Besides the random calls, short scenarios are
interleaved that set up what random calls rarely meet: a head that moved
after the snapshot, a gate and an act with the caller's own staging in
flight, transcription after a read, a retry with changed content, an effect
key with other args, tool or agent, a fence in the middle of a turn, an
erasure below derived records and actions, a restore after a supersession
(and the erasure of the original it copied), tentative descendants and
views below a revocation, a head whose validity window touches, overlaps or
ends before the candidate's, action_safe records the caller's transaction
cannot see, and reads at the edges of a time-to-live window.  When the
server has pgvector (>= 0.8.0), each trace also creates memtx_vector and
registers one or two embedding models, and register_embedding_model, embed
and recall_similar are drawn too, with a scenario of their own
(vector_driver.py says how); without it the run says so and draws none.

After every call the result is compared with what the model (model.py,
written from SPEC.md alone) predicts, then the whole state: every record's
columns (state, reason, value, owner, permissions, validity, provenance,
head, proposal, restored_from, erasure), every transaction (status, agent,
tier, level, namespace, epoch, verifier calls), the edges, read sets, the
revocation registry, the rollback log, compensation obligations, the action
log, the history of every record, the receipts of every namespace in append
order, writer epochs and namespace members; then memtx.check_invariants()
must return no rows.  verify_receipts calls also recompute every chain here
(seq gapless from 1, prev_hash, hash = sha256(prev_hash || body::text)).

The background worker must not serve that database (it is not in
memtx.databases), or it would expire the 1 s leases on its own clock and
chain receipts on its own.

On a mismatch the trace is shrunk (delta debugging: drop chunks of calls
while the same kind of mismatch at the same kind of call remains), printed,
and written as JSON under regressions/.  Every file of regressions/ is
replayed first on each run; known/ holds traces of open extension bugs,
replayed only with --known.

    traces.py [--seed N] [--traces T] [--steps S] [--agents 2..4] [--known]
              [--seconds N] [--database NAME] [--coverage]
              [--shrink-seconds N] [--rules pending|all|RULE,...]
              [--router [--replay-all]]

--router (SPEC §20) runs every call through a router over two node
databases of the same server (see Router: databases NAME_router,
NAME_node0 and NAME_node1, made afresh and dropped at the end), with the
model's predictions unchanged: results, SQLSTATEs, the node number every
new id carries (model.Model.misplaced), the whole state read from the nodes
(each namespace's rows on its node, the store-wide tables on every node)
and check_invariants() through the router.  A trace's settings and clock
are set per database on the nodes, since no session setting travels; the
changes behind the API are made on the node.  Its traces are other traces
than those of the same seed without --router; the ones that fail are
written under regressions/router/, which it replays first (--replay-all:
regressions/*.json too); --known also replays known/router/.

--rules all models every v3 rule (model.PENDING_ENGINE_RULES lists the ones
the extension of this branch does not implement yet, which are left out by
default).  Prints the seed, the figures (calls, calls/s) and
"N passed, N failed" last, N counting traces (replayed files included).
"""

import argparse
import collections
import datetime
import glob
import hashlib
import json
import os
import random
import subprocess
import sys
import time

import psycopg
from psycopg import sql

import model as M
import vector_driver as V

HERE = os.path.dirname(os.path.abspath(__file__))
ORIGIN = datetime.datetime(2031, 1, 1, tzinfo=datetime.timezone.utc)
START = 600                     # the clock starts at ORIGIN + 600 min
LEASE = 30                      # minutes of wall clock: longer than any trace
# auditor is exactly at the authority bypass (0.9); vendor has claimants
SOURCES = {"sensor": 0.95, "auditor": 0.9, "crm": 0.7, "crm2": 0.7,
           "rumor": 0.3}
CLAIMED = ("vendor", 0.8)       # claimed by the first agent
TOOLS = {"refund": False, "note": True}     # "launch" stays unregistered
# few slots, one of them hot, so that rivals meet
ENTITIES = ("e1", "e1", "e1", "e2", "e3")
ATTRIBUTES = ("x", "x", "y")
# "1" and "1.0" differ (canonical text), '{"a":1}' and '{"a": 1}' do not;
# amber and cobalt are what recall finds
VALUES = ("1", "1.0", "2", '"x"', '"y"', '{"a": 1}', '{"a":1}', '"amber"',
          '"cobalt"')
KINDS = ("belief",) * 5 + ("summary", "profile", "index_entry", "shared_copy")
TIERS = ("low", "medium", "high", "external_action")
# '{"n":1}' is '{"n": 1}' (canonical); '{"n": 1.0}' is not
ARGS = ('{"n": 1}', '{"n":1}', '{"n": 2}', '{"n": 1.0}')
NS2 = "ns2"
QUERIES = ("amber", "cobalt", "amber or cobalt", "the", "")
PREFIXES = (None, None, "e1", "e", "", "%", "e_")
TAMPERS = ("hash", "prev_hash", "body", "column", "delete_last", "value")


def ts(minutes):
    if minutes is None:
        return None
    return (ORIGIN + datetime.timedelta(minutes=minutes)).isoformat()


def tsrange(valid):
    if valid is None:
        return None
    lo, hi = valid
    return "[%s,%s)" % (ts(lo) or "", ts(hi) or "")


def minutes(sql_expr):
    """SQL for a timestamptz as minutes after ORIGIN (NULL stays NULL)."""
    return ("round((extract(epoch FROM %s) - %d) / 60)"
            % (sql_expr, int(ORIGIN.timestamp())))


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
    if kind in V.KINDS:
        return V.shape(kind, rows)
    if kind in ("begin", "stage", "resolve", "restore", "fence"):
        return rows[0][0]
    if kind in ("unfence", "register_source", "set_role_tier",
                "grant_namespace", "revoke_namespace"):
        return None
    if kind == "propose":
        return tuple(rows[0])
    if kind in ("outcome", "commit", "read_as_of", "verify", "lineage"):
        return [tuple(r) for r in rows]
    if kind in ("abort", "revoke", "erase"):
        return sorted(tuple(r) for r in rows)
    if kind in ("read", "expire"):
        return sorted(r[0] for r in rows)
    if kind in ("recall", "lookup", "search"):
        return [r[0] for r in rows]
    if kind == "gate":
        a, r, b = rows[0]
        return (a, r, sorted(b or []))
    if kind == "act":
        a, r, i, b = rows[0][:4]
        return (a, r, i, sorted(b or [])) + tuple(rows[0][4:])
    raise ValueError(kind)


class Mismatch(Exception):
    def __init__(self, step, kind, detail):
        super().__init__("step %d (%s): %s" % (step, kind, detail))
        self.step, self.kind, self.detail = step, kind, detail


# The whole state in one query (as the superuser): what compare_state holds
# against the model.
STATE_SQL = """
SELECT json_build_object(
  'records', (SELECT coalesce(json_agg(json_build_array(
        r.id, r.tx_id, r.namespace, r.entity, r.attribute, r.value::text,
        r.kind, r.state, r.reason, r.source, r.authority, r.confidence,
        r.owner, ARRAY(SELECT unnest(r.readers) ORDER BY 1),
        ARRAY(SELECT unnest(r.writers) ORDER BY 1), r.scope,
        {lo}, {hi}, lower_inf(r.valid), upper_inf(r.valid), {obs},
        r.expected_head, r.proposal, r.restored_from, r.erased_at IS NOT NULL,
        EXISTS (SELECT 1 FROM memtx.record_salts s WHERE s.record_id = r.id))
        ORDER BY r.id), '[]') FROM memtx.records r),
  'txs', (SELECT coalesce(json_agg(json_build_array(t.id, t.status, t.agent,
        t.tier, t.isolation, t.namespace, t.epoch, t.verifier_calls)
        ORDER BY t.id), '[]') FROM memtx.transactions t),
  'edges', (SELECT coalesce(json_agg(json_build_array(e.child, e.parent)
        ORDER BY e.child, e.parent), '[]') FROM memtx.edges e),
  'registry', (SELECT coalesce(json_agg(g.record_id ORDER BY g.record_id),
        '[]') FROM memtx.revocation_registry g),
  'read_set', (SELECT coalesce(json_agg(json_build_array(s.tx_id, s.record_id)
        ORDER BY s.tx_id, s.record_id), '[]') FROM memtx.read_set s),
  'rollback', (SELECT coalesce(json_agg(json_build_array(l.root_id,
        l.record_id, l.kind, l.action, l.reason, l.note)
        ORDER BY l.root_id, l.record_id, l.action), '[]')
        FROM memtx.rollback_log l),
  'comp', (SELECT coalesce(json_agg(json_build_array(c.root_id, c.action_id,
        c.tool) ORDER BY c.root_id, c.action_id), '[]')
        FROM memtx.compensations c),
  'actions', (SELECT coalesce(json_agg(json_build_array(a.tx_id, a.tool,
        a.allowed, a.reason, a.action_id, a.effect_key, a.args::text)
        ORDER BY a.id), '[]') FROM memtx.action_log a),
  'history', (SELECT coalesce(json_agg(json_build_array(h.record_id, h.state,
        h.reason, {at}) ORDER BY h.record_id, h.pos), '[]')
        FROM memtx.history h),
  'receipts', (SELECT coalesce(json_agg(json_build_array(c.namespace, c.kind,
        c.subject, c.disposition, c.reason) ORDER BY c.appended), '[]')
        FROM memtx.receipts c),
  'epochs', (SELECT coalesce(json_agg(json_build_array(w.role_name,
        w.epoch, w.unfenced_at IS NULL) ORDER BY w.role_name, w.epoch), '[]')
        FROM memtx.writer_epochs w),
  'members', (SELECT coalesce(json_agg(json_build_array(m.namespace,
        m.role_name) ORDER BY 1), '[]') FROM memtx.namespace_members m),
  'log_ids', (SELECT coalesce(json_agg(json_build_array(l.id, l.ref)), '[]')
        FROM (SELECT id, tx_id FROM memtx.action_log
              UNION ALL SELECT id, root_id FROM memtx.rollback_log
              UNION ALL SELECT id, root_id FROM memtx.compensations)
             AS l (id, ref)))
""".format(lo=minutes("lower(r.valid)"), hi=minutes("upper(r.valid)"),
           obs=minutes("r.observed_at"), at=minutes("h.at"))


class Router:
    """§20: a memtx router (database DB_router, extension memtx_router) over
    two node databases of the same server (DB_node0, DB_node1), built as
    test/router/make-router.sh builds one.  The trace's namespaces land on
    different nodes: memtx.node_of('default') = 933818049 is odd (node 1),
    node_of('ns2') = 1582970790 is even (node 0); the constructor checks it.

    Every memtx call of a trace goes through the router, as a client's would:
    the harness's (registries, grants, fences, begins for an agent, expiry,
    check_invariants) as the superuser, the agents' as themselves.  PL/Proxy
    logs in to the node as the calling role (current_user), so the agents
    are LOGIN roles with a password, which a user mapping of the router's
    cluster memtx_nodes gives PL/Proxy; a superuser's router session may SET
    ROLE to an agent (README, "What is different through a router").  No
    session setting travels with a routed call, so the trace's settings and
    its clock are set per database on every node (ALTER DATABASE ... SET),
    and the router session is opened again before the next call (PL/Proxy's
    node sessions start with them).  The state is read from the nodes; the
    changes behind the API (Runner.tamper) are made on the node directly."""

    PASSWORD = "memtx-model"            # the agents' (roles of a test cluster)
    NODES = 2

    def __init__(self, database, agents):
        self.database = database + "_router"
        self.node_dbs = ["%s_node%d" % (database, i)
                         for i in range(self.NODES)]
        for ns, node in ((M.DEFAULT_NS, 1), (NS2, 0)):
            if M.node_of(ns) % self.NODES != node:
                sys.exit("namespace %s is not on node %d" % (ns, node))
        self.agents = agents
        make = os.path.join(HERE, "..", "router", "make-router.sh")
        subprocess.run(["bash", make, self.database] + self.node_dbs,
                       check=True)
        with psycopg.connect(dbname=self.database, autocommit=True) as c:
            for role in agents:
                role = sql.Identifier(role)
                c.execute(sql.SQL("ALTER ROLE {} LOGIN PASSWORD {}").format(
                    role, sql.Literal(self.PASSWORD)))
                c.execute(sql.SQL("DROP USER MAPPING IF EXISTS FOR {}"
                                  " SERVER memtx_nodes").format(role))
                c.execute(sql.SQL("CREATE USER MAPPING FOR {} SERVER"
                                  " memtx_nodes OPTIONS (password {})").format(
                                      role, sql.Literal(self.PASSWORD)))
            bad = c.execute("SELECT node, problem"
                            " FROM memtx_router.check_nodes()").fetchall()
            if bad:
                sys.exit("the router and its nodes differ: %r" % (bad,))
        self.nodes = []

    def connect(self):
        return psycopg.connect(dbname=self.database, autocommit=True)

    def fresh_nodes(self):
        """A fresh store on every node (memtx.set_node(i) on node i), no
        database setting left, and new sessions on them (memtx's plans kept
        in a session would name the dropped objects)."""
        for c in self.nodes:
            c.close()
        self.nodes = []
        for i, db in enumerate(self.node_dbs):
            c = psycopg.connect(dbname=db, autocommit=True)
            c.execute(sql.SQL("ALTER DATABASE {} RESET ALL").format(
                sql.Identifier(db)))
            c.execute("SET client_min_messages = warning")
            c.execute("DROP EXTENSION IF EXISTS memtx CASCADE")
            c.execute("CREATE EXTENSION memtx CASCADE")
            c.execute("SELECT memtx.set_node(%s)", (i,))
            c.close()
            self.nodes.append(psycopg.connect(dbname=db, autocommit=True))

    def set_database_setting(self, name, value):
        for db in self.node_dbs:
            self.nodes[0].execute(sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                sql.Identifier(db), sql.Identifier("memtx", name),
                sql.Literal(str(value))))

    def drop(self):
        for c in self.nodes:
            c.close()
        with psycopg.connect(dbname="postgres", autocommit=True) as c:
            for role in self.agents:
                c.execute(sql.SQL("ALTER ROLE {} NOLOGIN PASSWORD NULL").format(
                    sql.Identifier(role)))
            for db in [self.database] + self.node_dbs:
                c.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                          .format(sql.Identifier(db)))


class Runner:
    """Runs one trace (a list of symbolic calls) against a fresh store."""

    def __init__(self, admin, agents, pending=M.PENDING_ENGINE_RULES,
                 router=None):
        self.admin = admin
        self.conn = None
        # §20: with a Router every call goes through it (see Router)
        self.router = router
        self.stale = False      # a node setting changed since self.conn began
        # the enumeration's savepoints cannot undo a read (§16: reads are
        # durable), so it does not compare read sets (see enumerate.sql)
        self.compare_read_sets = True
        self.agents = agents
        self.pending = pending
        self.calls = 0
        self.coverage = collections.Counter()
        # §19: memtx_vector here (the router batch draws no §19 call: its
        # nodes are made by make-router.sh without memtx_vector)
        self.vector = router is None and V.available(admin)

    def reset(self, config=None):
        # a new session per trace: the extension's plans cached in a session
        # would name the dropped objects
        config = config or {}
        if self.conn is not None:
            self.conn.close()
        if self.router:
            self.router.fresh_nodes()
            self.conn = c = self.router.connect()
        else:
            self.admin.execute("DROP EXTENSION IF EXISTS memtx CASCADE")
            self.admin.execute("CREATE EXTENSION memtx CASCADE")
            self.conn = c = psycopg.connect(dbname=self.admin.info.dbname,
                                            autocommit=True)
        self.role = None
        self.stale = False
        settings = {"confidence_threshold": M.CONFIDENCE_THRESHOLD,
                    "authority_bypass": M.AUTHORITY_BYPASS,
                    "default_authority": M.DEFAULT_AUTHORITY}
        for k in settings:
            if config.get(k) is not None:
                settings[k] = config[k]
                self.setting(k, config[k])
        if config.get("flow_control"):
            self.setting("flow_control", config["flow_control"])
            settings["flow_control"] = config["flow_control"]
        sources = dict(SOURCES)
        for name, auth in SOURCES.items():
            c.execute("SELECT memtx.register_source(%s, %s)", (name, auth))
        if len(self.agents) > 0:
            c.execute("SELECT memtx.register_source(%s, %s, %s)",
                      (CLAIMED[0], CLAIMED[1], [self.agents[0]]))
            sources[CLAIMED[0]] = (CLAIMED[1], frozenset([self.agents[0]]))
        for name, rev in TOOLS.items():
            c.execute("SELECT memtx.register_tool(%s, %s, %s)",
                      (name, rev, "undo_" + name if rev else None))
        self.setting("lease_timeout", "%dmin" % LEASE)
        self.setting("logical_now", ts(START))
        self.model = M.Model(sources, TOOLS, START, pending=self.pending,
                             harness_role=self.admin.info.user,
                             nodes=len(self.router.nodes) if self.router
                             else 1, **settings)
        for role in config.get("ns2_members", ()):
            c.execute("SELECT memtx.grant_namespace(%s, %s)", (NS2, role))
            self.model.members.setdefault(NS2, set()).add(role)
        if self.vector:
            V.reset(self, config)
        self.ids = {}           # label -> id
        self.labels = {}        # ("tx" | "rec", id) -> label

    def setting(self, name, value):
        """A memtx setting (a superuser's) for the calls that follow: SET in
        the session on one server; through the router (§20: no session
        setting travels) per database on every node, in force from the next
        router session on (PL/Proxy's node sessions start with it)."""
        if self.router:
            self.router.set_database_setting(name, value)
            self.stale = True
            return
        self.as_role("harness")
        self.conn.execute(sql.SQL("SET memtx.{} = {}").format(
            sql.Identifier(name), sql.Literal(str(value))))

    def as_role(self, caller):
        if self.stale:
            self.conn.close()
            self.conn = self.router.connect()
            self.stale = False
            self.role = None
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
        kind = op["op"]
        if kind == "wait":
            time.sleep(1.1)
            return ("ok", None)
        if kind == "tick":
            self.setting("logical_now", ts(self.model.now + op["minutes"]))
            return ("ok", None)
        self.calls += 1
        if kind == "tamper":
            return self.tamper(op)
        if not op.get("short_lease"):
            self.as_role(op["caller"])
            return self.call(op)
        # the shortest lease in force for this call (see Generator.next);
        # the setting is a superuser's, and stays in force under SET ROLE
        self.setting("lease_timeout", "1s")
        try:
            self.as_role(op["caller"])
            return self.call(op)
        finally:
            self.setting("lease_timeout", "%dmin" % LEASE)

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
        if kind == "verify":
            self.check_chains(op)
        return ("ok", v)

    def statement(self, op):
        """The SQL of one call and its parameters."""
        kind = op["op"]
        rule = self.model.rule
        if kind in V.KINDS:
            return V.statement(op, ts)
        if kind == "begin":
            if op["caller"] == "harness" or op.get("tier") or op.get("agent"):
                return ("SELECT memtx.begin(tier => %s, agent => %s,"
                        " namespace => %s, isolation => %s)",
                        (op.get("tier"), op.get("agent"),
                         op.get("namespace") or M.DEFAULT_NS,
                         op.get("isolation")))
            return ("SELECT memtx.begin(namespace => %s)",
                    (op.get("namespace") or M.DEFAULT_NS,))
        if kind == "stage":
            return ("SELECT memtx.stage(tx => %s, " + CONTENT + ")",
                    (op["tx"],) + content_args(op))
        if kind == "propose":
            return ("SELECT tx_id, record_id, state::text, reason"
                    " FROM memtx.propose(" + CONTENT + ", namespace => %s)",
                    content_args(op) + (op.get("namespace") or M.DEFAULT_NS,))
        if kind == "outcome":
            if rule("§17 outcome agent") and op.get("agent"):
                return ("SELECT record_id, tx_id, state::text, reason,"
                        " tx_status FROM memtx.outcome(%s, %s, %s)",
                        (op["proposal"], op.get("namespace") or M.DEFAULT_NS,
                         op["agent"]))
            return ("SELECT record_id, tx_id, state::text, reason, tx_status"
                    " FROM memtx.outcome(%s, %s)",
                    (op["proposal"], op.get("namespace") or M.DEFAULT_NS))
        if kind == "commit":
            return ("SELECT record_id, state::text, reason FROM memtx.commit(%s)",
                    (op["tx"],))
        if kind == "abort":
            return ("SELECT record_id, action, reason FROM memtx.abort(%s)",
                    (op["tx"],))
        if kind == "revoke":
            return ("SELECT record_id, action, reason FROM memtx.revoke(%s, %s)",
                    (op["record"], op.get("note", "n")))
        if kind == "erase":
            return ("SELECT record_id, action, reason FROM memtx.erase(%s, %s)",
                    (op["record"], op.get("note")))
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
            return ("SELECT allowed, reason, action_id, blockers%s FROM memtx.act("
                    "tx => %%s, tool => %%s, args => %%s::jsonb,"
                    " derived_from => %%s::bigint[], effect_key => %%s)"
                    % (", repeated" if rule("§17 act repeated") else ""),
                    (op["tx"], op["tool"], op["args"], op["inputs"],
                     op["effect_key"]))
        if kind == "fence":
            return ("SELECT memtx.fence(%s)", (op["role"],))
        if kind == "unfence":
            return ("SELECT memtx.unfence(%s)", (op["role"],))
        if kind == "register_source":
            return ("SELECT memtx.register_source(%s, %s, %s::text[])",
                    (op["name"], op["authority"], op.get("claimants")))
        if kind == "set_role_tier":
            return ("SELECT memtx.set_role_tier(%s, %s::memtx.risk_tier)",
                    (op["role"], op["tier"]))
        if kind in ("grant_namespace", "revoke_namespace"):
            return ("SELECT memtx.%s(%%s, %%s)" % kind,
                    (op["namespace"], op["role"]))
        if kind == "read_as_of":
            return ("SELECT id, state::text, reason FROM memtx.read_as_of("
                    "at => %s, entity => %s, attribute => %s, namespace => %s,"
                    " valid_at => %s)",
                    (ts(op["at"]), op["entity"], op["attribute"],
                     op.get("namespace") or M.DEFAULT_NS,
                     ts(op.get("valid_at"))))
        if kind == "restore":
            return ("SELECT memtx.restore(%s, %s, %s, %s, %s)",
                    (op["tx"], op["entity"], op["attribute"], ts(op["at"]),
                     ts(op.get("valid_at"))))
        if kind == "recall":
            if op.get("valid_at") is not None:
                return ("SELECT record_id FROM memtx.recall(%s, %s, %s, %s,"
                        " valid_at => %s)",
                        (op["tx"], op["query"], op["k"], op["entity_prefix"],
                         ts(op["valid_at"])))
            return ("SELECT record_id FROM memtx.recall(%s, %s, %s, %s)",
                    (op["tx"], op["query"], op["k"], op["entity_prefix"]))
        if kind == "search":
            return ("SELECT record_id FROM memtx.search(%s, %s, %s, %s, %s)",
                    (op["query"], op["k"], op["entity_prefix"],
                     op.get("namespace") or M.DEFAULT_NS,
                     ts(op.get("valid_at"))))
        if kind == "lookup":
            if op.get("valid_at") is not None:
                return ("SELECT id FROM memtx.lookup(%s, %s, %s, valid_at => %s)",
                        (op["entity"], op["attribute"],
                         op.get("namespace") or M.DEFAULT_NS,
                         ts(op["valid_at"])))
            return ("SELECT id FROM memtx.lookup(%s, %s, %s)",
                    (op["entity"], op["attribute"],
                     op.get("namespace") or M.DEFAULT_NS))
        if kind == "verify":
            return ("SELECT namespace, checked, first_bad_seq"
                    " FROM memtx.verify_receipts(%s)", (op["namespace"],))
        if kind == "lineage":
            return ("SELECT record_id, depth%s FROM memtx.lineage(%%s, %%s)"
                    % (", via" if rule("§17 lineage via") else ""),
                    (op["record"], op["direction"]))
        raise ValueError(kind)

    def tamper(self, op):
        """§11: a change behind the API (triggers off, as a superuser could),
        then verify_receipts, all in a SQL transaction rolled back.  Through
        the router (§20: a routed call commits on its node on its own, and
        nobody reaches the tables but on a node) all of it runs on the
        namespace's node, directly."""
        ns = op["namespace"]
        c = self.store(ns)
        seq = op["index"] + 1
        change = {
            "hash": ("UPDATE memtx.receipts SET hash = sha256(hash)"
                     " WHERE namespace = %s AND seq = %s", (ns, seq)),
            "prev_hash": ("UPDATE memtx.receipts SET prev_hash = sha256(prev_hash)"
                          " WHERE namespace = %s AND seq = %s", (ns, seq)),
            "body": ("UPDATE memtx.receipts SET body = body || '{\"x\": 1}'"
                     " WHERE namespace = %s AND seq = %s", (ns, seq)),
            "column": ("UPDATE memtx.receipts SET reason = coalesce(reason, '') || 'x'"
                       " WHERE namespace = %s AND seq = %s", (ns, seq)),
            "delete_last": ("DELETE FROM memtx.receipts WHERE namespace = %s"
                            " AND seq = (SELECT max(seq) FROM memtx.receipts"
                            " WHERE namespace = %s)", (ns, ns)),
            "value": ("UPDATE memtx.records SET value = '\"tampered\"'"
                      " WHERE id = %s", (op.get("record"),)),
            "state": ("UPDATE memtx.records SET state = CASE state"
                      " WHEN 'revoked' THEN 'committed' ELSE 'revoked' END"
                      "::memtx.state WHERE id = %s", (op.get("record"),)),
            "erased_at": ("UPDATE memtx.records SET erased_at = now(),"
                          " value = '\"tampered\"' WHERE id = %s",
                          (op.get("record"),)),
        }[op["kind"]]
        try:
            with c.transaction(force_rollback=True):
                c.execute("SELECT memtx.chain_receipts(%s)", (ns,))
                c.execute("SET LOCAL session_replication_role = replica")
                c.execute(*change)
                c.execute("SET LOCAL session_replication_role = origin")
                rows = c.execute("SELECT first_bad_seq FROM"
                                 " memtx.verify_receipts(%s)", (ns,)).fetchall()
        except psycopg.Error as e:
            if c.closed or e.sqlstate is None:
                raise
            if e.sqlstate == "23P01":
                # the changed value breaks the single-truth constraint:
                # this change cannot be made even behind the API
                return ("skip", None)
            return ("err", e.sqlstate)
        return ("ok", rows[0][0] if rows else None)

    def check_chains(self, op):
        """§11, recomputed here: seq gapless from 1, each prev_hash the hash
        before (32 zero bytes first), hash = sha256(prev_hash ||
        body::text), and no value in any body."""
        ns = op["namespace"]
        c = self.store(ns)
        rows = c.execute("SELECT seq, prev_hash, hash, body::text"
                         " FROM memtx.receipts WHERE namespace = %s"
                         " ORDER BY seq", (ns,)).fetchall()
        prev = bytes(32)
        for i, (seq, ph, h, body) in enumerate(rows):
            if seq != i + 1:
                raise Mismatch(self.n, "verify", "receipt seq %s at place %d"
                               % (seq, i + 1))
            if ph is None or bytes(ph) != prev:
                raise Mismatch(self.n, "verify", "receipt %d: prev_hash is "
                               "not the hash before" % seq)
            want = hashlib.sha256(prev + body.encode()).digest()
            if h is None or bytes(h) != want:
                raise Mismatch(self.n, "verify", "receipt %d: hash is not "
                               "sha256(prev_hash || body)" % seq)
            for r in self.model.records.values():
                if r.value and r.value.startswith('"') and len(r.value) > 4 \
                        and r.value in body:
                    raise Mismatch(self.n, "verify", "receipt %d holds the "
                                   "value of record %d" % (seq, r.id))
            prev = want

    def store(self, ns):
        """A superuser's session on the database that holds namespace ns's
        tables: the node's, through the router (which holds no tables)."""
        if self.router:
            return self.router.nodes[self.model.node(ns)]
        self.as_role("harness")
        return self.conn

    def new_id(self, op, got):
        if got[0] != "ok":
            return None
        if op["op"] in ("begin", "stage", "restore"):
            return got[1]
        if op["op"] == "propose":
            return got[1][:2]
        if op["op"] == "act" and got[1][0] and got[1][2] is not None:
            return got[1][2]
        return None

    def step(self, n, sym):
        """Runs symbolic call n; returns the resolved op, or None (skipped)."""
        self.n = n
        op = self.resolve(sym)
        if op is None:
            return None
        got = self.execute(op)
        if got[0] == "skip":
            return None
        nid = self.new_id(op, got)
        for i, node in self.model.misplaced(op, nid):
            raise Mismatch(n, op["op"], "new id %d carries node %d, not %d "
                           "(SPEC §20)" % (i, M.id_node(i), node))
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
        V.after_call(self, op, got)
        self.compare_state(n, op)
        self.op = op
        self.tally(op["op"], got)
        return op

    def tally(self, kind, got):
        """Counts what the calls exercised (printed as coverage)."""
        cov = self.coverage
        if kind in V.KINDS:
            V.tally(cov, kind, self.op, got)
        elif got[0] == "err":
            cov["%s error %s" % (kind, got[1])] += 1
        elif kind == "commit":
            for _, state, reason in got[1]:
                cov["commit %s %s" % (state, reason or "")] += 1
        elif kind in ("gate", "act"):
            cov["%s %s %s" % (kind, "allowed" if got[1][0] else "blocked",
                              got[1][1] or "")] += 1
        elif kind in ("abort", "revoke", "erase"):
            for _, action, reason in got[1]:
                cov["%s row %s %s" % (kind, action, reason)] += 1
        elif kind == "expire":
            cov["expire %d" % len(got[1])] += 1
        elif kind in ("resolve", "propose"):
            cov["%s %s" % (kind, got[1] if kind == "resolve"
                           else "%s %s" % got[1][2:4])] += 1
        elif kind == "tamper":
            cov["tamper found at %s" % ("a seq" if got[1] else "none")] += 1
        elif kind in ("recall", "lookup", "search", "read_as_of", "read"):
            cov["%s %s" % (kind, "rows" if got[1] else "empty")] += 1
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
        if kind in ("abort", "revoke", "erase"):
            want = sorted(want, key=lambda r: (r[0], r[1]))
        if not M.matches(want, got[1]):
            raise Mismatch(n, kind, "expected %r, got %r" % (want, got[1]))

    def compare_state(self, n, op, invariants=True):
        self.as_role("harness")
        m = self.model
        # §20: through the router the state is the nodes' (node 0's rows
        # first), each namespace's on its node, the store-wide tables on
        # every node
        nodes = self.router.nodes if self.router else [self.conn]
        states = [c.execute(STATE_SQL).fetchone()[0] for c in nodes]
        s = {k: [x for st in states for x in st[k]] for k in states[0]}

        def bad(what, got, want):
            raise Mismatch(n, op["op"], "%s is %r, model: %r" % (what, got, want))

        for i, st in enumerate(states):
            # §20: a log row carries the node of the transaction or record
            # it is about (and on one server, node 0)
            for lid, ref in st["log_ids"]:
                got = (M.id_node(lid), None if ref is None else M.id_node(ref))
                if got != (i, None if ref is None else i):
                    bad("the nodes carried by log row %d and by %s, the id it "
                        "is about, on node %d," % (lid, ref, i), got, (i, i))

        ids = [r[0] for r in s["records"]]
        if ids != sorted(m.records):
            bad("records", ids, sorted(m.records))
        for row in s["records"]:
            (rid, tx, ns, entity, attribute, value, kind, state, reason, source,
             authority, confidence, owner, readers, writers, scope, lo, hi,
             lo_inf, hi_inf, obs, head, proposal, restored, erased,
             salt) = row
            r = m.records[rid]
            if state != r.state or not M.matches(r.reason, reason):
                bad("record %d state" % rid, (state, reason), (r.state, r.reason))
            got = (tx, ns, entity, attribute, value, kind, owner, scope,
                   restored, erased)
            want = (r.tx, r.ns, r.entity, r.attribute, r.value, r.kind,
                    r.owner, r.scope, r.restored_from, r.erased)
            if got != want:
                bad("record %d" % rid, got, want)
            if erased and salt:
                bad("record %d (erased) salt", salt, False)
            if kind == "tool_action":
                continue
            got = (source, authority, confidence, sorted(readers),
                   sorted(writers), None if lo_inf else lo,
                   None if hi_inf else hi, obs, head, proposal)
            want = (r.source, r.authority, r.confidence, sorted(r.readers),
                    sorted(r.writers), r.valid[0], r.valid[1], r.observed_at,
                    r.expected_head, r.proposal)
            if got != want:
                bad("record %d content" % rid, got, want)
        txs = [tuple(t) for t in s["txs"]]
        want = [(t.id, t.status, t.agent, t.tier, t.level, t.ns, t.epoch,
                 t.verifier_calls) for t in sorted(m.txs.values(),
                                                   key=lambda t: t.id)]
        if txs != want:
            bad("transactions", txs, want)
        edges = sorted(tuple(e) for e in s["edges"])
        want = sorted((c, p) for c, ps in m.edges.items() for p in ps)
        if edges != want:
            bad("edges", edges, want)
        if set(s["registry"]) != m.registry:
            bad("registry", sorted(s["registry"]), sorted(m.registry))
        rs = sorted(tuple(x) for x in s["read_set"])
        want = sorted((t.id, r) for t in m.txs.values() for r in t.read_set)
        if rs != want and self.compare_read_sets:
            bad("read sets", rs, want)
        rb = sorted(tuple(x) for x in s["rollback"])
        want = sorted(m.rollback, key=lambda x: tuple(str(v) for v in x))
        if sorted(rb, key=lambda x: tuple(str(v) for v in x)) != want:
            bad("rollback log", rb, want)
        comp = sorted(tuple(x) for x in s["comp"])
        if comp != sorted(m.compensations):
            bad("compensations", comp, sorted(m.compensations))
        acts = [tuple(a) for a in s["actions"]]
        # in the order of their ids: one order per node, node by node
        want = sorted(m.action_log, key=lambda a: M.id_node(a[0]))
        if acts != want:
            bad("action log", acts, want)
        hist = collections.defaultdict(list)
        for rid, state, reason, at in s["history"]:
            hist[rid].append((state, reason, at))
        for rid in m.records:
            want = m.history.get(rid, [])
            if not M.matches(want, hist.get(rid, [])):
                bad("history of record %d" % rid, hist.get(rid, []), want)
        rc = collections.defaultdict(list)
        for ns, kind, subject, disp, reason in s["receipts"]:
            rc[ns].append((kind, subject, disp, reason))
        want = {k: v for k, v in m.receipts.items() if v}
        if dict(rc) != want:
            bad("receipts", dict(rc), want)
        # store-wide: every node holds the whole of it
        want_epochs = {r: (e, r in m.fenced) for r, e in m.epochs.items()}
        want_members = sorted((ns, r) for ns, rs in m.members.items()
                              for r in rs)
        for i, st in enumerate(states):
            where = " on node %d" % i if self.router else ""
            ep = {role: (epoch, fenced) for role, epoch, fenced in st["epochs"]}
            if ep != want_epochs:
                bad("writer epochs" + where, ep, want_epochs)
            mem = sorted(tuple(x) for x in st["members"])
            if mem != want_members:
                bad("namespace members" + where, mem, want_members)
        if self.vector:
            V.compare_state(self, n, op, bad)
        if invariants:
            self.check_invariants(n, op)

    def check_invariants(self, n, op):
        bad = self.conn.execute("SELECT invariant, record_id, detail "
                                "FROM memtx.check_invariants()").fetchall()
        if bad:
            raise Mismatch(n, op["op"], "check_invariants: %r" % (bad,))

    def run(self, ops):
        """Runs a symbolic trace from a fresh store; raises Mismatch."""
        config = ops[0] if ops and ops[0].get("op") == "config" else {}
        self.reset(config)
        self.done = [config] if config else []
        for sym in ops:
            if sym.get("op") == "config" or self.resolve(sym) is None:
                continue
            self.done.append(sym)
            self.step(len(self.done) - 1, sym)


class Generator:
    """Draws the next call from the model's state: random calls, with short
    scenarios interleaved (see the module's docstring)."""

    def __init__(self, rnd, agents, known, rules):
        self.rnd = rnd
        self.agents = agents
        # --known draws the calls that reach the open bugs of known/ (none
        # open now)
        self.known = known
        self.rule = rules
        self.bound = {}         # proposal id -> the call that bound it
        self.queue = []         # calls due next: tx labels to stage in, "wait"
        self.scenarios = []     # running scenarios (generators of calls)
        self.n = 0
        self.keys = {}          # effect key -> the call that used it
        self.vector = False     # §19 calls drawn (main sets it)

    def config(self):
        """The trace's settings: moved thresholds now and then, so that a
        value coded in the extension instead of its setting shows."""
        rnd = self.rnd
        cfg = {"op": "config",
               "ns2_members": self.agents[:max(1, len(self.agents) - 1)]}
        p = rnd.random()
        if p < 0.15:
            cfg["confidence_threshold"] = 0.75
        elif p < 0.25:
            cfg["authority_bypass"] = 0.7
        if rnd.random() < 0.15:
            cfg["default_authority"] = 0.9
        if self.vector:
            V.config(self, cfg)             # §19: the trace's models
        return cfg

    def some(self, items, k):
        items = list(items)
        return self.rnd.sample(items, min(k, len(items)))

    def label(self, call):
        """Labels a call that creates something."""
        prefix = {"begin": "t", "stage": "r", "propose": "r", "restore": "r",
                  "act": "a"}.get(call["op"])
        if prefix and "label" not in call:
            call["label"] = "%s%d" % (prefix, self.n)
        return call

    def next(self, runner, n):
        self.n = n
        self.runner = runner
        self.m = runner.model
        self.lab = runner.labels
        self.ids = runner.ids
        while self.queue:
            call = self.queue.pop(0)
            if call == "wait":
                return {"op": "wait"}
            t = self.m.txs.get(runner.ids.get(call))
            if t is not None and t.status == "open":
                return self.label(self.content(dict(
                    op="stage", caller=t.agent, tx=call, short_lease=True),
                    t.agent, t.ns))
        rnd = self.rnd
        if len(self.scenarios) < 2 and rnd.random() < 0.06:
            name = rnd.choice(SCENARIOS + (("vector",) * 2 if self.vector
                                           else ()))
            self.scenarios.append(getattr(self, "scenario_" + name)())
        while self.scenarios and rnd.random() < 0.7:
            sc = rnd.choice(self.scenarios)
            try:
                call = next(sc)
            except StopIteration:
                self.scenarios.remove(sc)
                continue
            if call is not None:
                return self.label(call)
        return self.label(self.random_call())

    # ------------------------------------------------------------ helpers

    def tx_label(self, t):
        return self.lab["tx", t.id]

    def rec_label(self, r):
        return self.lab["rec", r.id]

    def open_txs(self, agent=None, ns=None):
        return [t for t in self.m.txs.values() if t.status == "open"
                and not t.expired and not self.m.old_epoch(t)
                and (agent is None or t.agent == agent)
                and (ns is None or t.ns == ns)]

    def recs(self, ns=None):
        return [r for r in self.m.records.values()
                if ns is None or r.ns == ns]

    def namespace(self):
        return NS2 if self.rnd.random() < 0.2 else M.DEFAULT_NS

    def member_agents(self, ns):
        return [a for a in self.agents if self.m.member(a, ns)]

    def some_time(self):
        """A past instant: exactly one at which something changed, or
        between."""
        times = sorted({h[2] for hs in self.m.history.values() for h in hs})
        if times and self.rnd.random() < 0.7:
            t = self.rnd.choice(times)
            return t + self.rnd.choice((0, 0, -1, 1))
        return self.m.now - self.rnd.choice((0, 7, 30, 100))

    def begin(self, agent=None, ns=None, tier=None, isolation=None,
              by_agent=False):
        rnd = self.rnd
        ns = ns or self.namespace()
        if agent is None:
            members = self.member_agents(ns)
            agent = rnd.choice(members if members and rnd.random() < 0.95
                               else self.agents)
        if by_agent:
            return {"op": "begin", "caller": agent, "namespace": ns,
                    "short_lease": False}
        return {"op": "begin", "caller": "harness", "agent": agent,
                "tier": tier or rnd.choice(TIERS), "namespace": ns,
                "short_lease": False, "isolation": isolation}

    def valid(self):
        """A validity range, often with an edge at now (judged at commit)."""
        rnd, now = self.rnd, self.m.now
        p = rnd.random()
        if p < 0.55:
            return None
        if p < 0.75:
            # an edge at memtx.now(): [now, ...) contains now, [..., now) not
            return rnd.choice(([now, now + 60], [now - 60, now], [now, None],
                               [None, now], [now + 1, None], [None, now + 1]))
        lo = rnd.choice((None, now - 300, now - 60, now + 30))
        hi = rnd.choice((None, 60, 240))
        hi = None if hi is None else (lo if lo is not None else now) + hi
        if rnd.random() < 0.03:
            return [now, now]               # empty: refused
        return [lo, hi]

    def observed(self):
        """observed_at from a few absolute instants, so that rivals tie, or
        now exactly, or (rarely) in the future."""
        rnd, now = self.rnd, self.m.now
        p = rnd.random()
        if p < 0.5:
            return None
        if p < 0.97:
            return min(now, rnd.choice((START - 200, START - 50, START, now)))
        return now + 1

    def confidence(self):
        cfg_threshold = self.m.threshold
        return self.rnd.choice((1.0, 1.0, 0.9, 0.6, 0.6, 0.59, 0.3, 0.0,
                                cfg_threshold, cfg_threshold - 0.01, 1.5))

    def source(self):
        return self.rnd.choice((None, "sensor", "auditor", "auditor", "crm",
                                "crm2", "crm", "crm2", "rumor", "blog",
                                CLAIMED[0]))

    def content(self, call, agent, ns, parents=None, slot=None):
        """A stage's (or a propose's) record content, a retry's sometimes."""
        rnd, m, lab = self.rnd, self.m, self.lab
        if self.bound and rnd.random() < 0.12:
            # §10: the same proposal again, as it was (a retry) or changed
            pid = rnd.choice(sorted(self.bound))
            old = self.bound[pid]
            keep = {k: v for k, v in old.items()
                    if k not in ("op", "label", "caller", "tx", "short_lease",
                                 "namespace", "caller_agent")}
            if rnd.random() < 0.4:
                self.change(keep)
            if (not self.rule("§17 proposal ids per agent")
                    and old.get("caller_agent") != agent):
                # another agent's retry: pending
                pass
            else:
                return dict(call, **keep)
        recs = self.recs(ns)
        readable = [r for r in recs if m.readable(r, agent)]
        p = rnd.random()
        pool = (readable if p < 0.9 else self.recs() if p < 0.95
                else self.recs(NS2 if ns == M.DEFAULT_NS else M.DEFAULT_NS))
        entity, attribute = slot or (rnd.choice(ENTITIES),
                                     rnd.choice(ATTRIBUTES))
        head = proposal = None
        if rnd.random() < 0.3:
            head = self.head_for(agent, ns, entity, attribute)
        if rnd.random() < 0.3:
            proposal = "p%d" % rnd.randint(1, 12)
            if not self.rule("§17 proposal ids per agent"):
                # pending: another agent's use of an id is drawn only when
                # the extension keys ids by agent
                proposal += agent[-1]
        if parents is None:
            parents = [self.rec_label(r) for r in self.some(
                pool, rnd.choice((0, 0, 0, 1, 1, 2)))]
        out = dict(
            call,
            entity=entity, attribute=attribute,
            value=rnd.choice(VALUES), kind=rnd.choice(KINDS),
            source=self.source(), confidence=self.confidence(),
            parents=parents,
            scope=rnd.choice(("private", "shared", "public", "public")),
            readers=(None if rnd.random() < 0.5
                     else self.some(self.agents, rnd.randint(0, 2))),
            writers=(None if rnd.random() < 0.5
                     else self.some(self.agents, rnd.randint(0, 2))),
            valid=self.valid(), observed_at=self.observed(),
            expected_head=head, proposal=proposal)
        prs = [m.records.get(self.ids.get(p)) for p in out["parents"]]
        if prs and None not in prs and rnd.random() < 0.5:
            # a well-formed derivation: active parents, and a child that
            # widens neither their scope nor their audience, so that views
            # commit and later cascades find them active
            active = [r for r in readable if r.state in M.ACTIVE
                      and r.kind != "tool_action"]
            prs = self.some(active, len(prs))
            out["parents"] = [self.rec_label(r) for r in prs]
            if prs:
                out["scope"] = min((r.scope for r in prs),
                                   key=M.SCOPE_RANK.get)
                common = set(self.agents)
                for r in prs:
                    if r.scope != "public":
                        common &= r.readers
                out["readers"] = sorted(common) or None
        if proposal is not None and proposal not in self.bound:
            self.bound[proposal] = dict(out, caller_agent=agent, namespace=ns)
        out.pop("caller_agent", None)
        return out

    def change(self, content):
        """One field of a proposal's content changed (§10: 23505), or a
        change that is no change (the same content once defaults apply)."""
        rnd = self.rnd
        k = rnd.choice(("value", "value", "confidence", "readers", "valid",
                        "observed_at", "kind", "source", "scope", "writers",
                        "parents", "expected_head", "same"))
        if k == "value":
            content["value"] = rnd.choice(VALUES)
        elif k == "confidence":
            content["confidence"] = rnd.choice((1.0, 0.9, 0.6))
        elif k in ("readers", "writers"):
            v = content[k] or []
            content[k] = list(reversed(v)) if rnd.random() < 0.5 else (
                sorted(set(v) ^ {self.agents[0]}) or None)
        elif k == "valid":
            content["valid"] = self.valid()
        elif k == "observed_at":
            content["observed_at"] = self.observed()
        elif k == "kind":
            content["kind"] = rnd.choice(KINDS)
        elif k == "source":
            content["source"] = self.source()
        elif k == "scope":
            content["scope"] = rnd.choice(("private", "shared", "public"))
        elif k == "parents":
            content["parents"] = list(reversed(content["parents"])) or []
        elif k == "expected_head":
            content["expected_head"] = rnd.choice((None, 0))
        elif k == "same" and content["value"] in ('{"a": 1}', '{"a":1}'):
            content["value"] = ('{"a":1}' if content["value"] == '{"a": 1}'
                                else '{"a": 1}')

    def head_for(self, agent, ns, entity, attribute):
        """An expected head: the current one, a stale one, 0, or a bad id
        (another slot's, another namespace's, a tool action, unreadable)."""
        rnd, m = self.rnd, self.m
        slot = [r for r in self.recs(ns) if (r.entity, r.attribute) == (
            entity, attribute) and r.kind != "tool_action"
            and m.readable(r, agent)]
        heads = [r for r in slot if r.state in M.ACTIVE]
        p = rnd.random()
        if p < 0.55 and heads:
            return self.rec_label(rnd.choice(heads))
        if p < 0.7 and slot:
            return self.rec_label(rnd.choice(slot))
        if p < 0.85 or not m.records:
            return 0
        return self.rec_label(rnd.choice(list(m.records.values())))

    def random_call(self):
        rnd, m = self.rnd, self.m
        txs = list(m.txs.values())
        recs = list(m.records.values())
        choice = rnd.choices(
            ("begin", "stage", "commit", "abort", "read", "revoke", "gate",
             "act", "expire", "tick", "propose", "outcome", "restore",
             "erase", "fence", "read_as_of", "recall", "lookup", "verify",
             "registry", "lineage", "search") + V.KINDS,
            (9, 30, 14, 4, 10, 6, 6, 10, 2, 8, 6, 2, 2, 1, 1, 2, 3, 3, 1, 1,
             1, 2) + ((1, 7, 5) if self.vector else (0, 0, 0)))[0]
        if not txs:
            choice = "begin"
        if choice == "tick":
            return {"op": "tick", "minutes": rnd.choice((1, 7, 14, 21, 49))}
        if choice in V.KINDS:
            return V.draw(self, choice) or {"op": "tick", "minutes": 1}
        review = [r for r in recs if r.state == "quarantined"
                  and r.reason == "needs_review"]
        if review and rnd.random() < 0.3:
            r = rnd.choice(review if rnd.random() < 0.9 else recs)
            return {"op": "resolve", "record": self.rec_label(r),
                    "caller": "harness" if rnd.random() < 0.9
                    else rnd.choice(self.agents),
                    "accept": rnd.random() < 0.6}
        if choice == "expire":
            return {"op": "expire", "caller": "harness"}
        if choice == "propose" or (choice == "outcome" and not self.bound):
            ns = self.namespace()
            members = self.member_agents(ns)
            agent = rnd.choice(members if members and rnd.random() < 0.95
                               else self.agents)
            return self.content(dict(op="propose", caller=agent, namespace=ns),
                                agent, ns)
        if choice == "outcome":
            pid = rnd.choice(sorted(self.bound))
            caller = self.bound[pid].get("caller_agent") or rnd.choice(
                self.agents)
            if self.rule("§17 outcome agent"):
                caller = rnd.choice(self.agents + ["harness"])
            ns = self.bound[pid].get("namespace") or M.DEFAULT_NS
            return {"op": "outcome", "proposal": pid, "caller": caller,
                    "namespace": ns}
        if choice == "revoke" and recs:
            r = rnd.choice(recs)
            p = rnd.random()
            caller = (r.owner if p < 0.6 else "harness" if p < 0.9
                      else rnd.choice(self.agents))
            if caller not in ("harness", r.owner) and r.state == "revoked":
                caller = r.owner
            return {"op": "revoke", "caller": caller, "record": self.rec_label(r)}
        if choice == "erase" and recs:
            r = rnd.choice(recs)
            if not self.rule("§17 erase restored copies") and any(
                    x.restored_from == r.id or r.restored_from is not None
                    for x in recs):
                return {"op": "tick", "minutes": 1}
            return {"op": "erase", "record": self.rec_label(r),
                    "caller": "harness" if rnd.random() < 0.9
                    else rnd.choice(self.agents), "note": "gdpr"}
        if choice == "fence":
            role = rnd.choice(self.agents)
            if role in m.fenced and rnd.random() < 0.8:
                return {"op": "unfence", "role": role, "caller": "harness"}
            return {"op": "fence", "role": role, "caller": "harness"
                    if rnd.random() < 0.95 else rnd.choice(self.agents)}
        if choice == "read_as_of":
            return self.read_as_of()
        if choice == "lookup":
            return self.lookup()
        if choice == "search":
            return self.search()
        if choice == "verify":
            return self.verify()
        if choice == "lineage" and recs:
            return {"op": "lineage", "caller": "harness",
                    "record": self.rec_label(rnd.choice(recs)),
                    "direction": rnd.choice(("down", "up"))}
        if choice == "registry":
            return self.registry()
        opened = [t for t in txs if t.status == "open"]
        if not opened and choice in ("stage", "read", "abort", "restore",
                                     "recall") and rnd.random() < 0.8:
            choice = "begin"
        if choice == "begin":
            short = rnd.random() < 0.03
            if short:
                # a lease of 1 s: up to three stages at once under it, then
                # a wait past it, so the lease has surely run out (and only
                # then) whatever the machine's load
                self.queue = ["t%d" % self.n] * rnd.randint(0, 3) + ["wait"]
            call = self.begin(by_agent=rnd.random() < 0.1)
            if call["caller"] != "harness" and rnd.random() < 0.1:
                call["tier"] = "low"        # not the agent's to pass: 42501
            if call["caller"] == "harness" and rnd.random() < 0.3:
                call["isolation"] = rnd.choice(M.LEVELS)
            call["short_lease"] = short and call["caller"] == "harness"
            if not call["short_lease"]:
                self.queue = []
            return call
        if (choice in ("stage", "read", "abort", "act", "gate", "restore",
                       "recall") and opened and rnd.random() < 0.93):
            t = rnd.choice(opened)
        elif choice in ("read", "abort", "restore", "recall"):
            if not opened:
                return {"op": "tick", "minutes": 7}
            t = rnd.choice(opened)
        else:
            t = rnd.choice(txs)
        if choice == "commit" and t.status == "aborted" and t.outcome is None:
            t = rnd.choice(txs)
        p = rnd.random()
        caller = (t.agent if p < 0.9 else "harness" if p < 0.94
                  else rnd.choice(self.agents))
        base = {"caller": caller, "tx": self.tx_label(t)}
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
            return self.act(base, t)
        if choice == "restore":
            return self.restore(base, t)
        if choice == "recall":
            return self.recall(base)
        return self.content(dict(base, op="stage"), t.agent, t.ns)

    def act(self, base, t, inputs=None, key=None, tool=None, args=None):
        rnd = self.rnd
        if inputs is None:
            p = rnd.random()
            pool = (self.recs(t.ns) if p < 0.9 else self.recs())
            inputs = [self.rec_label(r) for r in self.some(
                pool, rnd.choice((0, 1, 1, 2)))]
        if key is None and rnd.random() < 0.6:
            key = rnd.choice(("k1", "k2", "k3"))
        call = dict(base, op="act",
                    tool=tool or rnd.choice(("refund", "note", "launch")),
                    args=args or rnd.choice(ARGS), inputs=inputs,
                    effect_key=key)
        return call

    def restore(self, base, t):
        rnd, m = self.rnd, self.m
        slots = [(r.entity, r.attribute) for r in self.recs(t.ns)
                 if r.kind != "tool_action"]
        entity, attribute = (rnd.choice(slots) if slots and rnd.random() < 0.9
                             else (rnd.choice(ENTITIES), rnd.choice(ATTRIBUTES)))
        valid_at = None
        if rnd.random() < 0.3:
            valid_at = m.now + rnd.choice((-300, -60, 0, 30, 100))
        return dict(base, op="restore", entity=entity, attribute=attribute,
                    at=self.some_time(), valid_at=valid_at)

    def recall(self, base, query=None):
        rnd = self.rnd
        call = dict(base, op="recall",
                    query=query if query is not None else rnd.choice(QUERIES),
                    k=rnd.choice((1, 2, 8, 8, 8, 1000, 0, 1001)),
                    entity_prefix=rnd.choice(PREFIXES))
        if self.rule("§18 valid_at") and rnd.random() < 0.3:
            call["valid_at"] = self.m.now + rnd.choice((-60, 0, 1, 60))
        return call

    def reader(self, ns):
        """A caller for a read without a transaction."""
        rnd = self.rnd
        callers = self.agents + ["harness"]
        if not self.rule("§17 read tenancy") and ns != M.DEFAULT_NS:
            # pending: non-members of ns2 are not drawn
            callers = self.member_agents(ns) + ["harness"]
        return rnd.choice(callers)

    def read_as_of(self):
        rnd, m = self.rnd, self.m
        ns = self.namespace()
        valid_at = None
        if rnd.random() < 0.3:
            valid_at = m.now + rnd.choice((-300, -60, 0, 1, 30, 100))
        return {"op": "read_as_of", "caller": self.reader(ns),
                "at": self.some_time(),
                "entity": rnd.choice(("e1", "e2", "e3", None)),
                "attribute": rnd.choice(("x", "y", None)),
                "namespace": ns, "valid_at": valid_at}

    def search(self):
        """memtx.search: recall's queries, k and prefixes, a namespace and a
        reader as lookup's."""
        rnd = self.rnd
        ns = self.namespace()
        call = {"op": "search", "caller": self.reader(ns), "namespace": ns,
                "query": rnd.choice(QUERIES),
                "k": rnd.choice((1, 2, 8, 8, 1000, 0, 1001)),
                "entity_prefix": rnd.choice(PREFIXES)}
        if self.rule("§18 valid_at") and rnd.random() < 0.3:
            call["valid_at"] = self.m.now + rnd.choice((-60, 0, 1, 60))
        return call

    def lookup(self, ns=None, entity=None, attribute=None):
        rnd = self.rnd
        ns = ns or self.namespace()
        call = {"op": "lookup", "caller": self.reader(ns), "namespace": ns,
                "entity": entity or rnd.choice(("e1", "e2", "e3")),
                "attribute": attribute or rnd.choice(("x", "y", None))}
        if self.rule("§18 valid_at") and rnd.random() < 0.3:
            call["valid_at"] = self.m.now + rnd.choice((-60, 0, 1, 60))
        return call

    def verify(self):
        rnd, m = self.rnd, self.m
        spaces = [ns for ns, rc in m.receipts.items() if rc]
        if not spaces:
            return {"op": "tick", "minutes": 1}
        ns = rnd.choice(spaces)
        if rnd.random() < 0.4:
            return {"op": "verify", "caller": "harness", "namespace": ns}
        return self.tamper(ns)

    def tamper(self, ns):
        rnd, m = self.rnd, self.m
        kinds = list(TAMPERS)
        if self.rule("§17 receipts anchor states"):
            kinds.append("state")
        if self.rule("§17 erased means erased"):
            kinds.append("erased_at")
        kind = rnd.choice(kinds)
        chain = m.receipts[ns]
        call = {"op": "tamper", "caller": "harness", "namespace": ns,
                "kind": kind, "index": rnd.randrange(len(chain))}
        if kind in ("value", "state", "erased_at"):
            subjects = [rc[1] for rc in chain if rc[0] in ("commit",
                                                           "retract")
                        and rc[1] in m.records]
            if kind == "value":
                subjects = [rc[1] for rc in chain if rc[0] == "commit"]
            if not subjects:
                call["kind"] = "hash"
                return call
            call["record"] = self.rec_label(m.records[rnd.choice(subjects)])
        return call

    def registry(self):
        rnd = self.rnd
        p = rnd.random()
        caller = "harness" if rnd.random() < 0.9 else rnd.choice(self.agents)
        if p < 0.5:
            # a source's authority moved: to the bypass exactly, or down
            return {"op": "register_source", "caller": caller,
                    "name": rnd.choice(("crm", "crm2", "auditor", "blog")),
                    "authority": rnd.choice((0.9, 0.5, 0.7, 0.95))}
        if p < 0.7:
            return {"op": "set_role_tier", "caller": caller,
                    "role": rnd.choice(self.agents),
                    "tier": rnd.choice(TIERS + (None,))}
        return {"op": rnd.choice(("grant_namespace", "revoke_namespace")),
                "caller": caller, "namespace": NS2,
                "role": rnd.choice(self.agents)}

    # ------------------------------------------------------------ scenarios
    # Each yields its calls one by one (interleaved with others); a call's
    # label is in it once yielded.  A call that fails leaves its label
    # unbound, and the later calls naming it are skipped.

    def find(self, label, kind="rec"):
        i = self.ids.get(label)
        if i is None:
            return None
        return self.m.records.get(i) if kind == "rec" else self.m.txs.get(i)

    def scenario_vector(self):
        return V.scenario(self)             # §19 (vector_driver.py)

    def scenario_head_race(self):
        """§10: a head that moved after the reader's snapshot."""
        rnd = self.rnd
        a, b = self.some(self.agents, 2)
        slot = (rnd.choice(ENTITIES), rnd.choice(ATTRIBUTES))
        t = self.begin(agent=a, ns=M.DEFAULT_NS, tier=rnd.choice(TIERS))
        yield t
        p = self.content(dict(op="propose", caller=b, namespace=M.DEFAULT_NS),
                         b, M.DEFAULT_NS, parents=[], slot=slot)
        p.update(source="sensor", confidence=1.0, valid=None, proposal=None,
                 expected_head=None, scope="public", writers=[a])
        yield p
        yield self.lookup(ns=M.DEFAULT_NS, entity=slot[0], attribute=slot[1])
        st = self.content(dict(op="stage", caller=a, tx=t["label"]), a,
                          M.DEFAULT_NS, parents=[], slot=slot)
        heads = [r for r in self.recs(M.DEFAULT_NS)
                 if (r.entity, r.attribute) == slot and r.state in M.ACTIVE
                 and r.kind != "tool_action"]
        st.update(proposal=None, valid=None, source="sensor",
                  confidence=1.0, observed_at=None,
                  expected_head=(self.rec_label(heads[-1]) if heads
                                 and rnd.random() < 0.8 else 0))
        if rnd.random() < 0.3:
            # heads are per validity window: a window no active record
            # overlaps expects 0
            st["valid"] = [self.m.now - 300, self.m.now + 60]
            p["valid"] = None
        yield st
        if rnd.random() < 0.4:
            # §10: a record committed earlier in the same run is a head
            st2 = dict(st, expected_head=st["label"], value='"y"')
            st2.pop("label")
            yield st2
        yield {"op": "commit", "caller": a, "tx": t["label"]}

    def scenario_validity_heads(self):
        """§10: heads are per validity window.  A head committed with a
        bounded validity [lo, b); time moves to b or past it; then a
        candidate on the same slot whose window starts at b exactly
        (touching: [a, b) and [b, c) do not overlap), after a gap, or one
        minute before b (overlapping), or unbounded.  Its expected head is
        what the model says (0 when no active record overlaps its window),
        now and then the other answer on purpose; the candidate comes by
        stage and commit (the head set by id) or by propose (by content).
        The slot is fresh, so that no other record is a head of it."""
        rnd = self.rnd
        a, b = self.some(self.agents, 2)
        slot = ("w%d" % self.n, rnd.choice(ATTRIBUTES))
        now = self.m.now
        width = rnd.choice((1, 5, 30))
        h = self.content(dict(op="propose", caller=b, namespace=M.DEFAULT_NS),
                         b, M.DEFAULT_NS, parents=[], slot=slot)
        h.update(entity=slot[0], attribute=slot[1], kind="belief",
                 parents=[], source="sensor", confidence=1.0, proposal=None,
                 expected_head=rnd.choice((None, 0)), scope="public",
                 readers=None, writers=None, observed_at=None,
                 valid=[rnd.choice((now - 60, now)), now + width])
        yield h
        head = self.find(h["label"])
        if head is None or head.state not in M.ACTIVE:
            return
        upper = head.valid[1]
        shape = rnd.choice(("touching", "touching", "gap", "overlap",
                            "unbounded"))
        lo = {"touching": upper, "gap": upper + 3, "overlap": upper - 1,
              "unbounded": None}[shape]
        start = upper if lo is None else lo
        if self.m.now < start:
            yield {"op": "tick", "minutes": start - self.m.now}
        hi = rnd.choice((None, None, self.m.now + 30))
        window = None if lo is None and hi is None else [lo, hi]
        if rnd.random() < 0.3:
            # a second head on the slot, later: the expected one when the
            # candidate's window reaches it
            h2 = self.content(dict(op="propose", caller=b,
                                   namespace=M.DEFAULT_NS),
                              b, M.DEFAULT_NS, parents=[], slot=slot)
            h2.update(entity=slot[0], attribute=slot[1], kind="belief",
                      parents=[], source="sensor", confidence=1.0,
                      proposal=None,
                      expected_head=None, scope="public", readers=None,
                      writers=None, observed_at=None,
                      valid=[self.m.now, None])
            yield h2
        cand = (tuple(window) if window else (None, None))
        heads = [r for r in self.recs(M.DEFAULT_NS)
                 if (r.entity, r.attribute) == slot and r.state in M.ACTIVE
                 and r.kind != "tool_action" and M.overlaps(r.valid, cand)]
        expected = self.rec_label(heads[0]) if len(heads) == 1 else 0
        if rnd.random() < 0.2:
            # the other answer: the head outside the window, or 0
            expected = 0 if expected else h["label"]
        common = dict(entity=slot[0], attribute=slot[1], kind="belief",
                      source="sensor", confidence=1.0, proposal=None,
                      expected_head=expected, scope="public", readers=None,
                      writers=[a, b], observed_at=None, valid=window,
                      parents=[])
        if rnd.random() < 0.5:
            p = self.content(dict(op="propose", caller=a,
                                  namespace=M.DEFAULT_NS),
                             a, M.DEFAULT_NS, parents=[], slot=slot)
            p.update(common)
            yield p
        else:
            t = self.begin(agent=a, ns=M.DEFAULT_NS,
                           tier=rnd.choice(("low", "medium", "high")))
            yield t
            st = self.content(dict(op="stage", caller=a, tx=t["label"]), a,
                              M.DEFAULT_NS, parents=[], slot=slot)
            st.update(common)
            yield st
            yield {"op": "commit", "caller": a, "tx": t["label"]}

    def scenario_unseen_support(self):
        """§5 (2): action_safe records exist in the namespace, but none is
        visible to the caller's external_action transaction: one committed
        after its snapshot, or one it may not read.  An irreversible gate
        and act then block (no_action_safe_support), unless an older
        visible one supports them."""
        rnd = self.rnd
        a, b = self.some(self.agents, 2)
        ns = M.DEFAULT_NS
        after = rnd.random() < 0.5
        t = None
        if after:
            t = self.begin(agent=a, ns=ns, tier="external_action")
            yield t
        t2 = self.begin(agent=b, ns=ns, tier="external_action")
        yield t2
        st = self.content(dict(op="stage", caller=b, tx=t2["label"]), b, ns,
                          parents=[])
        # a fresh slot: no rival can keep the record from action_safe
        st.update(entity="u%d" % self.n, kind="belief", source="sensor",
                  confidence=1.0, proposal=None, writers=None,
                  expected_head=None, valid=None, observed_at=None,
                  parents=[], scope="public" if after else "private",
                  readers=None if after else rnd.choice((None, [b])))
        yield st
        yield {"op": "commit", "caller": b, "tx": t2["label"]}
        if t is None:
            t = self.begin(agent=a, ns=ns, tier="external_action")
            yield t
        base = {"caller": a, "tx": t["label"]}
        yield dict(base, op="gate", tool="refund")
        yield self.act(base, None, inputs=[], tool="refund")

    def scenario_stale_snapshot(self):
        """§4 3d: a rival committed after the snapshot; same-transaction and
        observed_at variants."""
        rnd = self.rnd
        a, b = self.some(self.agents, 2)
        slot = (rnd.choice(ENTITIES), rnd.choice(ATTRIBUTES))
        t1 = self.begin(agent=a, ns=M.DEFAULT_NS)
        yield t1
        t2 = self.begin(agent=b, ns=M.DEFAULT_NS)
        yield t2
        obs = rnd.choice((None, START - 50, START))
        for tx, agent, o in ((t2, b, obs), (t1, a, rnd.choice((None, START - 50,
                                                             START)))):
            st = self.content(dict(op="stage", caller=agent, tx=tx["label"]),
                              agent, M.DEFAULT_NS, parents=[], slot=slot)
            st.update(proposal=None, expected_head=None, valid=None,
                      observed_at=o, confidence=1.0, writers=self.agents,
                      source=rnd.choice(("crm", "crm2", "sensor")))
            yield st
            if tx is t2:
                yield {"op": "commit", "caller": b, "tx": t2["label"]}
        if rnd.random() < 0.5:
            # the same transaction: a second record, observed earlier
            st = self.content(dict(op="stage", caller=a, tx=t1["label"]), a,
                              M.DEFAULT_NS, parents=[], slot=slot)
            st.update(proposal=None, expected_head=None, valid=None,
                      observed_at=START - 200, confidence=1.0,
                      source="crm")
            yield st
        yield {"op": "commit", "caller": a, "tx": t1["label"]}

    def scenario_own_staging(self):
        """§5: gate and act with the caller's own staging in flight."""
        rnd = self.rnd
        a = rnd.choice(self.agents)
        t = self.begin(agent=a, ns=M.DEFAULT_NS, tier=rnd.choice(
            ("low", "external_action", "medium")))
        yield t
        st = self.content(dict(op="stage", caller=a, tx=t["label"]), a,
                          M.DEFAULT_NS, parents=[])
        st.update(proposal=None, expected_head=None, valid=None,
                  confidence=1.0, observed_at=None)
        yield st
        base = {"caller": a, "tx": t["label"]}
        yield dict(base, op="gate", tool=rnd.choice(("refund", "launch",
                                                     "note")))
        yield self.act(base, None, inputs=[st["label"]],
                       tool=rnd.choice(("refund", "note")))
        yield {"op": "commit", "caller": a, "tx": t["label"]}
        yield dict(base, op="gate", tool="refund")
        yield self.act(base, None, inputs=[st["label"]], tool="refund")

    def scenario_laundering(self):
        """§4 3c: transcription after a read (or a recall) of a private
        record, without a declared parent."""
        rnd = self.rnd
        a = rnd.choice(self.agents)
        t0 = self.begin(agent=a, ns=M.DEFAULT_NS, tier="low")
        yield t0
        word = rnd.choice(('"amber"', '"cobalt"'))
        st = self.content(dict(op="stage", caller=a, tx=t0["label"]), a,
                          M.DEFAULT_NS, parents=[])
        st.update(proposal=None, expected_head=None, valid=None,
                  confidence=1.0, observed_at=None, value=word,
                  scope=rnd.choice(("private", "shared")),
                  readers=rnd.choice((None, [a])), source="sensor")
        yield st
        yield {"op": "commit", "caller": a, "tx": t0["label"]}
        t = self.begin(agent=a, ns=M.DEFAULT_NS, tier="low")
        yield t
        base = {"caller": a, "tx": t["label"]}
        if rnd.random() < 0.5:
            yield dict(base, op="read", entity=st["entity"],
                       attribute=st["attribute"])
        else:
            yield self.recall(base, query=json.loads(word))
        out = self.content(dict(base, op="stage"), a, M.DEFAULT_NS,
                           parents=[])
        out.update(proposal=None, expected_head=None, valid=None,
                   confidence=1.0, observed_at=None,
                   scope=rnd.choice(("public", "shared", "private")),
                   readers=rnd.choice((None, [a], self.agents)))
        yield out
        yield {"op": "commit", "caller": a, "tx": t["label"]}

    def scenario_retry(self):
        """§10: a proposal retried as it was, changed, in a transaction."""
        rnd = self.rnd
        a = rnd.choice(self.agents)
        pid = "s%d" % self.n
        p = self.content(dict(op="propose", caller=a, namespace=M.DEFAULT_NS),
                         a, M.DEFAULT_NS)
        p.update(proposal=pid, observed_at=None)
        yield p
        for _ in range(rnd.randint(1, 3)):
            again = dict(p)
            again.pop("label", None)
            if rnd.random() < 0.6:
                self.change(again)
            if rnd.random() < 0.5:
                yield again
            else:
                t = self.begin(agent=a, ns=M.DEFAULT_NS)
                yield t
                yield dict(again, op="stage", tx=t["label"])
                yield {"op": "commit", "caller": a, "tx": t["label"]}
        yield {"op": "outcome", "proposal": pid, "caller": a,
               "namespace": M.DEFAULT_NS}

    def scenario_effect_key(self):
        """§5, §16: a key used up, then repeated with the same call and with
        other args, tool or agent; a blocked call does not use a key up."""
        rnd = self.rnd
        a, b = self.some(self.agents, 2)
        key = "x%d" % self.n
        t = self.begin(agent=a, ns=M.DEFAULT_NS, tier="low")
        yield t
        base = {"caller": a, "tx": t["label"]}
        tool = rnd.choice(("note", "refund"))
        first = self.act(base, None, inputs=[], key=key, tool=tool,
                         args='{"n": 1}')
        yield first
        if rnd.random() < 0.3:
            # §13 × §16: erasure nulls the args the key bound; no call is a
            # repeat afterwards, not even one with JSON null args
            yield {"op": "erase", "caller": "harness",
                   "record": first["label"]}
        for _ in range(rnd.randint(1, 3)):
            p = rnd.random()
            if p < 0.3:
                yield self.act(base, None, inputs=[], key=key, tool=tool,
                               args=rnd.choice(('{"n":1}', '{"n": 1}')))
            elif p < 0.55:
                yield self.act(base, None, inputs=[], key=key, tool=tool,
                               args=rnd.choice(('{"n": 2}', '{"n": 1.0}',
                                                'null')))
            elif p < 0.75:
                yield self.act(base, None, inputs=[], key=key,
                               tool="note" if tool == "refund" else "refund",
                               args='{"n": 1}')
            else:
                t2 = self.begin(agent=b, ns=M.DEFAULT_NS, tier="low")
                yield t2
                yield self.act({"caller": b, "tx": t2["label"]}, None,
                               inputs=[], key=key, tool=tool, args='{"n": 1}')

    def scenario_fence(self):
        """§12: a fence in the middle of a turn with an action."""
        rnd = self.rnd
        a = rnd.choice(self.agents)
        ns = self.namespace() if a in self.member_agents(NS2) else M.DEFAULT_NS
        t = self.begin(agent=a, ns=ns)
        yield t
        base = {"caller": a, "tx": t["label"]}
        st = self.content(dict(base, op="stage"), a, ns, parents=[])
        st.update(proposal=None, expected_head=None, valid=None,
                  confidence=1.0, observed_at=None)
        yield st
        yield self.act(base, None, inputs=[st["label"]], tool="note")
        yield {"op": "fence", "caller": "harness", "role": a}
        yield {"op": "commit", "caller": a, "tx": t["label"]}
        yield {"op": "gate", "caller": "harness", "tx": t["label"],
               "tool": "note"}
        yield self.begin(agent=a, ns=ns)
        p = self.content(dict(op="propose", caller=a, namespace=ns), a, ns)
        yield p
        yield {"op": "unfence", "caller": "harness", "role": a}
        yield {"op": "abort", "caller": a, "tx": t["label"]}
        yield self.begin(agent=a, ns=ns)

    def scenario_erase(self):
        """§13: erasure of a record with a view, a belief and an action
        below it; then a retry of its proposal and a restore."""
        rnd = self.rnd
        a = rnd.choice(self.agents)
        pid = "e%d" % self.n
        p = self.content(dict(op="propose", caller=a, namespace=M.DEFAULT_NS),
                         a, M.DEFAULT_NS, parents=[])
        p.update(proposal=pid, source="sensor", confidence=1.0, valid=None,
                 expected_head=None, scope="public", observed_at=None)
        yield p
        t = self.begin(agent=a, ns=M.DEFAULT_NS, tier="low")
        yield t
        base = {"caller": a, "tx": t["label"]}
        v = self.content(dict(base, op="stage"), a, M.DEFAULT_NS,
                         parents=[p["label"]])
        v.update(kind=rnd.choice(("summary", "belief")), proposal=None,
                 expected_head=None, valid=None, confidence=1.0,
                 scope="public", readers=None)
        yield v
        # the action in the open transaction (a closed one refuses it), so
        # that the erasure below has a tool action and its args to erase
        act = self.act(base, None, inputs=[p["label"]],
                       tool=rnd.choice(("note", "refund")))
        yield act
        yield {"op": "commit", "caller": a, "tx": t["label"]}
        at = self.m.now
        if rnd.random() < 0.4:
            # §13: erasing a tool action nulls its args in the action log
            yield {"op": "erase", "caller": "harness", "record": act["label"]}
        yield {"op": "tick", "minutes": 7}
        yield {"op": "erase", "caller": "harness", "record": p["label"],
               "note": "gdpr"}
        again = dict(p)
        again.pop("label")
        yield again
        t2 = self.begin(agent=a, ns=M.DEFAULT_NS)
        yield t2
        yield {"op": "restore", "caller": a, "tx": t2["label"],
               "entity": p["entity"], "attribute": p["attribute"], "at": at}
        yield {"op": "erase", "caller": "harness", "record": p["label"]}

    def scenario_restore(self):
        """§13: restore the value a slot had before a supersession."""
        rnd = self.rnd
        a = rnd.choice(self.agents)
        slot = (rnd.choice(ENTITIES), rnd.choice(ATTRIBUTES))
        first_call = None
        for value in rnd.sample(VALUES, 2):
            p = self.content(dict(op="propose", caller=a,
                                  namespace=M.DEFAULT_NS), a, M.DEFAULT_NS,
                             parents=[], slot=slot)
            p.update(value=value, source="crm", confidence=1.0, valid=None,
                     expected_head=None, proposal=None, observed_at=None,
                     scope="public")
            yield p
            first_call = first_call or (p, self.m.now)
            yield {"op": "tick", "minutes": 7}
        if rnd.random() < 0.5:
            # the source's authority lowered since: the copy does not keep it
            yield {"op": "register_source", "caller": "harness",
                   "name": "crm", "authority": rnd.choice((0.5, 0.9))}
        t = self.begin(agent=a, ns=M.DEFAULT_NS, tier="low")
        yield t
        yield {"op": "restore", "caller": a, "tx": t["label"],
               "entity": slot[0], "attribute": slot[1],
               "at": first_call[1] + rnd.choice((0, 0, 1, -1))}
        yield {"op": "commit", "caller": a, "tx": t["label"]}
        yield {"op": "read_as_of", "caller": a, "at": first_call[1],
               "entity": slot[0], "attribute": slot[1],
               "namespace": M.DEFAULT_NS, "valid_at": None}
        if rnd.random() < 0.4:
            # §17: erasing the original erases its restored copy too
            yield {"op": "erase", "caller": "harness",
                   "record": first_call[0]["label"]}
            yield {"op": "lineage", "caller": "harness",
                   "record": first_call[0]["label"], "direction": "down"}

    def scenario_ttl(self):
        """§18: a store with time-to-live writes valid = [now, now + ttl)
        and reads at an instant: lookup and recall at the lower bound, one
        minute before the upper bound, at the upper bound exactly (the
        instant it expires: not returned) and before the lower bound; then
        time moves past the upper bound and reads at now find nothing."""
        rnd = self.rnd
        a = rnd.choice(self.agents)
        word = rnd.choice(('"amber"', '"cobalt"'))
        slot = ("t%d" % self.n, rnd.choice(ATTRIBUTES))
        now = self.m.now
        ttl = rnd.choice((1, 5, 30))
        p = self.content(dict(op="propose", caller=a, namespace=M.DEFAULT_NS),
                         a, M.DEFAULT_NS, parents=[], slot=slot)
        p.update(entity=slot[0], attribute=slot[1], kind="belief",
                 value=word, parents=[], source="sensor", confidence=1.0,
                 proposal=None, expected_head=None, scope="public",
                 readers=None, writers=None, observed_at=None,
                 valid=[now, now + ttl])
        yield p
        t = self.begin(agent=a, ns=M.DEFAULT_NS, tier="low")
        yield t
        base = {"caller": a, "tx": t["label"]}
        for at in rnd.sample((now, now + ttl - 1, now + ttl, now + ttl,
                              now - 1), 3):
            if rnd.random() < 0.5:
                yield {"op": "lookup", "caller": rnd.choice(self.agents),
                       "namespace": M.DEFAULT_NS, "entity": slot[0],
                       "attribute": rnd.choice((slot[1], None)),
                       "valid_at": at}
            else:
                call = self.recall(base, query=json.loads(word))
                call.update(k=8, entity_prefix=rnd.choice((None, "t")),
                            valid_at=at)
                yield call
        yield {"op": "tick", "minutes": ttl + rnd.choice((0, 1))}
        yield {"op": "lookup", "caller": a, "namespace": M.DEFAULT_NS,
               "entity": slot[0], "attribute": slot[1],
               "valid_at": self.m.now}

    def scenario_cascade(self):
        """§6: a revocation below which are a tentative descendant of another
        transaction, a committed view and a superseded descendant."""
        rnd = self.rnd
        a, b = self.some(self.agents, 2)
        p = self.content(dict(op="propose", caller=a, namespace=M.DEFAULT_NS),
                         a, M.DEFAULT_NS, parents=[])
        p.update(source="sensor", confidence=1.0, valid=None, proposal=None,
                 expected_head=None, scope="public", observed_at=None,
                 readers=None)
        yield p
        v = self.content(dict(op="propose", caller=b, namespace=M.DEFAULT_NS),
                         b, M.DEFAULT_NS, parents=[p["label"]])
        v.update(kind=rnd.choice(VIEW_KINDS_ALL), source="sensor",
                 confidence=1.0, valid=None, proposal=None,
                 expected_head=None, scope="public", readers=None)
        yield v
        t = self.begin(agent=b, ns=M.DEFAULT_NS, tier=rnd.choice(TIERS))
        yield t
        st = self.content(dict(op="stage", caller=b, tx=t["label"]), b,
                          M.DEFAULT_NS, parents=[p["label"]])
        st.update(kind=rnd.choice(KINDS), source="sensor", confidence=1.0,
                  valid=None, proposal=None, expected_head=None,
                  scope="public", readers=None)
        yield st
        yield {"op": "read", "caller": b, "tx": t["label"], "entity": None,
               "attribute": None}
        yield {"op": "revoke", "caller": rnd.choice((a, "harness")),
               "record": p["label"]}
        yield {"op": "commit", "caller": b, "tx": t["label"]}
        # §4 3a: a parent in the revocation registry (the view, quarantined
        # by the cascade) is revoked_parent, before 3b's inactive_parent
        t2 = self.begin(agent=b, ns=M.DEFAULT_NS, tier="low")
        yield t2
        st = self.content(dict(op="stage", caller=b, tx=t2["label"]), b,
                          M.DEFAULT_NS, parents=[v["label"]])
        st.update(source="sensor", confidence=1.0, valid=None, proposal=None,
                  expected_head=None, scope="public", readers=None)
        yield st
        # §16: an input whose ancestor is revoked or registered (here the
        # caller's own tentative record, below the registered view)
        yield self.act({"caller": b, "tx": t2["label"]}, None,
                       inputs=[st["label"]], tool="note")
        yield {"op": "commit", "caller": b, "tx": t2["label"]}
        yield {"op": "revoke", "caller": "harness", "record": v["label"]}

    def scenario_evidence(self):
        """§4 1-2: authority exactly at the bypass, confidence exactly at the
        threshold, validity starting or ending at now."""
        rnd = self.rnd
        a = rnd.choice(self.agents)
        t = self.begin(agent=a, ns=M.DEFAULT_NS, tier="low")
        yield t
        now = self.m.now
        for _ in range(rnd.randint(2, 4)):
            st = self.content(dict(op="stage", caller=a, tx=t["label"]), a,
                              M.DEFAULT_NS, parents=[])
            st.update(proposal=None, expected_head=None, observed_at=None,
                      source=rnd.choice(("auditor", "crm", "blog", "rumor")),
                      confidence=rnd.choice((0.6, 0.59, 0.3, self.m.threshold,
                                             self.m.threshold - 0.01)),
                      valid=rnd.choice((None, [now, now + 60],
                                        [now - 60, now], [now + 1, None])))
            yield st
        yield {"op": "commit", "caller": a, "tx": t["label"]}

    def scenario_namespaces(self):
        """§3, §16: another namespace's ids everywhere, a non-member."""
        rnd = self.rnd
        members = self.member_agents(NS2)
        if not members:
            return
        b = rnd.choice(members)
        t = self.begin(agent=b, ns=NS2)
        yield t
        base = {"caller": b, "tx": t["label"]}
        others = [r for r in self.recs(M.DEFAULT_NS)]
        st = self.content(dict(base, op="stage"), b, NS2,
                          parents=[self.rec_label(r) for r in
                                   self.some(others, 1)])
        st.update(proposal=None, valid=None, observed_at=None)
        if others and rnd.random() < 0.5:
            r = rnd.choice(others)
            st.update(parents=[], entity=r.entity, attribute=r.attribute,
                      expected_head=self.rec_label(r))
        yield st
        yield self.act(base, None, inputs=[self.rec_label(r) for r in
                                           self.some(others, 1)])
        yield dict(base, op="gate", tool="refund")
        outsiders = [x for x in self.agents if x not in members]
        if outsiders:
            yield self.begin(agent=rnd.choice(outsiders), ns=NS2,
                             by_agent=True)
        yield {"op": "commit", "caller": b, "tx": t["label"]}


    def scenario_review(self):
        """§4 3d: rivals of equal authority from different sources need
        review; the harness accepts or rejects (or a record below an
        inactive ancestor cannot be accepted: 55000)."""
        rnd = self.rnd
        a, b = self.some(self.agents, 2)
        slot = (rnd.choice(ENTITIES), rnd.choice(ATTRIBUTES))
        labels = []
        for agent, src in ((a, "crm"), (b, "crm2")):
            p = self.content(dict(op="propose", caller=agent,
                                  namespace=M.DEFAULT_NS), agent,
                             M.DEFAULT_NS, parents=[], slot=slot)
            p.update(source=src, confidence=1.0, valid=None, proposal=None,
                     expected_head=None, observed_at=None, scope="public",
                     readers=None, writers=self.agents)
            if labels and rnd.random() < 0.3:
                p["parents"] = [rnd.choice(labels)]
            yield p
            labels.append(p["label"])
        if rnd.random() < 0.3:
            yield {"op": "revoke", "caller": "harness", "record": labels[0]}
        yield {"op": "resolve", "caller": "harness", "record": labels[1],
               "accept": rnd.random() < 0.7}


    def scenario_ancestry(self):
        """§3 levels: a committed record whose parent was superseded since
        (verified_read hides it), or whose parent's slot has a tentative
        rival in flight (causally_stable_read hides it), read at every
        level and named as an act's input."""
        rnd = self.rnd
        a, b = self.some(self.agents, 2)
        s1 = (rnd.choice(ENTITIES), "x")
        s2 = (rnd.choice(ENTITIES), "y")
        common = dict(source="crm", confidence=1.0, valid=None, proposal=None,
                      expected_head=None, observed_at=None, scope="public",
                      readers=None, writers=self.agents)
        p = self.content(dict(op="propose", caller=a, namespace=M.DEFAULT_NS),
                         a, M.DEFAULT_NS, parents=[], slot=s1)
        p.update(common, kind="belief", value='"x"')
        yield p
        c = self.content(dict(op="propose", caller=a, namespace=M.DEFAULT_NS),
                         a, M.DEFAULT_NS, parents=[p["label"]], slot=s2)
        c.update(common, kind=rnd.choice(("belief", "summary")), value='"y"')
        yield c
        rival = None
        if rnd.random() < 0.5:
            q = self.content(dict(op="propose", caller=a, namespace=M.DEFAULT_NS),
                             a, M.DEFAULT_NS, parents=[], slot=s1)
            q.update(common, kind="belief", value='"amber"')
            yield q
        else:
            rival = self.begin(agent=a, ns=M.DEFAULT_NS, tier="low")
            yield rival
            st = self.content(dict(op="stage", caller=a, tx=rival["label"]), a,
                              M.DEFAULT_NS, parents=[], slot=s1)
            st.update(common, kind="belief", value='"cobalt"')
            yield st
        for _ in range(rnd.randint(1, 2)):
            t = self.begin(agent=b, ns=M.DEFAULT_NS, tier=rnd.choice(TIERS),
                           isolation=rnd.choice((None, None, "verified_read",
                                                 "causally_stable_read")))
            yield t
            base = {"caller": b, "tx": t["label"]}
            yield dict(base, op="read", entity=None, attribute=None)
            yield self.act(base, None, inputs=[c["label"]], tool="note")
            yield self.recall(base, query=rnd.choice(("amber", "cobalt")))
        if rival is not None:
            yield {"op": rnd.choice(("commit", "abort")), "caller": a,
                   "tx": rival["label"]}


VIEW_KINDS_ALL = M.VIEW_KINDS
SCENARIOS = ("head_race", "stale_snapshot", "own_staging", "laundering",
             "retry", "effect_key", "fence", "erase", "restore", "cascade",
             "evidence", "namespaces", "review", "ancestry",
             "validity_heads", "unseen_support", "ttl")


def failure_key(e):
    return (e.kind, e.detail.split(" ")[0])


def shrink(runner, ops, key, budget):
    """Delta debugging: the smallest trace found within budget seconds that
    still fails with the same key."""
    deadline = time.time() + budget
    config = [ops[0]] if ops and ops[0].get("op") == "config" else []
    ops = ops[len(config):]

    def fails(candidate):
        """The calls run up to the same failure, or None."""
        try:
            runner.run(config + candidate)
        except Mismatch as e:
            if failure_key(e) == key:
                return list(runner.done[len(config):])
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
    return config + ops


def setup_roles(conn, n):
    names = ["memtx_model_%s" % "abcd"[i] for i in range(n)]
    for name in names:
        if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                            (name,)).fetchone():
            conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(
                sql.Identifier(name)))
    return names


def pending_rules(spec):
    """--rules: "pending" (the default: model.PENDING_ENGINE_RULES stay
    pending), "all" (every rule modelled), or rules to turn on, by name,
    separated by commas."""
    if spec in (None, "", "pending"):
        return M.PENDING_ENGINE_RULES
    if spec == "all":
        return frozenset()
    on = {s.strip() for s in spec.split(",")}
    unknown = on - M.PENDING_ENGINE_RULES
    if unknown:
        sys.exit("unknown rules: %s (pending are: %s)" % (
            sorted(unknown), sorted(M.PENDING_ENGINE_RULES)))
    return M.PENDING_ENGINE_RULES - on


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
    ap.add_argument("--coverage", action="store_true",
                    help="print how often each outcome was exercised")
    ap.add_argument("--shrink-seconds", type=float, default=60)
    ap.add_argument("--max-failures", type=int, default=0,
                    help="stop after this many failed traces (0: no limit)")
    ap.add_argument("--router", action="store_true",
                    help="SPEC §20: every call through a router over two "
                    "node databases (see Router); databases DATABASE_router "
                    "and DATABASE_node0/1 are made afresh and dropped at the "
                    "end")
    ap.add_argument("--replay-all", action="store_true",
                    help="with --router: replay regressions/*.json through "
                    "the router too (about 30 s more)")
    ap.add_argument("--rules", default=os.environ.get("MEMTX_MODEL_RULES"),
                    help="pending (default), all, or v3 rules to model by "
                    "name (comma-separated): see model.PENDING_ENGINE_RULES")
    opts = ap.parse_args()
    pending = pending_rules(opts.rules)
    seed = (random.SystemRandom().randrange(1 << 31) if opts.seed == "random"
            else int(opts.seed))
    print("seed %d (traces %d, steps %d, agents %d%s); v3 rules pending in "
          "the engine: %s" % (seed, opts.traces, opts.steps, opts.agents,
                              ", through a router over two nodes"
                              if opts.router else "",
                              ", ".join(sorted(pending)) or "none"),
          flush=True)
    with psycopg.connect(autocommit=True) as boot:
        if not opts.router and not boot.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s",
                (opts.database,)).fetchone():
            boot.execute(sql.SQL("CREATE DATABASE {}").format(
                sql.Identifier(opts.database)))
        agents = setup_roles(boot, 4)
    router = Router(opts.database, agents) if opts.router else None
    try:
        return run_traces(opts, seed, pending, agents, router)
    finally:
        if router:
            router.drop()


def run_traces(opts, seed, pending, agents, router):
    admin = router.connect() if router else psycopg.connect(
        dbname=opts.database, autocommit=True)
    runner = Runner(admin, agents, pending, router)
    passed = failed = 0
    started = time.time()

    # traces that failed through the router are kept apart (regressions/
    # router/) and replay through the router; --replay-all replays the
    # others through the router too
    saved = os.path.join(HERE, "regressions", *(["router"] if router else []))
    files = []
    if not router or opts.replay_all:
        files = sorted(glob.glob(os.path.join(HERE, "regressions", "*.json")))
    if router:
        files += sorted(glob.glob(os.path.join(saved, "*.json")))
    if opts.known:
        files += sorted(glob.glob(os.path.join(HERE, "known",
                                               *(["router"] if router else []),
                                               "*.json")))
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
        if opts.max_failures and failed >= opts.max_failures:
            print("stopped after %d failed traces" % failed)
            break
        rnd = random.Random(("router/%d/%d" if router else "%d/%d")
                            % (seed, i))
        runner.agents = agents[:rnd.randint(2, opts.agents)]
        gen = Generator(rnd, runner.agents, opts.known,
                        lambda r: r not in pending)
        gen.vector = runner.vector
        ops = [gen.config()]
        runner.reset(ops[0])
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
            os.makedirs(saved, exist_ok=True)
            path = os.path.join(saved, "seed%d-trace%d.json" % (seed, i))
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
