#!/usr/bin/python3
"""Fuzzes every function of schema memtx against a populated store.

The functions come from the catalog (pg_proc), so a new API function is
fuzzed without editing this file; a parameter type with no value generator
below is reported as a failure, so a new type cannot slip through unfuzzed.
Each call runs in a transaction of its own (read committed, repeatable
read, serializable, read only, or inside a savepoint whose error the outer
transaction survives and commits, or chained in savepoints with the same
caller's next calls in one transaction), as one of four callers (two agents, a
harness role, a superuser), with arguments built per type: NULL,
boundaries, NaN and +-Infinity, MB-sized text and jsonb, deep jsonb,
100k-element arrays, unknown ids, other agents' records and transactions,
ended and aborted transactions, wrong enum labels, empty and invalid names.

Two passes: a sweep that replaces one argument at a time by every special
value of its type (the others kept plausible), then random combinations
drawn by hypothesis from a printed seed (same seed, same calls).  A call
that succeeds is committed with probability 1/2, so the store moves on
(transactions end, records are revoked, tools registered ...).

A violation is: an error with SQLSTATE XX000 (or another of class XX, or
P0001, a RAISE without a code), a lost connection or a timeout, or a failed
call after which some table of schema memtx differs from before the call.
The tables are compared by a checksum of every row version (ctid, xmin) of
every table of the schema: any insert, update or delete that survives the
call changes it, and it costs no detoasting of MB-sized values.  After the
run memtx.check_invariants() must return no rows and the postmaster must
not have restarted.

Prints one line per function, the figures (calls, functions, errors by
SQLSTATE) and "N passed, N failed" last: one test per function, plus the
invariant check and the restart check.

memtx_vector's functions (SPEC §19) live in schema memtx too: the driver
creates the extension when pgvector is available, so they are fuzzed like
the rest (vectors of every size, the zero vector, unknown models).  Without
pgvector it says so and goes on; under CI (env CI set) that is a failure.

    test/fuzz/fuzz.py [--seed N] [--examples N] [--database NAME]

connecting as a superuser through the PG* environment.  CI scale is the
default (--examples 100, about 90 s); the long run is --examples 1000.
"""

import argparse
import collections
import os
import random
import re
import secrets
import sys
import time

import psycopg
from psycopg import sql
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

# the roles are named after the database (set_roles), so runs in two
# databases of one cluster do not share them
AGENT_A = AGENT_B = HARNESS = HARNESS_GROUP = None
# whether memtx_vector is installed in the fuzzed database (pgvector available)
VECTOR = False
CALLERS = []
CALL_TIMEOUT_MS = 60000
# SQLSTATEs no memtx error may carry: internal errors and code-less RAISEs
BAD_STATE = re.compile(r"^(XX...|P0001)$")

# Functions the driver does not call, and why.  Trigger functions are called
# too: called directly they must refuse with a specific SQLSTATE.
SKIP = {}

HUGE_TEXT = "memtx " * (700 * 1024)                       # ~4 MB
HUGE_JSON = '{"blob": "' + "x" * (2 * 1024 * 1024) + '"}'  # 2 MB string
WIDE_JSON = "{" + ",".join('"k%d": %d' % (i, i) for i in range(100000)) + "}"
DEEP_JSON = "[" * 2000 + "]" * 2000
TOO_DEEP_JSON = "[" * 200000 + "]" * 200000
BIG = 100000


def pg_array(items):
    return "{" + ",".join(items) + "}"


# values of each type that are special whatever the store holds
SPECIAL = {}


def set_roles(prefix):
    global AGENT_A, AGENT_B, HARNESS, HARNESS_GROUP
    AGENT_A, AGENT_B, HARNESS, HARNESS_GROUP = (prefix + "_a", prefix + "_b",
                                                prefix + "_h", prefix + "_harness")
    CALLERS[:] = [AGENT_A, AGENT_B, HARNESS, "superuser"]
    SPECIAL.update(special_values())


def special_values():
    return {
    "bigint": [None, "0", "-1", "1", "9223372036854775807", "-9223372036854775808"],
    "integer": [None, "0", "-1", "1", "1000", "1001", "2147483647", "-2147483648"],
    "double precision": [None, "NaN", "Infinity", "-Infinity", "0", "-0", "1",
                         "1.0000000001", "-1e-300", "0.6", "0.9", "1e308", "4.9e-324"],
    "boolean": [None, "t", "f"],
    "text": [None, "", " ", "default", "ns1", "nowhere", "tool:x", "memory_recall",
             "a" * 64, "a" * 65, "é☃ü", "O'Brien\"; DROP TABLE memtx.records; --",
             "%s%n%x", "%", "_", "\\", "order:1", "status", "PUBLIC", "postgres",
             "pg_monitor", "no_such_role", HARNESS_GROUP, "openai", "anthropic", "mcp",
             "up", "down", "both", "issue_refund", "send_sms", "crm", "p-1", HUGE_TEXT],
    "jsonb": [None, "null", "{}", "[]", "0", "1.0", "-0", "1e1000", '"x"', "true",
              '{"a": {"b": [1, 2, 3]}}', HUGE_JSON, WIDE_JSON, DEEP_JSON, TOO_DEEP_JSON],
    "bigint[]": [None, "{}", "{NULL}", "{0}", "{-1}", "{9223372036854775807}",
                 "{{1,2},{3,4}}", "[5:5]={1}",
                 pg_array(str(9000000000 + i) for i in range(BIG))],
    "text[]": [None, "{}", "{NULL}", '{""}', "{PUBLIC}", "{no_such_role}",
               pg_array([AGENT_A, AGENT_B]), "{{a},{b}}",
               pg_array([AGENT_A, AGENT_B] * (BIG // 2))],
    "timestamp with time zone": [None, "infinity", "-infinity", "2026-01-01 00:00+00",
                                 "4714-11-24 00:00:00+00 BC", "294276-12-31 23:59:59+00",
                                 "epoch", "2100-01-01 00:00+00"],
    "tstzrange": [None, "empty", "(,)", "[-infinity,infinity]",
                  "[2020-01-01 00:00+00,2020-01-02 00:00+00)", "(2100-01-01 00:00+00,)",
                  "[2026-01-01 00:00+00,2026-01-01 00:00+00]", "(,2000-01-01 00:00+00)"],
    "xid8": [None, "0", "1", "3", "1000", "18446744073709551615"],
    "pg_snapshot": [None, "10:20:", "10:20:12,15", "1:1:", "3:3:"],
    "oid": [None, "0", "1", "4294967295"],
    "bytea": [None, "\\x", "\\x00", "\\x" + "00" * 32, "\\x" + "ff" * (1024 * 1024)],
    # pgvector's type (memtx_vector): the model's dimensions, others, the zero
    # vector, extremes, the largest vectors pgvector takes
    "vector": [None, "[1,0.5,0.25]", "[0,0,0]", "[1]", "[1,2,3,4]", "[-3e38,3e38,1e-45]",
               "[" + ",".join(["1"] * 2000) + "]", "[" + ",".join(["0.5"] * 16000) + "]"],
    }
ENUM_EXTRA = [None, "", "bogus", "COMMITTED"]

# how the SQL transaction around a call starts; "savepoint": the call runs in
# a subtransaction, and after an error the outer transaction still commits;
# "chain": the same, but the transaction stays open for the caller's next
# calls (rolled back or not) until another caller or mode comes
MODES = {
    "read committed": "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
    "repeatable read": "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    "serializable": "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
    "read only": "SET TRANSACTION READ ONLY",
    "savepoint": "SAVEPOINT fuzz",
    "chain": "SAVEPOINT fuzz",
}


class Store:
    """The database under test: connections per caller, pools of ids."""

    def __init__(self, dbname, password):
        self.dbname, self.password = dbname, password
        self.conns = {}
        self.admin = None
        self.connect()

    def connect(self):
        for c in list(self.conns.values()) + [self.admin]:
            if c is not None:
                c.close()
        for _ in range(60):     # a crashed backend: wait out the server's recovery
            try:
                return self._connect()
            except psycopg.OperationalError:
                time.sleep(1)
        return self._connect()

    def _connect(self):
        self.admin = psycopg.connect(dbname=self.dbname, autocommit=True)
        self.conns = {"superuser": psycopg.connect(dbname=self.dbname)}
        for role in (AGENT_A, AGENT_B, HARNESS):
            self.conns[role] = psycopg.connect(dbname=self.dbname, user=role,
                                               password=self.password,
                                               host=os.environ.get("PGHOST", "localhost"))
        for c in self.conns.values():
            c.execute("SET statement_timeout = %d" % CALL_TIMEOUT_MS)
            c.execute("SET client_min_messages = warning")
            c.commit()

    def q(self, query, params=None):
        return self.admin.execute(query, params).fetchall()

    def checksum(self):
        if not hasattr(self, "_checksum_sql"):
            tables = [r[0] for r in self.q(
                "SELECT c.oid::regclass::text FROM pg_class c "
                "WHERE c.relnamespace = 'memtx'::regnamespace AND c.relkind IN ('r', 'p') "
                "ORDER BY 1")]
            parts = ["(SELECT %s || ':' || count(*) || ':' || md5(coalesce(string_agg("
                     "ctid::text || xmin::text, ',' ORDER BY ctid), '')) FROM %s)"
                     % ("'%s'" % t, t) for t in tables]
            self._checksum_sql = "SELECT " + " || ' ' || ".join(parts)
            self.tables = tables
        return self.q(self._checksum_sql)[0][0]

    def refresh(self):
        """Reload the pools of ids the generators draw from."""
        self.records = [r[0] for r in self.q("SELECT id FROM memtx.records ORDER BY id")]
        self.txs = [r[0] for r in self.q("SELECT id FROM memtx.transactions ORDER BY id")]
        self.open_tx = {}
        for agent, tx in self.q("SELECT agent, max(id) FROM memtx.transactions "
                                "WHERE status = 'open' GROUP BY agent"):
            self.open_tx[agent] = tx
        self.own_record = {}
        for owner, rec in self.q("SELECT owner, max(id) FROM memtx.records "
                                 "WHERE state IN ('committed', 'action_safe') GROUP BY owner"):
            self.own_record[owner] = rec
        self.proposals = [r[0] for r in self.q(
            "SELECT proposal FROM memtx.records WHERE proposal IS NOT NULL ORDER BY id")]
        self.unknown = str(max(self.records + self.txs + [0]) + 1000000)


def populate(store):
    """Agents, a harness, namespaces, sources, tools and records in every state."""
    s = store.conns

    def run(role, query, params=None):
        conn = s[role]
        rows = conn.execute(query, params).fetchall() if query.lstrip().upper().startswith(
            "SELECT") else conn.execute(query, params)
        conn.commit()
        return rows

    def one(role, query, params=None):
        return run(role, query, params)[0][0]

    run(HARNESS, "SELECT memtx.register_source('crm', 0.8)")
    run(HARNESS, "SELECT memtx.register_source('web', 0.3)")
    run(HARNESS, "SELECT memtx.register_source('oracle', 0.95, ARRAY[%s])", (AGENT_A,))
    run(HARNESS, "SELECT memtx.register_tool('issue_refund', false)")
    run(HARNESS, "SELECT memtx.register_tool('send_sms', true, 'recall_sms')")
    run(HARNESS, "SELECT memtx.set_role_tier(%s, 'high')", (AGENT_B,))
    for agent in (AGENT_A, AGENT_B):
        run(HARNESS, "SELECT memtx.grant_namespace('ns1', %s)", (agent,))

    # agent a: a committed plan with a derived summary and an allowed action
    tx = one(AGENT_A, "SELECT memtx.begin()")
    base = one(AGENT_A, "SELECT memtx.stage(%s, 'order:1', 'status', '\"paid\"', source => 'crm', "
               "confidence => 0.9, scope => 'shared', readers => ARRAY[%s])", (tx, AGENT_B))
    one(AGENT_A, "SELECT memtx.stage(%s, 'order:1', 'summary', '\"paid order\"', kind => 'summary', "
        "derived_from => ARRAY[%s::bigint], proposal => 'p-1')", (tx, base))
    one(AGENT_A, "SELECT memtx.stage(%s, 'order:2', 'status', '\"open\"', confidence => 0.1)", (tx,))
    run(AGENT_A, "SELECT * FROM memtx.commit(%s)", (tx,))
    run(AGENT_A, "SELECT * FROM memtx.act(%s, 'issue_refund', '{\"order\": 1}', "
        "derived_from => ARRAY[%s::bigint], effect_key => 'refund-1')", (tx, base))
    run(AGENT_A, "SELECT * FROM memtx.act(%s, 'send_sms', '{\"to\": 1}', "
        "derived_from => ARRAY[%s::bigint])", (tx, base))
    # agent b reads a's shared record and disagrees with equal authority
    txb = one(AGENT_B, "SELECT memtx.begin(namespace => 'default')")
    run(AGENT_B, "SELECT * FROM memtx.read(%s)", (txb,))
    one(AGENT_B, "SELECT memtx.stage(%s, 'order:1', 'status', '\"refunded\"', source => 'crm', "
        "confidence => 0.9)", (txb,))
    run(AGENT_B, "SELECT * FROM memtx.commit(%s)", (txb,))
    # a revoked belief with a cascade, an aborted transaction, an erased record
    tx = one(AGENT_A, "SELECT memtx.begin(namespace => 'ns1')")
    r1 = one(AGENT_A, "SELECT memtx.stage(%s, 'user:7', 'email', '\"a@example.org\"')", (tx,))
    one(AGENT_A, "SELECT memtx.stage(%s, 'user:7', 'profile', '{\"mail\": 1}', kind => 'profile', "
        "derived_from => ARRAY[%s::bigint])", (tx, r1))
    r3 = one(AGENT_A, "SELECT memtx.stage(%s, 'user:7', 'phone', '\"555\"')", (tx,))
    run(AGENT_A, "SELECT * FROM memtx.commit(%s)", (tx,))
    run(AGENT_A, "SELECT * FROM memtx.act(%s, 'send_sms', '{\"to\": 7}', "
        "derived_from => ARRAY[%s::bigint])", (tx, r1))
    run(AGENT_A, "SELECT * FROM memtx.revoke(%s, 'wrong address')", (r1,))
    run(HARNESS, "SELECT * FROM memtx.erase(%s, 'request')", (r3,))
    tx = one(AGENT_A, "SELECT memtx.begin()")
    one(AGENT_A, "SELECT memtx.stage(%s, 'order:3', 'status', '\"lost\"')", (tx,))
    run(AGENT_A, "SELECT * FROM memtx.abort(%s)", (tx,))
    # a proposal, a harness transaction on a's behalf, transactions left open
    run(AGENT_A, "SELECT * FROM memtx.propose('order:4', 'status', '\"new\"', proposal => 'p-2')")
    tx = one(HARNESS, "SELECT memtx.begin('external_action', %s)", (AGENT_A,))
    one(HARNESS, "SELECT memtx.stage(%s, 'order:5', 'status', '\"held\"')", (tx,))
    for agent in (AGENT_A, AGENT_B):
        tx = one(agent, "SELECT memtx.begin(namespace => 'ns1')")
        one(agent, "SELECT memtx.stage(%s, 'order:6', 'status', %s)", (tx, '"%s"' % agent))
    run(HARNESS, "SELECT memtx.register_source('web', 0.35)")
    if VECTOR:
        # embedding models and embeddings (memtx_vector): a's records under m3
        run(HARNESS, "SELECT memtx.register_embedding_model('m3', 3)")
        run(HARNESS, "SELECT memtx.register_embedding_model('m3_l2', 3, 'l2')")
        run(AGENT_A, "SELECT count(memtx.embed(id, 'm3', format('[%%s,1,0]', id)::vector)) "
            "FROM memtx.records WHERE owner = %s AND erased_at IS NULL", (AGENT_A,))


def signature_list(store):
    rows = store.q("""
        SELECT p.oid, p.proname, p.pronargs, p.pronargdefaults,
               coalesce(p.proargnames[1:p.pronargs], '{}'),
               ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, i)
                     ORDER BY i)
        FROM pg_proc p
        WHERE p.pronamespace = 'memtx'::regnamespace AND p.prokind = 'f'
        ORDER BY p.proname, p.oid""")
    funcs = []
    for oid, name, nargs, ndefaults, names, types in rows:
        if name in SKIP:
            continue
        names = list(names) + [""] * (nargs - len(names))
        funcs.append({"oid": oid, "name": name, "nargs": nargs, "ndefaults": ndefaults,
                      "names": names, "types": types})
    return funcs


def enum_labels(store):
    labels = {}
    for typ, label in store.q("SELECT format_type(enumtypid, NULL), enumlabel FROM pg_enum "
                              "WHERE enumtypid IN (SELECT oid FROM pg_type "
                              "WHERE typnamespace = 'memtx'::regnamespace) "
                              "ORDER BY enumtypid, enumsortorder"):
        labels.setdefault(typ, []).append(label)
    return labels


class Fuzzer:
    def __init__(self, store, enums, max_seconds):
        self.store, self.enums = store, enums
        self.calls = 0
        self.states = collections.Counter()
        self.violations = collections.defaultdict(list)
        self.deadline = time.monotonic() + max_seconds
        self.covered = set()
        self.chain = None
        self.by_function = collections.defaultdict(collections.Counter)
        self.store.refresh()
        self.sum = store.checksum()

    # -- values ---------------------------------------------------------
    def specials(self, typ):
        if typ in self.enums:
            return self.enums[typ] + ENUM_EXTRA
        return SPECIAL.get(typ)

    def pool(self, typ, name, caller):
        """Values drawn from the store: ids, ids of others, names in use."""
        s = self.store
        if typ == "bigint":
            ids = s.txs if name == "tx" else s.records
            return [str(i) for i in ids] + [s.unknown]
        if typ == "bigint[]":
            recs = [str(i) for i in s.records]
            return ([pg_array([r]) for r in recs] + [pg_array(recs)]
                    + [pg_array(recs[:1] * BIG)] if recs else [])
        if typ == "text" and name == "proposal":
            return s.proposals + ["p-new-%d" % self.calls]
        if typ == "text" and name in ("role", "owner", "agent"):
            return [AGENT_A, AGENT_B, HARNESS, HARNESS_GROUP]
        if typ == "text" and name == "model":
            return ["m3", "m3_l2", "nope"]
        return []

    def plausible(self, typ, name, caller, index):
        """A value for a parameter that is not the one under test."""
        s = self.store
        role = caller if caller != "superuser" else AGENT_A
        if typ == "bigint" and name == "tx":
            return str(s.open_tx.get(role) or self.begin(role))
        if typ == "bigint" and name in ("record", "pos", "snapshot_pos"):
            return str(s.own_record.get(role) or (s.records[-1] if s.records else 1))
        if typ == "bigint" and name == "expected_head":
            return None
        if typ == "text":
            by_name = {"entity": "order:%d" % (index % 7), "attribute": "status",
                       "namespace": "default", "tool": "issue_refund", "role": role,
                       "owner": role, "agent": role, "format": "openai", "direction": "down",
                       "query": "order status", "name": "fuzz_tool", "proposal": None,
                       "compensator": None, "entity_prefix": "order", "model": "m3",
                       "distance": "cosine"}
            if name.endswith("namespace"):
                return "default"
            if name.endswith("entity"):
                return "order:1"
            if name.endswith("attribute"):
                return "status"
            return by_name.get(name, "x")
        if typ == "jsonb":
            return '{"v": %d}' % index
        if typ == "double precision":
            return "0.9"
        if typ == "integer":
            return "3" if name == "dims" else "8"
        if typ == "vector":
            return "[%d,0.5,0.25]" % (index % 5 + 1)
        if typ == "bigint[]" or typ == "text[]" or typ == "tstzrange":
            return None if typ != "bigint[]" else "{}"
        if typ in self.enums:
            return self.enums[typ][min(1, len(self.enums[typ]) - 1)]
        if typ == "timestamp with time zone":
            return "now" if name == "at" else None
        values = self.specials(typ)
        return values[1] if values else None

    def begin(self, role):
        if self.chain:
            self.end_chain()
        conn = self.store.conns[role]
        try:
            tx = conn.execute("SELECT memtx.begin()").fetchone()[0]
            conn.commit()
        except psycopg.Error:
            conn.rollback()
            self.heal()
            tx = 0
        self.store.refresh()
        self.sum = self.store.checksum()
        return tx

    def heal(self):
        """Lift fences the fuzzing put on the callers, so they can go on writing."""
        if self.chain:
            self.end_chain()
        conn = self.store.conns["superuser"]
        for role in (AGENT_A, AGENT_B, HARNESS):
            conn.execute("SELECT memtx.unfence(%s)", (role,))
        conn.commit()
        self.sum = self.store.checksum()
        self.store.refresh()

    # -- one call -------------------------------------------------------
    def call(self, func, caller, args, named, keep, mode="read committed"):
        """Runs one call in a transaction of its own (MODES); records a violation."""
        if time.monotonic() > self.deadline:
            return
        params, parts = [], []
        for i, (typ, value) in enumerate(args):
            name = func["names"][i]
            if value is _OMIT:
                continue
            expr = "%s::" + typ if value is not None else "NULL::" + typ
            if value is not None:
                params.append(value)
            parts.append('"%s" => %s' % (name, expr) if named and name else expr)
        query = "SELECT * FROM memtx.%s(%s)" % (func["name"], ", ".join(parts))
        if self.chain and (self.chain[0] != caller or mode != "chain"):
            self.end_chain()
        conn = self.store.conns[caller]
        self.calls += 1
        self.covered.add(func["oid"])
        trace = "as %s, %s: %s  -- %s" % (caller, mode, query,
                                            ", ".join(_short(p) for p in params))
        failed = False
        try:
            conn.execute(MODES[mode])
            conn.execute(query, params).fetchall()
            if mode == "chain":
                self.chain = (caller, func["name"], trace)
                self.tally(func, "ok")
                return
            if keep:
                conn.commit()
            else:
                conn.rollback()
            self.tally(func, "ok")
        except psycopg.Error as e:
            failed = True
            state = e.sqlstate
            if state is None or conn.broken:
                self.tally(func, "connection lost")
                self.violations[func["name"]].append("connection lost (%s) %s" % (e, trace))
                self.chain = None
                self.store.connect()
                self.sum = self.store.checksum()
                return
            self.tally(func, state)
            msg = str(e).splitlines()[0] if str(e) else ""
            if BAD_STATE.match(state) or state == "57014":
                self.violations[func["name"]].append("%s %s: %s" % (state, msg, trace))
            try:
                if mode in ("savepoint", "chain"):
                    # the error rolled back to the savepoint: the rest commits
                    conn.execute("ROLLBACK TO SAVEPOINT fuzz")
                    if mode == "chain":
                        self.chain = (caller, func["name"], trace)
                        return
                    conn.commit()
                else:
                    conn.rollback()
            except psycopg.Error as e2:
                self.violations[func["name"]].append(
                    "%s after the failed call: %s: %s" % (e2.sqlstate, e2, trace))
                conn.rollback()
        after = self.store.checksum()
        if failed and after != self.sum:
            self.violations[func["name"]].append("failed call changed %s: %s" % (
                _diff(self.store.tables, self.sum, after), trace))
        if after != self.sum:
            self.sum = after
            self.store.refresh()

    def tally(self, func, outcome):
        self.states[outcome] += 1
        self.by_function[func["name"]][outcome] += 1

    def end_chain(self):
        """Commits the transaction a chain of calls left open."""
        caller, name, trace = self.chain
        self.chain = None
        conn = self.store.conns[caller]
        try:
            conn.commit()
        except psycopg.Error as e:
            if e.sqlstate is None or BAD_STATE.match(e.sqlstate):
                self.violations[name].append("%s at the commit after a chain of calls "
                                             "ending with %s" % (e.sqlstate, trace))
            self.states[e.sqlstate or "connection lost"] += 1
            if conn.broken:
                self.store.connect()
            else:
                conn.rollback()
        self.sum = self.store.checksum()
        self.store.refresh()

    # -- the passes -----------------------------------------------------
    def sweep(self, func):
        """One argument at a time through every special value of its type."""
        types = func["types"]
        index = 0
        for pos, typ in enumerate(types):
            values = self.specials(typ)
            if values is None:
                self.violations[func["name"]].append("no values for parameter type %s" % typ)
                return
            extra = self.pool(typ, func["names"][pos], CALLERS[0])
            for value in values + extra[:3] + extra[-2:]:
                caller = CALLERS[index % len(CALLERS)]
                args = [(t, value if i == pos else
                         self.plausible(t, func["names"][i], caller, index))
                        for i, t in enumerate(types)]
                self.call(func, caller, args, named=bool(index % 2), keep=bool(index % 2),
                          mode="savepoint" if index % 3 == 0 else "read committed")
                index += 1
        if not types:
            for caller in CALLERS:
                self.call(func, caller, [], named=False, keep=False)

    def random_calls(self, func, examples, seed_value):
        types = func["types"]
        if any(self.specials(t) is None for t in types):
            return
        first_default = func["nargs"] - func["ndefaults"]

        @seed(seed_value)
        @settings(max_examples=examples, database=None, deadline=None,
                  phases=[Phase.generate], derandomize=False,
                  suppress_health_check=list(HealthCheck))
        @given(st.data())
        def calls(data):
            caller = data.draw(st.sampled_from(CALLERS))
            named = data.draw(st.booleans())
            # half the calls make at most two arguments hostile and keep the rest
            # plausible, so combinations reach past the first argument check
            few = data.draw(st.booleans())
            hostile = data.draw(st.sets(st.integers(0, max(0, len(types) - 1)), max_size=2))
            args = []
            for i, typ in enumerate(types):
                name = func["names"][i]
                # the pools change as the store moves on: draw a position, not a
                # member, so hypothesis sees the same choices on every run
                source = data.draw(st.sampled_from(["special", "plausible", "store", "omit"]))
                if few and i not in hostile:
                    source = "plausible"
                k = data.draw(st.integers(0, 2 ** 20))
                pool = self.pool(typ, name, caller)
                if source == "omit" and named and name and i >= first_default:
                    value = _OMIT
                elif source == "store" and pool:
                    value = pool[k % len(pool)]
                elif source == "plausible":
                    value = self.plausible(typ, name, caller, k)
                else:
                    specials = self.specials(typ)
                    value = specials[k % len(specials)]
                args.append((typ, value))
            self.call(func, caller, args, named=named, keep=data.draw(st.booleans()),
                      mode=data.draw(st.sampled_from(sorted(MODES))))

        calls()


class _Omit:
    pass


_OMIT = _Omit()


def _short(value):
    if value is None:
        return "NULL"
    text = str(value)
    return repr(text) if len(text) <= 60 else "<%d chars: %r...>" % (len(text), text[:30])


def _diff(tables, before, after):
    b, a = before.split(" "), after.split(" ")
    return ", ".join(t for t, x, y in zip(tables, b, a) if x != y) or "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", default="20261203",
                    help="hypothesis seed (an integer, or 'random')")
    ap.add_argument("--examples", type=int, default=100,
                    help="random calls per function (CI: 100; long run: 1000)")
    ap.add_argument("--database", default="memtx_fuzz")
    ap.add_argument("--max-seconds", type=float, default=3600,
                    help="stop calling after this long (a safety net, not a budget)")
    opts = ap.parse_args()
    set_roles(opts.database)
    seed_value = random.randrange(2 ** 32) if opts.seed == "random" else int(opts.seed)
    print("fuzz: seed %d, %d random calls per function (repeat with --seed %d --examples %d)"
          % (seed_value, opts.examples, seed_value, opts.examples), flush=True)
    started = time.monotonic()

    password = secrets.token_hex(16)
    with psycopg.connect(autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(opts.database)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(opts.database)))
        for role in (AGENT_A, AGENT_B, HARNESS, HARNESS_GROUP):
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
        for role in (AGENT_A, AGENT_B, HARNESS):
            admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)))
        admin.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(HARNESS_GROUP)))
        admin.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(HARNESS_GROUP),
                                                        sql.Identifier(HARNESS)))
        admin.execute(sql.SQL("ALTER DATABASE {} SET memtx.harness_role = {}").format(
            sql.Identifier(opts.database), sql.Literal(HARNESS_GROUP)))
        # agent b's leases run out during the run: calls on expired transactions
        admin.execute(sql.SQL("ALTER ROLE {} SET memtx.lease_timeout = 5").format(
            sql.Identifier(AGENT_B)))
        boot = admin.execute("SELECT pg_postmaster_start_time()").fetchone()[0]
    global VECTOR
    with psycopg.connect(dbname=opts.database, autocommit=True) as conn:
        conn.execute("SET client_min_messages = warning")
        conn.execute("CREATE EXTENSION memtx CASCADE")
        VECTOR = bool(conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector' "
            "AND string_to_array(split_part(default_version, '-', 1), '.')::int[] >= '{0,8,0}'").fetchall())
        if VECTOR:
            conn.execute("CREATE EXTENSION memtx_vector CASCADE")
        else:
            print("fuzz: pgvector >= 0.8.0 is not installed: memtx_vector's functions are not fuzzed "
                  "(apt install postgresql-15-pgvector, or bash scripts/deps.sh)", flush=True)

    store = Store(opts.database, password)
    populate(store)
    funcs = signature_list(store)
    fuzzer = Fuzzer(store, enum_labels(store), opts.max_seconds)
    passed = failed = 0
    if not VECTOR and os.environ.get("CI"):
        failed += 1
        print("not ok memtx_vector fuzzed: pgvector is missing, and a skip fails under CI")
    for n, func in enumerate(funcs):
        before = fuzzer.calls
        fuzzer.sweep(func)
        fuzzer.random_calls(func, opts.examples, seed_value + n)
        fuzzer.heal()
        bad = fuzzer.violations.get(func["name"] + "", [])
        label = "memtx.%s(%s)" % (func["name"], ", ".join(func["types"]))
        if bad:
            failed += 1
            print("not ok %s: %d calls, %d violations" % (label, fuzzer.calls - before, len(bad)))
            for line in bad[:10]:
                print("    " + line)
        else:
            passed += 1
            outcomes = fuzzer.by_function[func["name"]].most_common(6)
            print("ok %s: %d calls (%s)" % (label, fuzzer.calls - before,
                                            ", ".join("%s %d" % kv for kv in outcomes)),
                  flush=True)

    broken = store.q("SELECT invariant, record_id, detail FROM memtx.check_invariants()")
    if broken:
        failed += 1
        print("not ok check_invariants() after the run: %s" % broken[:10])
    else:
        passed += 1
        print("ok check_invariants() after the run: no rows")
    store.connect()
    restarted = store.q("SELECT pg_postmaster_start_time()")[0][0] != boot
    if restarted or fuzzer.states["connection lost"]:
        failed += 1
        print("not ok no backend crash: the server restarted or a connection was lost")
    else:
        passed += 1
        print("ok no backend crash (postmaster start time unchanged)")

    errors = sorted((k, v) for k, v in fuzzer.states.items() if k != "ok")
    print("fuzz figures: %d calls, %d of %d functions covered, %d succeeded, %d errors, "
          "%.0f s, seed %d" % (fuzzer.calls, len(fuzzer.covered), len(funcs),
                               fuzzer.states["ok"], sum(v for _, v in errors),
                               time.monotonic() - started, seed_value))
    print("errors by SQLSTATE: " + ", ".join("%s %d" % kv for kv in errors))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
