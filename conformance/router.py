"""Replays conformance cases through a memtx router (SPEC §20) and compares
each with the same case on one node.

A routed replay talks to a router database (memtx_router) in front of N node
databases that ran memtx.set_node(i).  Everything a case does goes through
the router, as a client would: the harness's registries (which reach every
node), begins naming agents, every agent call.  PL/Proxy logs in to the node
as the calling role and carries no session setting, so the replay differs
from the one-node replay in three ways only:
  - agents are LOGIN roles with a password, and a user mapping of the
    router's cluster memtx_nodes gives PL/Proxy that password (teams stay
    NOLOGIN group roles: nobody logs in as a team);
  - the case's settings and its clock are set per database on every node
    (ALTER DATABASE ... SET), and the router session is opened again after
    each change, so PL/Proxy's next node session starts with them;
  - the final store is read from the nodes directly (the router holds no
    tables); check_invariants() goes through the router (every node).

Cases are spread over the nodes: case i runs in namespaces that live on node
i % N (its namespace, or that name with a suffix chosen by memtx.node_of's
definition), and the one-node replay it is compared with uses the same
names.  After grading, the two replays are compared call by call and row by
row with ids set aside: the same SQLSTATEs, commit outcomes, repairs, gate
decisions and reads, the same records (states, reasons, content), actions,
rollback log, transactions and invariants, and the same grade.
"""

import copy
import hashlib
import json
import time

import psycopg
from psycopg import sql

import replay

PASSWORD = "memtx-conformance"      # the agents' (throwaway roles of a test cluster)


def node_of(namespace):
    """memtx.node_of, by its definition: SHA-256 of the UTF-8 text, 31 bits."""
    return int.from_bytes(hashlib.sha256(namespace.encode("utf-8")).digest()[:4], "big") & 0x7FFFFFFF


def namespace_on(namespace, node, nodes):
    """namespace itself when it lives on node, else the first namespace/k that does."""
    if node_of(namespace) % nodes == node:
        return namespace
    k = 1
    while node_of("%s/%d" % (namespace, k)) % nodes != node:
        k += 1
    return "%s/%d" % (namespace, k)


def place(case, node, nodes):
    """A copy of case whose namespaces all live on node."""
    case = copy.deepcopy(case)
    names = {case["namespace"]}

    def collect(x):
        if isinstance(x, dict):
            if isinstance(x.get("namespace"), str):
                names.add(x["namespace"])
            for v in x.values():
                collect(v)
        elif isinstance(x, list):
            for v in x:
                collect(v)
    collect(case)
    mapping = {n: namespace_on(n, node, nodes) for n in names}

    def rename(x):
        if isinstance(x, dict):
            return {k: (mapping[v] if k == "namespace" and isinstance(v, str) else rename(v)) for k, v in x.items()}
        if isinstance(x, list):
            return [rename(v) for v in x]
        return x
    placed = rename(case)
    placed["_namespaces"] = sorted(mapping.values())
    return placed


class RouterReplay(replay.Replay):
    """A replay whose calls go through the router; see the module comment."""

    def __init__(self, router_conninfo, node_conninfos, case, node, ablate=False):
        self.router_conninfo = router_conninfo
        self.nodes = [psycopg.connect(ci, autocommit=True) for ci in node_conninfos]
        self.node = node            # the node the case's namespaces live on
        super().__init__(self.connect_router(), case, ablate)

    def connect_router(self):
        conn = psycopg.connect(self.router_conninfo, autocommit=True)
        conn.execute("SET statement_timeout = '60s'")
        return conn

    def reconnect(self):
        """A new router session: PL/Proxy's node sessions start over with the
        databases' settings."""
        self.conn.close()
        self.conn = self.connect_router()

    def close(self):
        self.conn.close()
        for n in self.nodes:
            n.close()

    def node_for_tx(self, tx):
        return self.nodes[(tx >> 48) % len(self.nodes)] if tx else self.nodes[0]

    # settings live on the nodes' databases
    def set_database_setting(self, name, value):
        for n in self.nodes:
            dbname = n.info.dbname
            n.execute(sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                sql.Identifier(dbname), sql.Identifier(*name.split(".")), sql.Literal(str(value))))

    def set_now(self, now):
        self.set_database_setting("memtx.logical_now", now)
        self.reconnect()

    def fresh_store(self):
        """A fresh store on the case's node; the others keep only registries
        of earlier cases, which nothing of this case reads (a node that holds
        any transaction is made fresh too)."""
        for i, n in enumerate(self.nodes):
            n.execute(sql.SQL("ALTER DATABASE {} RESET ALL").format(sql.Identifier(n.info.dbname)))
            if i == self.node or n.execute("SELECT EXISTS (SELECT 1 FROM memtx.transactions)").fetchone()[0]:
                n.execute("SET client_min_messages = warning")
                n.execute("DROP EXTENSION IF EXISTS memtx CASCADE")
                n.execute("CREATE EXTENSION memtx CASCADE")
                n.execute("SELECT memtx.set_node(%s)", (i,))

    def create_role(self, name, login):
        """Agents log in (PL/Proxy logs in to the node as them) with a
        password their user mapping gives PL/Proxy; teams do not."""
        role = sql.Identifier(self.role(name))
        if not login:
            self.conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(role))
            return
        self.conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(role, sql.Literal(PASSWORD)))
        self.conn.execute(sql.SQL("CREATE USER MAPPING FOR {} SERVER memtx_nodes OPTIONS (password {})")
                          .format(role, sql.Literal(PASSWORD)))

    def apply_settings(self, settings):
        """Per database on every node, then a new router session."""
        for k, v in settings.items():
            self.set_database_setting(k, v)
        self.reconnect()

    def drop_roles(self):
        c = self.conn
        c.execute("RESET ROLE")
        names = [r[0] for r in c.execute(
            "SELECT rolname FROM pg_catalog.pg_roles WHERE rolname LIKE %s ORDER BY oid DESC",
            (replay.ROLE_PREFIX.replace("_", "\\_") + "%",)).fetchall()]
        for n in names:
            c.execute(sql.SQL("DROP USER MAPPING IF EXISTS FOR {} SERVER memtx_nodes").format(sql.Identifier(n)))
            c.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(n)))
        self.roles = []

    def last_action_log_id(self, tx):
        return self.node_for_tx(tx).execute("SELECT max(id) FROM memtx.action_log").fetchone()[0]

    def store_rows(self, query):
        """Every node's rows, node 0's first (the router holds no tables)."""
        return [r[0] for n in self.nodes for r in n.execute(query).fetchall()]

    def canon_text(self, value):
        return self.nodes[0].execute("SELECT %s::jsonb::text", (value,)).fetchone()[0]

    def snapshot(self):
        """The final store from every node; check_invariants() through the
        router (every node); and which node holds which namespace."""
        snap = super().snapshot()
        snap["placement"] = {n.info.dbname: [r[0] for r in n.execute(
            "SELECT DISTINCT namespace FROM memtx.transactions ORDER BY 1").fetchall()] for n in self.nodes}
        return snap

    def cleanup(self):
        try:
            self.drop_roles()
            for n in self.nodes:
                n.execute(sql.SQL("ALTER DATABASE {} RESET ALL").format(sql.Identifier(n.info.dbname)))
        finally:
            self.close()


def run_routed_case(router_conninfo, node_conninfos, case, node, ablate=False):
    """replay.run_case through the router, the case's namespaces on node."""
    return RouterReplay(router_conninfo, node_conninfos, copy.deepcopy(case), node, ablate).run()


# ------------------------------------------------------------------ comparing

RECORD_COLUMNS = ("namespace", "entity", "attribute", "value_text", "kind", "state", "reason", "source",
                  "authority", "confidence", "owner", "readers", "writers", "scope", "valid", "observed_at",
                  "verdict", "verdict_reason", "proposal", "erased_at")


def projection(run, graded):
    """What must be the same through the router as on one node: everything
    but ids, positions, xids and wall-clock times."""
    def pick(row, cols):
        return tuple(json.dumps(row.get(c), sort_keys=True) for c in cols)
    trace = []
    for ev in run["trace"]:
        trace.append({
            "do": ev["do"], "agent": ev["agent"], "sqlstate": ev.get("sqlstate"),
            "returned": ev.get("value") is not None,
            "outcomes": [(o["state"], o["reason"]) for o in ev.get("outcomes") or []],
            "repairs": [(r.get("kind"), r.get("action"), r.get("reason"), r.get("note")) for r in ev.get("repairs") or []],
            "gate": (ev.get("allowed"), ev.get("reason"), len(ev.get("blockers") or [])) if "allowed" in ev else None,
            "rows": sorted((r.get("entity"), r.get("attribute"), r.get("value_text"), r.get("state"))
                           for r in ev.get("rows") or []),
        })
    snap = run["snapshot"] or {}
    # a tool action's attribute is its own id
    records = [dict(r, attribute=None) if r.get("kind") == "tool_action" else r for r in snap.get("records", [])]
    store = {
        "records": sorted(pick(r, RECORD_COLUMNS) for r in records),
        "action_log": sorted(pick(a, ("namespace", "tool", "allowed", "reason", "effect_key", "args"))
                             for a in snap.get("action_log", [])),
        "rollback_log": sorted(pick(l, ("namespace", "kind", "action", "reason", "note"))
                               for l in snap.get("rollback_log", [])),
        "transactions": sorted(pick(t, ("namespace", "agent", "tier", "isolation", "status"))
                               for t in snap.get("transactions", [])),
        "compensations": sorted(pick(c, ("namespace", "tool", "compensator")) for c in snap.get("compensations", [])),
        "registry": len(snap.get("registry", [])),
        "invariants": snap.get("invariants"),
    }
    return {"setup_error": run["setup_error"], "trace": trace, "store": store,
            "passed": graded["passed"], "axes": graded["axes"]}


def differences(one, routed):
    """The parts of two projections that differ, as short messages."""
    out = []
    if one["setup_error"] != routed["setup_error"]:
        out.append("setup: one node %r, router %r" % (one["setup_error"], routed["setup_error"]))
    for i, (a, b) in enumerate(zip(one["trace"], routed["trace"])):
        for k in a:
            if a[k] != b[k]:
                out.append("event %d (%s by %s), %s: one node %s, router %s" % (i, a["do"], a["agent"], k, a[k], b[k]))
    if len(one["trace"]) != len(routed["trace"]):
        out.append("one node played %d events, the router %d" % (len(one["trace"]), len(routed["trace"])))
    for k in one["store"]:
        if one["store"][k] != routed["store"][k]:
            out.append("store %s: one node %s, router %s" % (k, one["store"][k], routed["store"][k]))
    for k in ("passed", "axes"):
        if one[k] != routed[k]:
            out.append("grade %s: one node %s, router %s" % (k, one[k], routed[k]))
    return out


def placement_problems(case, run, node, node_dbnames):
    """Every namespace of the case must be on node's database and no other."""
    snap = run["snapshot"]
    if not snap:
        return []
    problems = []
    for db, namespaces in snap["placement"].items():
        for ns in namespaces:
            if db != node_dbnames[node]:
                problems.append("namespace %s was written on %s, not on node %d (%s)"
                                % (ns, db, node, node_dbnames[node]))
    return problems


def compare_case(conninfo, router_conninfo, node_conninfos, case, index, grade):
    """Replays case (placed on node index % N) on one node and through the
    router; returns (routed grade, list of differences)."""
    nodes = len(node_conninfos)
    node = index % nodes
    placed = place(case, node, nodes)
    t0 = time.perf_counter()
    one = replay.run_case(conninfo, placed)
    routed = run_routed_case(router_conninfo, node_conninfos, placed, node)
    g_one, g_routed = grade(placed, one), grade(placed, routed)
    g_routed["router_s"] = time.perf_counter() - t0
    diffs = differences(projection(one, g_one), projection(routed, g_routed))
    dbnames = [psycopg.conninfo.conninfo_to_dict(ci).get("dbname") for ci in node_conninfos]
    diffs += placement_problems(placed, routed, node, dbnames)
    return g_routed, diffs
