#!/usr/bin/python3
"""Exhaustive enumeration of memtx's protocol states against the real
extension.

Depth-first from the empty store over every call of the alphabet that
enumerate.sql defines (memtx_enum.actions): each call runs under a SAVEPOINT
as its caller, its result and then the whole state (records, transactions,
revocation registry) are compared with the model of SPEC.md
(test/model/model.py, cloned per branch), the canonical state
(memtx_enum.state(), relabelled, slots and values renamed by first
appearance) is looked up in the visited set, and a state not seen before (or
seen only deeper) must pass memtx.check_invariants() and is expanded unless
at the depth bound; then ROLLBACK TO SAVEPOINT.  A call that fails is a
transition too: its SQLSTATE must be one the model predicts.

Sequences are not rolled back, so ids differ between branches: the model
adopts the ids the extension returns (as in traces.py), the visited set
holds canonical states, and a path is a list of positions in actions()'s
deterministic order, so it can be replayed with other ids.  A mismatch
prints the path of calls from the empty store and writes it, labelled, as a
trace that test/model/traces.py replays (put it under test/model/regressions/
when it is an extension bug).

One SQL transaction holds the walk, but not for long: every --restart-every
transitions (default 300) it is rolled back, memtx's tables are vacuumed and
the current path is replayed in a fresh one (at most depth calls).  Measured
at 2 records, 2 transactions, depth 5 on a shared 2-core machine: in one SQL
transaction the walk slowed from 236 to about 130 transitions/s within two
minutes, and to 20/s when the tables already held the row versions of
earlier walks' rolled-back savepoints (no VACUUM removes them while the
transaction runs: one from a second session every 300 transitions left it
at 15/s); restarted every 300 transitions it held 210/s, and 258/s with
the VACUUM.  The slowdown grows with the transitions of one SQL
transaction, not with the depth, so it is needed at depth 10 as well.

    enumerate.py [--records R] [--tx T] [--depth D] [--seconds N]
                 [--dump-states FILE] [--restart-every N] [--start I,J,...]
                 [--database NAME] [--coverage] [--failure-dir DIR]

Needs database NAME (default memtx_enum) with memtx and enumerate.sql
installed (test/enumerate/run makes it).  Prints the bounds, states,
transitions, transitions/s, the maximum depth reached, and
"N passed, N failed" last (1 passed: the whole enumeration matched).
"""

import argparse
import hashlib
import json
import os
import sys
import time

import psycopg
from psycopg import sql

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model"))
import model as M          # noqa: E402
import traces as T         # noqa: E402

# what enumerate.sql registers, as the model takes it
SOURCES = {"crm": 0.7, "crm2": 0.7}
TOOLS = {"refund": False, "note": True}
# the agents of a written trace: the roles traces.py makes
TRACE_AGENTS = {"memtx_enum_a": "memtx_model_a", "memtx_enum_b": "memtx_model_b"}


class Stop(Exception):
    """The walk ends early: time budget spent."""


class Failed(Exception):
    def __init__(self, mismatch, path):
        super().__init__(str(mismatch))
        self.mismatch, self.path = mismatch, path


class Enumerator:
    def __init__(self, conn, opts):
        self.conn = conn
        self.opts = opts
        self.runner = T.Runner(None, list(TRACE_AGENTS))
        self.runner.conn = conn
        self.runner.role = None
        self.runner.compare_read_sets = False
        self.visited = {}           # digest of a canonical state -> depth
        self.texts = set() if opts.dump_states else None
        self.states = self.transitions = self.max_depth = 0
        self.since_restart = 0
        self.restarts = 0
        self.started = time.time()
        self.window = (self.started, 0)
        self.models = []            # per depth: the model of that state
        self.acts = []              # per depth: actions() there
        self.path = []              # per depth: (position, call, new id)
        self.error = None           # the last call's error, with its message

    # ------------------------------------------------------------ the store

    def actions(self):
        return self.conn.execute(
            "SELECT caller, call, stmt FROM memtx_enum.actions(%s, %s, %s)",
            (self.opts.records, self.opts.tx, self.opts.alphabet)).fetchall()

    @staticmethod
    def model():
        # enumerate.sql sets memtx.flow_control = declared: see there
        return M.Model(SOURCES, TOOLS, T.START, flow_control="declared")

    def execute(self, caller, call, stmt):
        """Runs one call under a new savepoint; ("ok", value) or ("err",
        sqlstate).  After an error the savepoint is gone already."""
        c = self.conn
        c.execute("SAVEPOINT s")
        self.error = None
        if caller is not None:
            c.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(caller)))
        try:
            got = ("ok", T.shape(call["op"], c.execute(stmt).fetchall()))
        except psycopg.Error as e:
            if c.closed or e.sqlstate is None:
                raise
            self.undo()
            self.error = "%s: %s" % (e.sqlstate, e.diag.message_primary)
            return ("err", e.sqlstate)
        if caller is not None:
            c.execute("RESET ROLE")
        return got

    def undo(self):
        self.conn.execute("ROLLBACK TO SAVEPOINT s; RELEASE SAVEPOINT s")

    def step(self, depth, i):
        """Runs call i of the state at depth; returns (call, got, model)."""
        caller, call, stmt = self.acts[depth][i]
        got = self.execute(caller, call, stmt)
        model = self.models[depth].clone()
        r = self.runner
        r.model = model
        nid = r.new_id(call, got)
        pred = model.apply(call, nid)
        self.path.append((i, call, nid))
        r.compare(depth, call, pred, got)
        return call, got, model

    def restart(self):
        """A fresh SQL transaction holding the current path again."""
        c = self.conn
        c.execute("ROLLBACK")
        self.vacuum()
        c.execute("BEGIN")
        old, self.path = self.path, []
        self.models = [self.model()]
        self.acts = [self.actions()]
        for depth, (i, _, _) in enumerate(old):
            _, got, model = self.step(depth, i)
            if got[0] != "ok":
                raise RuntimeError("a replayed call failed: %r" % (got,))
            self.models.append(model)
            self.acts.append(self.actions())
        self.since_restart = 0
        self.restarts += 1

    def vacuum(self):
        """Removes the row versions the walk's rolled-back savepoints left
        behind: nothing does while the SQL transaction runs, and every scan
        of memtx's tables pays for them."""
        self.conn.execute(sql.SQL("VACUUM {}").format(sql.SQL(", ").join(
            sql.Identifier("memtx", t) for t in self.tables)))

    # ------------------------------------------------------------- the walk

    def visit(self, depth, call):
        """The state reached at depth: True when it is to be expanded."""
        self.runner.compare_state(depth, call, invariants=False)
        text = self.conn.execute("SELECT memtx_enum.state()").fetchone()[0]
        key = hashlib.blake2b(text.encode(), digest_size=16).digest()
        seen = self.visited.get(key)
        if seen is None:
            self.states += 1
            self.runner.check_invariants(depth, call)
            if self.texts is not None:
                self.texts.add(text)
        elif seen <= depth:
            return False
        # new, or reached now by a shorter path: (re)expanded from here
        self.visited[key] = depth
        self.max_depth = max(self.max_depth, depth)
        return depth < self.opts.depth

    def explore(self, depth):
        for i in range(len(self.acts[depth])):
            self.tick()
            if (self.opts.restart_every
                    and self.since_restart >= self.opts.restart_every):
                self.restart()
            call, got, model = self.step(depth, i)
            self.transitions += 1
            self.since_restart += 1
            self.runner.tally(call["op"], got)
            if got[0] == "ok":
                if self.visit(depth + 1, call):
                    self.models.append(model)
                    self.acts.append(self.actions())
                    self.explore(depth + 1)
                    self.models.pop()
                    self.acts.pop()
                self.undo()
            self.path.pop()

    def tick(self):
        now = time.time()
        if self.opts.seconds and now - self.started > self.opts.seconds:
            raise Stop()
        t0, n0 = self.window
        if now - t0 >= self.opts.progress:
            print("  %6.0f s  %d states, %d transitions, %.0f transitions/s"
                  " (last %.0f s)" % (now - self.started, self.states,
                                      self.transitions,
                                      (self.transitions - n0) / (now - t0),
                                      now - t0), flush=True)
            self.window = (now, self.transitions)

    def run(self):
        c = self.conn
        self.tables = [r[0] for r in c.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'memtx'"
            " ORDER BY tablename")]
        self.vacuum()
        c.execute("BEGIN")
        self.models = [self.model()]
        self.acts = [self.actions()]
        self.runner.model = self.models[0]
        try:
            if self.visit(0, {"op": "start"}):
                if self.opts.start:
                    # the walk below a given path: replayed like a restart
                    self.path = [(i, None, None) for i in self.opts.start]
                    self.restart()
                self.explore(len(self.path))
        except T.Mismatch as e:
            raise Failed(e, list(self.path))
        finally:
            if not c.closed:
                c.execute("ROLLBACK")

    # ------------------------------------------------------------ reporting

    def trace(self, path):
        """The path as a trace of labelled calls that traces.py replays."""
        labels, ops = {}, [{"op": "config", "flow_control": "declared"}]
        for n, (_, call, nid) in enumerate(path):
            op = dict(call)
            for k in ("agent", "role"):
                if k in op:
                    op[k] = TRACE_AGENTS[op[k]]
            op["caller"] = TRACE_AGENTS.get(op["caller"], op["caller"])
            if "tx" in op:
                op["tx"] = labels["tx", op["tx"]]
            if "record" in op:
                op["record"] = labels["rec", op["record"]]
            for k in ("parents", "inputs"):
                if k in op:
                    op[k] = [labels["rec", x] for x in op[k]]
            if nid is not None:
                op["label"] = {"begin": "t", "stage": "r",
                               "act": "a"}[call["op"]] + str(n)
                labels["tx" if call["op"] == "begin" else "rec", nid] = \
                    op["label"]
            ops.append(op)
        return ops


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=3,
                    help="at most this many staged records (tool actions "
                    "not counted)")
    ap.add_argument("--tx", type=int, default=3,
                    help="at most this many transactions")
    ap.add_argument("--depth", type=int, default=4,
                    help="at most this many calls from the empty store")
    ap.add_argument("--seconds", type=float, default=0,
                    help="stop after this many seconds and report the "
                    "partial figures (0: no limit)")
    ap.add_argument("--dump-states", metavar="FILE",
                    help="write every canonical state, one a line, sorted")
    ap.add_argument("--restart-every", type=int, default=300, metavar="N",
                    help="a fresh SQL transaction (the current path "
                    "replayed) every N transitions (0: never)")
    ap.add_argument("--start", metavar="I,J,...", default="",
                    type=lambda v: [int(x) for x in v.split(",") if x],
                    help="walk only below this path from the empty store "
                    "(positions in actions()'s order, as a mismatch prints "
                    "them); the depth bound still counts from the empty store")
    ap.add_argument("--database", default="memtx_enum")
    ap.add_argument("--alphabet", default="memtx", choices=("papers", "memtx"),
                    help="the calls of enumerate.sql to walk (default memtx: "
                    "the papers' alphabet and memtx's own calls)")
    ap.add_argument("--coverage", action="store_true",
                    help="print how often each outcome was exercised")
    ap.add_argument("--progress", type=float, default=30,
                    help="print the figures every this many seconds")
    ap.add_argument("--failure-dir", default=os.getcwd(),
                    help="where a mismatch's trace is written")
    opts = ap.parse_args()
    print("bounds: %d records, %d transactions, depth %d, alphabet %s%s" % (
        opts.records, opts.tx, opts.depth, opts.alphabet,
        ", restart every %d transitions" % opts.restart_every
        if opts.restart_every else ""), flush=True)
    conn = psycopg.connect(dbname=opts.database, autocommit=True)
    e = Enumerator(conn, opts)
    failed = partial = False
    try:
        e.run()
    except Stop:
        partial = True
    except Failed as f:
        failed = True
        print("MISMATCH: %s" % f.mismatch)
        if e.error:
            print("the call's error: %s" % e.error)
        print("path from the empty store:")
        for n, (i, call, nid) in enumerate(f.path):
            print("  %2d. [%d] %s%s" % (n, i, json.dumps(call),
                                        "" if nid is None else " -> %s" % (nid,)))
        out = os.path.join(opts.failure_dir, "enumerate-mismatch.json")
        note = "found by test/enumerate (bounds: %d records, %d " \
            "transactions, depth %d)" % (opts.records, opts.tx, opts.depth)
        with open(out, "w") as fh:
            # the layout of test/model/regressions/: one call a line
            fh.write('{\n "note": %s,\n "mismatch": %s,\n "ops": [\n  %s\n ]\n}\n'
                     % (json.dumps(note), json.dumps(str(f.mismatch)),
                        ",\n  ".join(json.dumps(op) for op in e.trace(f.path))))
        print("written as a trace test/model/traces.py replays: %s" % out)
    elapsed = time.time() - e.started
    if opts.coverage:
        for k, v in sorted(e.runner.coverage.items()):
            print("  %7d  %s" % (v, k))
    if opts.dump_states and not failed:
        with open(opts.dump_states, "w") as fh:
            for text in sorted(e.texts):
                fh.write(text + "\n")
    print("%s%d states, %d transitions in %.1f s: %.0f transitions/s; max "
          "depth reached %d; %d restarts of the SQL transaction" % (
              "PARTIAL (time budget spent): " if partial else "",
              e.states, e.transitions, elapsed,
              e.transitions / max(elapsed, 1e-9), e.max_depth, e.restarts))
    print("%d passed, %d failed" % (0 if failed else 1, 1 if failed else 0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
