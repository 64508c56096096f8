"""Replays one conformance case through the memtx SQL API.

The runner is the harness: it connects as a superuser, creates the case's
roles (agents, and teams as group roles), installs a fresh memtx, registers
sources and tools, commits the seed records and plays the schedule.  The
harness opens every transaction naming its agent; every other call an agent
makes runs as that agent (SET ROLE).  Nothing here judges the outcome: the
trace and a snapshot of the final store go to the grader.
"""

import copy
import json
import time

import psycopg
from psycopg import sql

from caselib import HARNESS

ROLE_PREFIX = "mc_"


class Replay:
    def __init__(self, conn, case, ablate=False):
        self.conn = conn
        self.case = case
        self.ablate = ablate
        self.labels = {}        # label -> id (tx, record or action)
        self.trace = []         # one entry per event
        self.seed_trace = []
        self.server_s = 0.0
        self.roles = []

    # ---------------------------------------------------------------- helpers

    def role(self, name):
        return ROLE_PREFIX + name

    def resolve(self, value):
        """Replace "$label" references by the ids they stand for."""
        if isinstance(value, str) and value.startswith("$"):
            return self.labels.get(value[1:])
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value

    def principals(self, lst):
        return None if lst is None else [self.role(p) for p in lst]

    def execute(self, query, params, agent):
        """Run one API call as agent; returns (rows, sqlstate, message)."""
        cur = self.conn.cursor()
        if agent != HARNESS:
            cur.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(self.role(agent))))
        t0 = time.perf_counter()
        try:
            cur.execute(query, params)
            rows = cur.fetchall() if cur.description else []
            err = (None, None)
        except psycopg.Error as e:
            rows = None
            err = (e.sqlstate or "XX000", str(e).strip().splitlines()[0] if str(e) else "")
        finally:
            self.server_s += time.perf_counter() - t0
            if agent != HARNESS:
                cur.execute("RESET ROLE")
        return rows, err[0], err[1]

    def last_action_log_id(self, tx):
        """The id of the action log row the last act wrote."""
        return self.conn.execute("SELECT max(id) FROM memtx.action_log").fetchone()[0]

    def set_now(self, now):
        self.conn.execute("SELECT pg_catalog.set_config('memtx.logical_now', %s, false)", (now,))

    # ------------------------------------------------------------------ setup

    def setup(self):
        self.fresh_store()
        self.drop_roles()
        for team in self.case["teams"]:
            self.create_role(team, login=False)
        for a in self.case["agents"]:
            self.create_role(a["name"], login=True)
        c = self.conn
        for team, members in self.case["teams"].items():
            for m in members:
                c.execute(sql.SQL("GRANT {} TO {}").format(sql.Identifier(self.role(team)),
                                                           sql.Identifier(self.role(m))))
        settings = dict(self.case["settings"])
        if self.ablate and self.case["family"] == "source_scope":
            settings["memtx.flow_control"] = "declared"
        if self.case.get("clock"):
            settings["memtx.logical_now"] = self.case["clock"]
        self.apply_settings(settings)
        c = self.conn
        for a in self.case["agents"]:
            if a.get("tier"):
                c.execute("SELECT memtx.set_role_tier(%s, %s::memtx.risk_tier)", (self.role(a["name"]), a["tier"]))
        store = self.case["store"]
        for s in store["sources"]:
            c.execute("SELECT memtx.register_source(%s, %s)", (s["name"], float(s["authority"])))
        for t in store["tools"]:
            c.execute("SELECT memtx.register_tool(%s, %s, %s)", (t["name"], t["reversible"], t.get("compensator")))

    def fresh_store(self):
        self.conn.execute("DROP EXTENSION IF EXISTS memtx CASCADE")
        self.conn.execute("CREATE EXTENSION memtx CASCADE")

    def create_role(self, name, login):
        """A case's agent or team (agents act through SET ROLE: no login needed here)."""
        self.conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(self.role(name))))
        self.roles.append(self.role(name))

    def apply_settings(self, settings):
        for k, v in settings.items():
            self.conn.execute("SELECT pg_catalog.set_config(%s, %s, false)", (k, str(v)))

    def drop_roles(self):
        c = self.conn
        c.execute("RESET ROLE")
        names = [r[0] for r in c.execute(
            "SELECT rolname FROM pg_catalog.pg_roles WHERE rolname LIKE %s ORDER BY oid DESC",
            (ROLE_PREFIX.replace("_", "\\_") + "%",)).fetchall()]
        for n in names:
            c.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(n)))
        self.roles = []

    # ---------------------------------------------------------------- verbs

    def stage_args(self, e, function="stage"):
        """The named-argument list of a memtx.stage call (of memtx.propose,
        with the namespace instead of the transaction, when function is
        "propose")."""
        parts, params = [], []

        def arg(name, cast, value):
            parts.append(sql.SQL("{} => %s" + cast).format(sql.Identifier(name)))
            params.append(value)

        if function == "stage":
            arg("tx", "", self.resolve(e["tx"]))
        else:
            arg("namespace", "", e["namespace"])
        arg("entity", "", e["entity"])
        arg("attribute", "", e["attribute"])
        arg("value", "::jsonb", json.dumps(e["value"]))
        if "kind" in e:
            arg("kind", "::memtx.kind", e["kind"])
        if "source" in e:
            arg("source", "", e["source"])
        if "confidence" in e:
            arg("confidence", "::double precision", float(e["confidence"]))
        if e.get("derived_from"):
            arg("derived_from", "::bigint[]", self.resolve(e["derived_from"]))
        if "scope" in e:
            arg("scope", "::memtx.scope", e["scope"])
        if e.get("readers") is not None:
            arg("readers", "::text[]", self.principals(e["readers"]))
        if e.get("writers") is not None:
            arg("writers", "::text[]", self.principals(e["writers"]))
        if e.get("valid") is not None:
            parts.append(sql.SQL("{} => pg_catalog.tstzrange(%s::timestamptz, %s::timestamptz, '[)')")
                         .format(sql.Identifier("valid")))
            params.extend(e["valid"])
        if e.get("observed_at") is not None and not (self.ablate and self.case["family"] == "temporal_scope"):
            arg("observed_at", "::timestamptz", e["observed_at"])
        if e.get("expected_head") is not None:
            arg("expected_head", "::bigint", self.resolve(e["expected_head"]))
        if e.get("proposal") is not None:
            arg("proposal", "", e["proposal"])
        if function == "stage":
            q = sql.SQL("SELECT memtx.stage({})").format(sql.SQL(", ").join(parts))
        else:
            q = sql.SQL("SELECT tx_id, record_id, state::text, reason FROM memtx.propose({})").format(
                sql.SQL(", ").join(parts))
        return q, params

    def play(self, e):
        verb, agent = e["do"], e["agent"]
        tx = self.resolve(e.get("tx"))
        out = {"do": verb, "agent": agent, "label": e.get("label"), "tx": tx}
        if verb == "begin":
            parts, params = [sql.SQL("agent => %s")], [self.role(agent)]
            parts.append(sql.SQL("namespace => %s"))
            params.append(e.get("namespace", self.case["namespace"]))
            if e.get("tier"):
                parts.append(sql.SQL("tier => %s::memtx.risk_tier"))
                params.append(e["tier"])
            if e.get("isolation"):
                parts.append(sql.SQL("isolation => %s::memtx.isolation"))
                params.append(e["isolation"])
            q = sql.SQL("SELECT memtx.begin({})").format(sql.SQL(", ").join(parts))
            rows, st, msg = self.execute(q, params, HARNESS)
            value = rows[0][0] if rows else None
        elif verb == "stage":
            q, params = self.stage_args(e)
            rows, st, msg = self.execute(q, params, agent)
            value = rows[0][0] if rows else None
        elif verb == "read":
            rows, st, msg = self.execute(
                "SELECT pg_catalog.to_jsonb(r), r.value::text FROM memtx.read(tx => %s, entity => %s, attribute => %s) r",
                (tx, e.get("entity"), e.get("attribute")), agent)
            value = None
            if rows is not None:
                out["rows"] = [dict(r[0], value_text=r[1]) for r in rows]
        elif verb == "commit":
            rows, st, msg = self.execute(
                "SELECT record_id, state::text, reason FROM memtx.commit(tx => %s)", (tx,), agent)
            value = None
            if rows is not None:
                out["outcomes"] = [{"record_id": r[0], "state": r[1], "reason": r[2]} for r in rows]
        elif verb == "abort":
            rows, st, msg = self.execute(
                "SELECT pg_catalog.to_jsonb(r) FROM memtx.abort(tx => %s) r", (tx,), agent)
            value = None
            if rows is not None:
                out["repairs"] = [r[0] for r in rows]
        elif verb == "revoke":
            rows, st, msg = self.execute(
                "SELECT pg_catalog.to_jsonb(r) FROM memtx.revoke(record => %s, note => %s) r",
                (self.resolve(e["record"]), e.get("note")), agent)
            value = None
            if rows is not None:
                out["repairs"] = [r[0] for r in rows]
        elif verb == "gate":
            rows, st, msg = self.execute(
                "SELECT allowed, reason, blockers FROM memtx.gate(tx => %s, tool => %s)",
                (tx, e["tool"]), agent)
            value = None
            if rows:
                out.update(allowed=rows[0][0], reason=rows[0][1], blockers=rows[0][2])
        elif verb == "act":
            rows, st, msg = self.execute(
                "SELECT allowed, reason, action_id, blockers FROM memtx.act(tx => %s, tool => %s, "
                "args => %s::jsonb, derived_from => %s::bigint[], effect_key => %s)",
                (tx, e["tool"], json.dumps(e.get("args", {})), self.resolve(e.get("derived_from", [])),
                 e.get("effect_key")), agent)
            value = None
            if rows:
                out.update(allowed=rows[0][0], reason=rows[0][1], action_id=rows[0][2], blockers=rows[0][3])
                value = rows[0][2]
                out["log_id"] = self.last_action_log_id(tx)
        elif verb == "resolve":
            rows, st, msg = self.execute(
                "SELECT 1 FROM (SELECT memtx.resolve(record => %s, accept => %s)) s",
                (self.resolve(e["record"]), bool(e["accept"])), agent)
            value = None
        else:
            raise AssertionError(verb)
        out["value"] = value
        out["sqlstate"], out["error"] = st, msg
        out["expect_error"] = e.get("expect_error")
        if e.get("label"):
            self.labels[e["label"]] = value
        return out

    def seed(self):
        for s in self.case["store"]["seed"]:
            if s.get("now"):
                self.set_now(s["now"])
            rows, st, msg = self.execute(
                "SELECT memtx.begin(tier => %s::memtx.risk_tier, agent => %s, namespace => %s)",
                (s.get("tier", "low"), self.role(s["agent"]), self.case["namespace"]), HARNESS)
            if st:
                return "seed begin failed: %s %s" % (st, msg)
            e = dict(s, tx="$__seed")
            self.labels["__seed"] = rows[0][0]
            q, params = self.stage_args(e)
            rows, st, msg = self.execute(q, params, s["agent"])
            if st:
                return "seed stage %s.%s failed: %s %s" % (s["entity"], s["attribute"], st, msg)
            rid = rows[0][0]
            if s.get("label"):
                self.labels[s["label"]] = rid
            rows, st, msg = self.execute(
                "SELECT record_id, state::text, reason FROM memtx.commit(tx => %s)",
                (self.labels["__seed"],), s["agent"])
            if st:
                return "seed commit failed: %s %s" % (st, msg)
            if not rows or rows[0][1] not in ("committed", "action_safe"):
                return "seed %s.%s did not commit: %s" % (s["entity"], s["attribute"], rows)
        self.labels.pop("__seed", None)
        if self.case.get("clock"):
            self.set_now(self.case["clock"])
        return None

    # --------------------------------------------------------------- snapshot

    def store_rows(self, query):
        """The first column of every row query returns, read as the harness."""
        return [r[0] for r in self.conn.execute(query).fetchall()]

    def canon_text(self, value):
        """The canonical text of a JSON value, as the server prints it."""
        return self.conn.execute("SELECT %s::jsonb::text", (value,)).fetchone()[0]

    def snapshot(self):
        """The final store, read as the harness, for the grader."""
        self.conn.execute("RESET ROLE")
        rows = self.store_rows
        snap = {
            "records": rows("SELECT pg_catalog.to_jsonb(r) || jsonb_build_object('value_text', r.value::text) "
                            "FROM memtx.records r ORDER BY id"),
            "action_log": rows("SELECT pg_catalog.to_jsonb(a) - 'gate_snapshot' FROM memtx.action_log a ORDER BY id"),
            "rollback_log": rows("SELECT pg_catalog.to_jsonb(l) FROM memtx.rollback_log l ORDER BY id"),
            "registry": rows("SELECT record_id FROM memtx.revocation_registry"),
            "compensations": rows("SELECT pg_catalog.to_jsonb(x) FROM memtx.compensations x"),
            "transactions": rows("SELECT pg_catalog.to_jsonb(t) - 'snapshot' FROM memtx.transactions t ORDER BY id"),
        }
        try:
            snap["invariants"] = [list(r) for r in self.conn.execute(
                "SELECT invariant, record_id, detail FROM memtx.check_invariants()").fetchall()]
        except psycopg.Error as e:
            snap["invariants"] = [["check_invariants failed", None, str(e).strip()]]
        canon = {}
        exp = self.case["expect"]
        for item in exp["committed"] + exp["aborted"]:
            canon[json.dumps(item["value"])] = None
        for r in exp["reads"]:
            for v in r.get("sees", []) + r.get("hides", []):
                canon[json.dumps(v)] = None
        for k in canon:
            canon[k] = self.canon_text(k)
        snap["canon"] = canon
        return snap

    def cleanup(self):
        self.drop_roles()

    def run(self):
        """Set up, seed, play every event, snapshot; returns the run for the grader."""
        err = None
        try:
            self.setup()
            err = self.seed()
            if err is None:
                for e in self.case["events"]:
                    if e.get("now"):
                        self.set_now(e["now"])
                    self.trace.append(self.play(e))
            snap = self.snapshot()
        except psycopg.Error as e:
            err = "harness: %s" % str(e).strip()
            snap = None
        finally:
            try:
                self.cleanup()
            except psycopg.Error:
                pass
        return {"trace": self.trace, "snapshot": snap, "labels": self.labels,
                "setup_error": err, "server_s": self.server_s}


def run_case(conninfo, case, ablate=False):
    """Replay case on a fresh memtx; returns (trace, snapshot, labels, setup_error)."""
    case = copy.deepcopy(case)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET statement_timeout = '60s'")   # a hung call fails its case, not the run
        return Replay(conn, case, ablate).run()
