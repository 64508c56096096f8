#!/usr/bin/python3
"""memtx through a router (SPEC §20), against a router database built by
test/router/make-router.sh over node databases of the server the PG*
environment names (a superuser):

    test_router.py ROUTER_DB NODE_DB0 NODE_DB1

  drift     sql/memtx_router.sql is what scripts/gen-router.py makes of the
            nodes' live catalog; memtx_router.check_nodes() finds nothing;
            and both fail when they should (a function the generator does
            not know, a stale file, a node function without a twin, a
            changed signature, an enum label, swapped partitions)
  flow      a protocol flow through the router in a namespace of each node:
            every call lands on its namespace's node, ids carry the node,
            store-wide calls reach every node, views sum or unite them, a
            client ROLLBACK does not undo a routed call, NULL and malformed
            routing arguments get memtx's own errors
  attacks   another agent's transaction, harness calls, the per-node
            functions called directly, a session acting as another role
  node down one node taken down while two clients commit on both: its
            namespaces fail with 08001/08006 naming it, the other's keep
            committing, nothing half-applied, and it comes back

Prints "ok"/"not ok" lines and last "N passed, N failed".
"""

import hashlib
import os
import subprocess
import sys
import threading
import time

import psycopg
from psycopg import sql

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
PASSWORD = "memtx-router-test"
PREFIX = "memtx_rt_"

passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok - %s" % name)
    else:
        failed += 1
        print("not ok - %s%s" % (name, (": %s" % detail) if detail else ""))
    return cond


def node_of(namespace):
    return int.from_bytes(hashlib.sha256(namespace.encode()).digest()[:4], "big") & 0x7FFFFFFF


def namespace_on(base, node, nodes):
    k = 0
    while True:
        ns = "%s-%d" % (base, k)
        if node_of(ns) % nodes == node:
            return ns
        k += 1


def error_of(conn, query, params=()):
    """(sqlstate, message) of the error query raises, or (None, rows)."""
    try:
        with conn.transaction():
            return None, conn.execute(query, params).fetchall()
    except psycopg.Error as e:
        return e.sqlstate, e.diag.message_primary


class Setup:
    def __init__(self, router, nodes):
        self.router_db, self.node_dbs = router, nodes
        self.admin = psycopg.connect(dbname=router, autocommit=True)
        self.nodes = [psycopg.connect(dbname=d, autocommit=True) for d in nodes]
        self.roles = []

    def agent(self, name, login=True):
        role = PREFIX + name
        a = self.admin
        a.execute(sql.SQL("DROP USER MAPPING IF EXISTS FOR {} SERVER memtx_nodes").format(sql.Identifier(role)))
        a.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
        a.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(PASSWORD)))
        a.execute(sql.SQL("CREATE USER MAPPING FOR {} SERVER memtx_nodes OPTIONS (password {})")
                  .format(sql.Identifier(role), sql.Literal(PASSWORD)))
        self.roles.append(role)
        return role

    def login(self, role):
        return psycopg.connect(dbname=self.router_db, user=role, password=PASSWORD, autocommit=True)

    def cleanup(self):
        for role in reversed(self.roles):
            self.admin.execute(sql.SQL("DROP USER MAPPING IF EXISTS FOR {} SERVER memtx_nodes")
                               .format(sql.Identifier(role)))
            self.admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


# ------------------------------------------------------------------- drift

def drift(s):
    gen = [sys.executable, os.path.join(TOP, "scripts", "gen-router.py")]
    committed = os.path.join(TOP, "sql", "memtx_router.sql")
    r = subprocess.run(gen + ["--dbname", s.node_dbs[0], "--check", committed], capture_output=True, text=True)
    check("sql/memtx_router.sql is what gen-router.py makes of the nodes' catalog", r.returncode == 0,
          (r.stderr + r.stdout)[-3000:])
    rows = s.admin.execute("SELECT node, problem FROM memtx_router.check_nodes()").fetchall()
    check("memtx_router.check_nodes() finds no difference between the router and its nodes", rows == [], rows)

    # the generator stops at a function it does not know
    scratch = s.router_db + "_scratch"
    with psycopg.connect(dbname=s.router_db, autocommit=True) as c:
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(scratch)))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(scratch)))
    try:
        with psycopg.connect(dbname=scratch, autocommit=True) as c:
            c.execute("SET client_min_messages = warning")
            c.execute("CREATE EXTENSION memtx CASCADE")
            c.execute("CREATE FUNCTION memtx.drift_probe(tx bigint) RETURNS integer LANGUAGE sql RETURN 1")
        r = subprocess.run(gen + ["--dbname", scratch, "--output", os.devnull], capture_output=True, text=True)
        check("gen-router.py refuses a memtx function it has no routing rule for",
              r.returncode == 2 and "memtx.drift_probe(bigint)" in r.stderr, r.stderr)
    finally:
        with psycopg.connect(dbname=s.router_db, autocommit=True) as c:
            c.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(scratch)))
    # --check fails on a stale file
    stale = os.path.join(os.environ.get("TMPDIR", "/tmp"), "memtx_router_stale_%d.sql" % os.getpid())
    with open(committed) as src, open(stale, "w") as dst:
        dst.write(src.read().replace("memtx.outcome", "memtx.outcome_of_old", 1))
    try:
        r = subprocess.run(gen + ["--dbname", s.node_dbs[0], "--check", stale], capture_output=True, text=True)
        check("gen-router.py --check fails on a stale router file", r.returncode == 1 and "stale" in r.stderr,
              r.stderr)
    finally:
        os.unlink(stale)

    def problems():
        return [p for n, p in s.admin.execute("SELECT node, problem FROM memtx_router.check_nodes()").fetchall()]
    # a node function without a twin
    s.nodes[1].execute("CREATE FUNCTION memtx.drift_probe(tx bigint) RETURNS integer LANGUAGE sql RETURN 1")
    try:
        check("check_nodes finds a node function without a router twin",
              "memtx.drift_probe(tx bigint) has no router twin" in problems(), problems())
    finally:
        s.nodes[1].execute("DROP FUNCTION memtx.drift_probe(bigint)")
    # a stale router: a signature changed, a label added, partitions swapped
    a = s.admin
    with a.transaction(force_rollback=True):
        a.execute("ALTER EXTENSION memtx_router DROP FUNCTION memtx.outcome(text, text, text)")
        a.execute("DROP FUNCTION memtx.outcome(text, text, text)")
        a.execute("CREATE FUNCTION memtx.outcome(proposal text, namespace text DEFAULT 'default', agent text DEFAULT NULL,"
                  " since text DEFAULT NULL)"
                  " RETURNS TABLE (record_id bigint, tx_id bigint, state memtx.state, reason text, tx_status text)"
                  " LANGUAGE sql AS 'SELECT NULL::bigint, NULL::bigint, NULL::memtx.state, NULL, NULL'")
        p = problems()
        check("check_nodes finds a router function whose signature the nodes do not have",
              any(x.startswith("memtx.outcome(proposal text, namespace text, agent text, since text) exists on the router only")
                  for x in p) and any(x.startswith("memtx.outcome(proposal text, namespace text, agent text) has no router twin")
                                      for x in p), p)
    with a.transaction(force_rollback=True):
        a.execute("ALTER TYPE memtx.kind ADD VALUE 'drift_probe'")
        p = problems()
        check("check_nodes finds an enum whose labels differ from the nodes'",
              any(x.startswith("type memtx.kind differs") for x in p), p)
    with a.transaction(force_rollback=True):
        opts = dict(a.execute("SELECT option_name, option_value FROM pg_foreign_server s, "
                              "pg_options_to_table(s.srvoptions) WHERE s.srvname = 'memtx_nodes'").fetchall())
        a.execute(sql.SQL("ALTER SERVER memtx_nodes OPTIONS (SET p0 {}, SET p1 {})").format(
            sql.Literal(opts["p1"]), sql.Literal(opts["p0"])))
        p = problems()
        check("check_nodes finds nodes whose stores carry another partition's number",
              sum("its store is node" in x for x in p) == 2, p)
    check("the router is the twin of its nodes again", problems() == [], problems())


# -------------------------------------------------------------------- flow

def flow(s):
    a, n = s.admin, len(s.nodes)
    ns = [namespace_on("flow", i, n) for i in range(n)]
    agent_a, agent_b = s.agent("a"), s.agent("b")
    a.execute("SELECT memtx.register_source('crm', 0.8)")
    a.execute("SELECT memtx.register_tool('ship_order', false)")
    a.execute("SELECT memtx.register_tool('hold_order', true, 'release_order')")
    a.execute("SELECT memtx.set_role_tier(%s, 'medium')", (agent_b,))
    for x in ns:
        a.execute("SELECT memtx.grant_namespace(%s, %s)", (x, agent_a))
    check("registries and grants reach every node",
          all(c.execute("SELECT (SELECT count(*) FROM memtx.tools WHERE name IN ('ship_order', 'hold_order')) = 2 "
                         "AND (SELECT count(*) FROM memtx.namespace_members WHERE role_name = %s) = %s "
                         "AND EXISTS (SELECT 1 FROM memtx.role_tiers WHERE role_name = %s)",
                         (agent_a, n, agent_b)).fetchone()[0] for c in s.nodes))

    ca = s.login(agent_a)
    for i, x in enumerate(ns):
        tx = ca.execute("SELECT memtx.begin(namespace => %s)", (x,)).fetchone()[0]
        check("node %d: begin in its namespace allocates the node's id" % i, tx >> 48 == i, tx)
        rec = ca.execute("SELECT memtx.stage(%s, 'order:1', 'paid', 'true', source => 'crm')", (tx,)).fetchone()[0]
        g = ca.execute("SELECT allowed, reason, blockers FROM memtx.gate(%s, 'ship_order')", (tx,)).fetchone()
        check("node %d: the gate blocks on the tentative record" % i, g == (False, "in_flight_tentative", [rec]), g)
        out = ca.execute("SELECT record_id, state::text, reason FROM memtx.commit(%s)", (tx,)).fetchall()
        check("node %d: commit" % i, out == [(rec, "committed", None)], out)
        act = ca.execute("SELECT allowed, action_id FROM memtx.act(%s, 'ship_order', '{\"order\": 1}', ARRAY[%s::bigint])",
                         (tx, rec)).fetchone()
        check("node %d: act is allowed and its action id carries the node" % i,
              act[0] and act[1] >> 48 == i, act)
        read = ca.execute("SELECT id FROM memtx.read(%s, 'order:1')", (tx,)).fetchall()
        check("node %d: read" % i, read == [(rec,)], read)
        hits = ca.execute("SELECT record_id FROM memtx.recall(%s, 'paid order')", (tx,)).fetchall()
        check("node %d: recall" % i, (rec,) in hits, hits)
        look = ca.execute("SELECT id, state::text FROM memtx.lookup('order:1', 'paid', %s)", (x,)).fetchall()
        check("node %d: lookup" % i, look == [(rec, "committed")], look)
        prop = ca.execute("SELECT tx_id, record_id, state::text FROM memtx.propose('order:2', 'status', '\"shipped\"', "
                          "expected_head => 0, proposal => 'p-1', namespace => %s)", (x,)).fetchone()
        again = ca.execute("SELECT tx_id, record_id, state::text FROM memtx.propose('order:2', 'status', '\"shipped\"', "
                           "expected_head => 0, proposal => 'p-1', namespace => %s)", (x,)).fetchone()
        outc = ca.execute("SELECT record_id, state::text FROM memtx.outcome('p-1', %s)", (x,)).fetchone()
        check("node %d: propose, its retry and outcome" % i,
              prop[2] == "committed" and again == prop and outc == (prop[1], "committed") and prop[1] >> 48 == i,
              (prop, again, outc))
        tx2 = ca.execute("SELECT memtx.begin(namespace => %s)", (x,)).fetchone()[0]
        many = ca.execute("SELECT * FROM memtx.stage_many(%s, %s::jsonb)",
                          (tx2, '[{"entity": "order:3", "attribute": "a", "value": 1}, '
                                '{"entity": "order:3", "attribute": "b", "value": 2}]')).fetchall()
        check("node %d: stage_many" % i, len(many) == 2 and all(r[0] >> 48 == i for r in many), many)
        ca.execute("SELECT count(*) FROM memtx.abort(%s)", (tx2,))
        dot = ca.execute("SELECT memtx.lineage_dot(%s)", (rec,)).fetchone()[0]
        check("node %d: lineage_dot" % i, dot.startswith("digraph"), dot)
        rep = ca.execute("SELECT kind::text, action FROM memtx.revoke(%s, 'wrong') ORDER BY id", (rec,)).fetchall()
        check("node %d: revoke repairs the action derived from the record" % i,
              rep == [("belief", "revoked"), ("tool_action", "leaked")], rep)
        here = s.nodes[i].execute("SELECT count(*) FROM memtx.transactions WHERE namespace = %s", (x,)).fetchone()[0]
        elsewhere = sum(c.execute("SELECT count(*) FROM memtx.transactions WHERE namespace = %s", (x,)).fetchone()[0]
                        for j, c in enumerate(s.nodes) if j != i)
        check("node %d: every transaction of its namespace is on it, none elsewhere" % i,
              here == 3 and elsewhere == 0, (here, elsewhere))

    # store-wide calls
    epoch = a.execute("SELECT memtx.fence(%s)", (agent_b,)).fetchone()[0]
    epochs = [c.execute("SELECT memtx.writer_epoch(%s)", (agent_b,)).fetchone()[0] for c in s.nodes]
    check("fence reaches every node and returns the epoch", epoch == 1 and epochs == [1] * n, (epoch, epochs))
    check("writer_epoch through the router", a.execute("SELECT memtx.writer_epoch(%s)", (agent_b,)).fetchone()[0] == 1)
    a.execute("SELECT memtx.unfence(%s)", (agent_b,))
    check("unfence reaches every node",
          all(c.execute("SELECT bool_and(unfenced_at IS NOT NULL) FROM memtx.writer_epochs WHERE role_name = %s",
                        (agent_b,)).fetchone()[0] for c in s.nodes))
    inv = a.execute("SELECT * FROM memtx.check_invariants()").fetchall()
    check("check_invariants() over every node is empty", inv == [], inv)
    rec = a.execute("SELECT namespace, first_bad_seq FROM memtx.verify_receipts() ORDER BY 1").fetchall()
    check("verify_receipts() returns the union of every node's chains",
          sorted(r[0] for r in rec if r[0] in ns) == sorted(ns) and all(r[1] is None for r in rec), rec)
    one = a.execute("SELECT namespace FROM memtx.verify_receipts(%s)", (ns[1],)).fetchall()
    check("verify_receipts(namespace) runs on its node only", one == [(ns[1],)], one)
    check("expire_transactions() runs on every node", a.execute(
        "SELECT count(*) FROM memtx.expire_transactions()").fetchone()[0] == 0)
    stats = a.execute("SELECT transactions, commits, actions_allowed, cascades FROM memtx.stats").fetchone()
    parts = [c.execute("SELECT transactions, commits, actions_allowed, cascades FROM memtx.stats").fetchone()
             for c in s.nodes]
    check("memtx.stats sums every node's counters",
          list(stats) == [sum(p[k] for p in parts) for k in range(4)], (stats, parts))
    per = a.execute("SELECT node, transactions FROM memtx_router.node_stats() ORDER BY node").fetchall()
    check("memtx_router.node_stats() has a row per node", per == [(i, parts[i][0]) for i in range(n)], per)
    tx_open = ca.execute("SELECT memtx.begin(namespace => %s)", (ns[0],)).fetchone()[0]
    ca.execute("SELECT memtx.stage(%s, 'order:9', 'x', '1')", (tx_open,))
    fl = a.execute("SELECT tx_id FROM memtx.in_flight").fetchall()
    check("memtx.in_flight unites every node's tentative records", fl == [(tx_open,)], fl)
    ca.execute("SELECT count(*) FROM memtx.abort(%s)", (tx_open,))
    check("tool_specs, now and is_harness answer through the router",
          a.execute("SELECT jsonb_array_length(memtx.tool_specs('mcp')) >= 9, memtx.now() IS NOT NULL, "
                    "memtx.is_harness()").fetchone() == (True, True, True))
    check("node_of and id_node are the nodes' own",
          a.execute("SELECT memtx.node_of('default'), memtx.id_node(3::bigint << 48)").fetchone() == (933818049, 3))

    # a routed call commits on its node on its own
    with ca.transaction(force_rollback=True):
        gone = ca.execute("SELECT record_id FROM memtx.propose('order:5', 'x', '1', namespace => %s)",
                          (ns[1],)).fetchone()[0]
    kept = s.nodes[1].execute("SELECT state::text FROM memtx.records WHERE id = %s", (gone,)).fetchone()
    check("a client ROLLBACK on the router does not undo a routed call (documented)", kept == ("committed",), kept)

    # routing arguments: memtx's own errors, never PL/Proxy's
    for query, params, want in (
            ("SELECT memtx.stage(NULL, 'e', 'a', '1')", (), ("22004", "transaction id must not be null")),
            ("SELECT memtx.commit(NULL)", (), ("22004", None)),
            ("SELECT memtx.begin(namespace => NULL)", (), ("22004", "namespace must not be null")),
            ("SELECT memtx.revoke(NULL)", (), ("22004", None)),
            ("SELECT memtx.stage((5::bigint << 48) + 1, 'e', 'a', '1')", (), ("42704", None)),
            ("SELECT memtx.commit(-7)", (), (None, None)),
            ("SELECT * FROM memtx.lineage(0)", (), (None, None)),
            ("SELECT memtx.begin(namespace => '')", (), (None, None))):
        direct = error_of(s.nodes[0], query, params)
        routed = error_of(ca, query, params)
        ok = routed[0] is not None and routed[0] != "XX000" and routed == direct and \
            (want[0] is None or routed[0] == want[0]) and (want[1] is None or routed[1] == want[1])
        check("%s: memtx's own error, as on a node" % query, ok, (routed, direct))
    ca.close()


# ----------------------------------------------------------------- attacks

def attacks(s):
    a, n = s.admin, len(s.nodes)
    ns1 = namespace_on("attack", n - 1, n)
    owner, intruder, member = s.agent("owner"), s.agent("intruder"), s.agent("member")
    a.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(owner), sql.Identifier(member)))
    a.execute("SELECT memtx.grant_namespace(%s, %s)", (ns1, owner))
    co, ci, cm = s.login(owner), s.login(intruder), s.login(member)
    tx = co.execute("SELECT memtx.begin(namespace => %s)", (ns1,)).fetchone()[0]
    rec = co.execute("SELECT memtx.stage(%s, 'acct:1', 'limit', '100')", (tx,)).fetchone()[0]
    before = s.nodes[n - 1].execute("SELECT count(*), max(state::text) FROM memtx.records").fetchone()
    for name, call in (("commit", "SELECT * FROM memtx.commit(%s)" % tx),
                       ("stage", "SELECT memtx.stage(%s, 'acct:1', 'limit', '1')" % tx),
                       ("read", "SELECT * FROM memtx.read(%s)" % tx),
                       ("gate", "SELECT * FROM memtx.gate(%s, 'ship_order')" % tx),
                       ("act", "SELECT * FROM memtx.act(%s, 'ship_order', '{}')" % tx),
                       ("abort", "SELECT * FROM memtx.abort(%s)" % tx)):
        st, msg = error_of(ci, call)
        check("another agent's transaction through the router: %s -> 42501" % name, st == "42501", (st, msg))
    check("the owner's transaction is untouched",
          s.nodes[n - 1].execute("SELECT count(*), max(state::text) FROM memtx.records").fetchone() == before)
    st, msg = error_of(ci, "SELECT * FROM memtx.revoke(%s)" % rec)
    check("revoking another agent's record -> 42704 or 42501", st in ("42704", "42501"), (st, msg))
    harness_calls = (
        "SELECT memtx.register_source('evil', 1.0)", "SELECT memtx.register_tool('evil', true)",
        "SELECT memtx.set_role_tier('%s', 'low')" % intruder, "SELECT memtx.fence('%s')" % owner,
        "SELECT memtx.unfence('%s')" % owner, "SELECT memtx.grant_namespace('%s', '%s')" % (ns1, intruder),
        "SELECT memtx.revoke_namespace('%s', '%s')" % (ns1, owner), "SELECT * FROM memtx.expire_transactions()",
        "SELECT * FROM memtx.check_invariants()", "SELECT * FROM memtx.verify_receipts()",
        "SELECT memtx.resolve(%s, true)" % rec, "SELECT * FROM memtx.erase(%s, 'x')" % rec,
        "SELECT memtx.begin(agent => '%s', namespace => '%s')" % (owner, ns1),
        "SELECT memtx.begin(tier => 'low')",
        "SELECT memtx_router.register_tool_on(0, 'evil', true, NULL)",
        "SELECT memtx_router.fence_on(%d, '%s')" % (n - 1, owner))
    for call in harness_calls:
        st, msg = error_of(ci, call)
        check("harness call by an agent through the router: %s -> 42501" % call[7:60], st == "42501", (st, msg))
    check("no registry, tier, grant or epoch changed on any node", all(c.execute(
        "SELECT NOT EXISTS (SELECT 1 FROM memtx.sources WHERE name = 'evil') "
        "AND NOT EXISTS (SELECT 1 FROM memtx.tools WHERE name = 'evil') "
        "AND NOT EXISTS (SELECT 1 FROM memtx.role_tiers WHERE role_name = %s) "
        "AND NOT EXISTS (SELECT 1 FROM memtx.writer_epochs WHERE role_name = %s) "
        "AND NOT EXISTS (SELECT 1 FROM memtx.namespace_members WHERE role_name = %s)",
        (intruder, owner, intruder)).fetchone()[0] for c in s.nodes))
    # a non-member's read without a transaction: whatever the node answers (§17)
    q = "SELECT id FROM memtx.lookup('acct:1', namespace => %s)"
    s.nodes[n - 1].execute(sql.SQL("SET ROLE {}").format(sql.Identifier(intruder)))
    direct = error_of(s.nodes[n - 1], q, (ns1,))
    s.nodes[n - 1].execute("RESET ROLE")
    routed = error_of(ci, q, (ns1,))
    check("a non-member's lookup answers through the router as on its node", routed == direct, (routed, direct))
    # acting as another role: the node would see that role's own login
    cm.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(owner)))
    st, msg = error_of(cm, "SELECT memtx.begin(namespace => %s)", (ns1,))
    check("a non-superuser session acting as another role is refused (42501)", st == "42501", (st, msg))
    a.execute("SELECT memtx.fence(%s)", (member,))
    st, msg = error_of(cm, "SELECT * FROM memtx.propose('acct:2', 'x', '1', namespace => %s)", (ns1,))
    check("a fenced role cannot write through the router by SET ROLE (§17)", st == "42501", (st, msg))
    a.execute("SELECT memtx.unfence(%s)", (member,))
    for c in (co, ci, cm):
        c.close()


# ---------------------------------------------------------------- node down

def node_down(s):
    a, n = s.admin, len(s.nodes)
    ns = [namespace_on("load", i, n) for i in range(n)]
    writer = s.agent("writer")
    for x in ns:
        a.execute("SELECT memtx.grant_namespace(%s, %s)", (x, writer))
    down = n - 1
    phase = {"now": "up"}
    results = {i: [] for i in range(n)}      # (phase, proposal, sqlstate, message, record id)
    stop = threading.Event()

    def client(i):
        conn = s.login(writer)
        k = 0
        while not stop.is_set():
            k += 1
            pid = "load-%d-%d" % (i, k)
            ph = phase["now"]
            try:
                rid = conn.execute("SELECT record_id FROM memtx.propose(%s, 'n', %s::jsonb, "
                                   "proposal => %s, namespace => %s)",
                                   ("item:%d" % k, str(k), pid, ns[i])).fetchone()[0]
                results[i].append((ph, pid, None, None, rid))
            except psycopg.Error as e:
                results[i].append((ph, pid, e.sqlstate or "client", e.diag.message_primary, None))
                if conn.closed:                 # the router session itself broke: never expected
                    conn = s.login(writer)
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    dbname = s.node_dbs[down]
    phase["now"] = "down"
    a.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(sql.Identifier(dbname)))
    a.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s", (dbname,))
    time.sleep(1.5)
    a.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(sql.Identifier(dbname)))
    s.nodes[down] = psycopg.connect(dbname=dbname, autocommit=True)
    phase["now"] = "back"
    time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join()

    up = [r for i in range(n) if i != down for r in results[i]]
    check("the other nodes' namespaces kept committing while node %d was down" % down,
          all(r[2] is None for r in up) and sum(1 for r in up if r[0] == "down") > 0,
          [r for r in up if r[2]][:5])
    mine = results[down]
    failures = [r for r in mine if r[2]]
    check("node %d's namespace failed while it was down" % down,
          any(r[0] == "down" and r[2] for r in mine), len(failures))
    check("every failure is 08001 or 08006 naming memtx node %d" % down,
          failures and all(r[2] in ("08001", "08006") and ("memtx node %d " % down) in r[3] for r in failures),
          failures[:5])
    check("node %d's namespace commits again once it is back" % down,
          any(r[0] == "back" and r[2] is None for r in mine))
    acked = [r for r in mine if r[2] is None]
    states = dict(s.nodes[down].execute(
        "SELECT proposal, state::text FROM memtx.records WHERE namespace = %s", (ns[down],)).fetchall())
    check("every acknowledged proposal is committed on its node",
          all(states.get(r[1]) == "committed" for r in acked), [r for r in acked if states.get(r[1]) != "committed"][:5])
    unsure = [r for r in failures if r[2] == "08006"]
    check("a proposal that failed during the call is either committed or absent, never half-applied",
          all(states.get(r[1]) in (None, "committed") for r in unsure))
    refused = [r for r in failures if r[2] == "08001"]
    check("a proposal refused at connect (08001) wrote nothing", all(r[1] not in states for r in refused),
          [r for r in refused if r[1] in states][:5])
    check("no memtx transaction is left open on node %d" % down, s.nodes[down].execute(
        "SELECT count(*) FROM memtx.transactions WHERE status = 'open' AND namespace = %s",
        (ns[down],)).fetchone()[0] == 0)
    inv = a.execute("SELECT * FROM memtx.check_invariants()").fetchall()
    check("check_invariants() is empty on every node afterwards", inv == [], inv)
    bad = a.execute("SELECT namespace FROM memtx.verify_receipts() WHERE first_bad_seq IS NOT NULL").fetchall()
    check("every receipt chain verifies afterwards", bad == [], bad)
    print("# node-down load: %s" % ", ".join(
        "node %d %d committed, %d failed" % (i, sum(1 for r in results[i] if r[2] is None),
                                             sum(1 for r in results[i] if r[2])) for i in range(n)))


def main():
    router, nodes = sys.argv[1], sys.argv[2:]
    s = Setup(router, nodes)
    try:
        for part in (drift, flow, attacks, node_down):
            try:
                part(s)
            except Exception as e:          # a part that breaks counts as a failure, the rest still run
                import traceback
                traceback.print_exc()
                check("%s ran to its end" % part.__name__, False, repr(e))
    finally:
        try:
            s.cleanup()
        except psycopg.Error as e:
            print("# cleanup: %s" % e)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
