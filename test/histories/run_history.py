#!/usr/bin/python3
"""Concurrent histories for memtx: many clients, random colliding operations.

Each client is a thread with a connection of its own.  For a bounded time it
runs random operations over a small key space of one fresh namespace, so that
they collide: proposals with and without an expected head and a proposal id
(retries of a used id with the same content included, from any client), a
begin/stage/commit in one SQL transaction, a transaction left open (its
records stay tentative in flight) and later committed or aborted, reads
through memtx.lookup, revocations, memtx.act under a few effect keys that
repeat on purpose, and memtx.gate.

Besides, operations that provoke the checker's properties on purpose:
retries of a proposal id with changed content (which must be refused), act
calls under a used effect key with other args, another tool or another
agent (which must be refused, never answered with another call's decision),
gate and act calls in a transaction with the caller's own staging in flight
(which must be blocked by it), and, in a second namespace of their own,
snapshot readers: a memtx transaction begun by one call and read by later
ones (memtx.read) while writers commit records there, each writer pausing
between its memtx.commit and its SQL COMMIT, so that a read can be judged
exactly against the snapshot SPEC §3 defines.

Every operation is written as one JSON line when it ends:

    {"client", "op", "args", "invoke_t", "complete_t", "outcome", "result",
     "sqlstate"}

with times from one monotonic clock.  outcome is "ok" (result holds what
the server returned), "fail" (an error with an SQLSTATE that rolled the
operation back: it did not happen) or "maybe" (the connection was lost or
the backend terminated while the operation ran: it may or may not have
happened; complete_t is then null, for "unbounded").

With --terminate SECONDS a supervisor calls pg_terminate_backend on a random
client backend every SECONDS on average ("terminate" lines); clients
reconnect and go on.  A server that restarts (crash recovery) mid-run is
survived the same way: a client retries its connection until the run ends.

    run_history.py --out FILE [--clients 12] [--seconds 20] [--seed N]
                   [--terminate 0.5] [--namespace NS] [--dsn CONNINFO]

The connection parameters come from the PG* environment (or --dsn); the
role must be a superuser or a memtx harness (it registers two tools and
uses a namespace of its own).  Prints a one-line summary.
"""

import argparse
import json
import random
import sys
import threading
import time

import psycopg

ENTITIES = ("acct", "plan")
# agents the harness begins transactions for (made by setup), besides itself
AGENTS = ("memtx_hist_a", "memtx_hist_b")
ATTRIBUTES = ("owner", "limit")
VALUES = ('"a"', '"b"', '"c"')
EFFECT_KEYS = ("k0", "k1", "k2", "k3", "k4", "k5")
TOOL_IRREVERSIBLE = "hist_wire"
TOOL_REVERSIBLE = "hist_hold"
SOURCE = "hist_feed"
AMBIGUOUS_CLASSES = ("08", "57")


def tool_of_key(key):
    """A key always names one tool and one args, so repeats are true repeats."""
    return TOOL_IRREVERSIBLE if int(key[1:]) % 2 == 0 else TOOL_REVERSIBLE


class Shared:
    """What all clients share: the log, the pools to pick collisions from."""

    def __init__(self, out, namespace, deadline):
        self.lock = threading.Lock()
        self.out = out
        self.namespace = namespace
        self.snapshot_ns = namespace + "-snapshot"
        self.deadline = deadline
        self.ops = 0
        self.proposals = []  # (proposal id, propose args) ever invoked
        self.records = {}  # slot -> record ids seen
        self.next_proposal = 0
        self.next_slot = 0  # snapshot writers: a new slot each

    def log(self, entry):
        with self.lock:
            self.out.write(json.dumps(entry, sort_keys=True) + "\n")
            self.out.flush()
            self.ops += 1

    def saw(self, slot, record_id):
        with self.lock:
            ids = self.records.setdefault(slot, [])
            if record_id not in ids:
                ids.append(record_id)

    def seen_ids(self):
        with self.lock:
            return [i for ids in self.records.values() for i in ids]

    def snapshot_slot(self, client):
        with self.lock:
            self.next_slot += 1
            return "s%d-%d" % (client, self.next_slot)

    def proposal_id(self, client):
        with self.lock:
            self.next_proposal += 1
            return "p%d-%d" % (client, self.next_proposal)


def sqlstate_of(exc):
    return getattr(exc, "sqlstate", None)


def ambiguous(exc):
    state = sqlstate_of(exc)
    return state is None or state[:2] in AMBIGUOUS_CLASSES


class Client(threading.Thread):
    def __init__(self, n, shared, dsn, seed):
        super().__init__(daemon=True)
        self.n = n
        self.shared = shared
        self.dsn = dsn
        self.rng = random.Random(seed * 1000 + n)
        self.conn = None
        self.open_tx = None  # the memtx transaction "open" left open
        self.reader = None  # the snapshot reader's transaction and reads left
        self.outcome = None  # of the last operation
        self.error = None

    # -- connection
    def connect(self):
        while time.monotonic() < self.shared.deadline + 30:
            try:
                self.conn = psycopg.connect(
                    self.dsn, autocommit=True,
                    application_name="memtx-history-%s" % self.shared.namespace)
                return True
            except psycopg.OperationalError:
                time.sleep(0.2)
        return False

    def drop(self):
        try:
            self.conn.close()
        except Exception:  # the connection is gone either way
            pass
        self.conn = None

    # -- one logged operation
    def run_op(self, op, args, body):
        """Runs body(cursor) as op; logs it; returns the result or None
        (self.outcome: "ok", "fail", "maybe", or None when not run)."""
        self.outcome = None
        if self.conn is None and not self.connect():
            return None
        entry = {"client": self.n, "op": op, "args": args,
                 "invoke_t": time.monotonic(), "complete_t": None,
                 "result": None, "sqlstate": None}
        try:
            with self.conn.cursor() as cur:
                result = body(cur)
            entry.update(outcome="ok", result=result,
                         complete_t=time.monotonic())
        except psycopg.Error as exc:
            entry["sqlstate"] = sqlstate_of(exc)
            if ambiguous(exc) or self.conn.closed:
                entry["outcome"] = "maybe"
                self.drop()
            else:
                entry["outcome"] = "fail"
                entry["complete_t"] = time.monotonic()
                entry["message"] = str(exc).splitlines()[0] if str(exc) else ""
            result = None
        self.outcome = entry["outcome"]
        self.shared.log(entry)
        return result

    # -- operations
    def slot(self):
        return [self.rng.choice(ENTITIES), self.rng.choice(ATTRIBUTES)]

    def op_propose(self):
        rng = self.rng
        with self.shared.lock:
            pool = list(self.shared.proposals[-40:])
        if pool and rng.random() < 0.25:
            _, args = rng.choice(pool)
            if rng.random() < 0.3:
                # §10: the same id with other content must be refused (23505)
                args = dict(args, value=rng.choice([v for v in VALUES
                                                    if v != args["value"]]))
                self.propose(args, "changed")
            else:
                self.propose(args, "retry")
            return
        args = {"slot": self.slot(), "value": rng.choice(VALUES),
                "expected_head": None, "proposal": None}
        mode = rng.random()
        if mode < 0.4:
            heads = self.op_lookup(args["slot"])
            if heads is None:
                return
            args["expected_head"] = heads[0][0] if heads else 0
        elif mode < 0.55:
            with self.shared.lock:
                seen = list(self.shared.records.get(tuple(args["slot"]), []))
            args["expected_head"] = rng.choice(seen) if seen else 0
        if rng.random() < 0.7:
            args["proposal"] = self.shared.proposal_id(self.n)
            with self.shared.lock:
                self.shared.proposals.append((args["proposal"], args))
        self.propose(args, "new")

    def propose(self, args, kind):
        ns = self.shared.namespace

        def body(cur):
            cur.execute(
                "SELECT tx_id, record_id, state::text, reason FROM memtx.propose("
                "%s, %s, %s::jsonb, source => %s, expected_head => %s,"
                " proposal => %s, namespace => %s)",
                (args["slot"][0], args["slot"][1], args["value"], SOURCE,
                 args["expected_head"], args["proposal"], ns))
            tx, rec, state, reason = cur.fetchone()
            return {"tx": tx, "record": rec, "state": state, "reason": reason}

        res = self.run_op("propose", dict(args, kind=kind), body)
        if res:
            self.shared.saw(tuple(args["slot"]), res["record"])

    def op_lookup(self, slot=None):
        slot = slot or self.slot()
        ns = self.shared.namespace

        def body(cur):
            cur.execute(
                "SELECT id, value::text FROM memtx.lookup(%s, %s, %s) ORDER BY id",
                (slot[0], slot[1], ns))
            return [list(r) for r in cur.fetchall()]

        return self.run_op("read", {"slot": slot}, body)

    def in_tx(self, step, agent=None, ns=None):
        """An operation body: memtx.begin (for agent, when given), then
        step(cursor, tx), in one SQL transaction."""
        ns = ns or self.shared.namespace

        def body(cur):
            with self.conn.transaction():
                cur.execute("SELECT memtx.begin(agent => %s, namespace => %s)",
                            (agent, ns))
                return step(cur, cur.fetchone()[0])

        return body

    def op_stage(self, op="txn", most=3):
        """Stages 1..most records; "txn" commits them in the same SQL
        transaction, "open" leaves them tentative until op_finish."""
        stages = [{"slot": self.slot(), "value": self.rng.choice(VALUES)}
                  for _ in range(self.rng.randint(1, most))]

        def step(cur, tx):
            ids = []
            for st in stages:
                cur.execute(
                    "SELECT memtx.stage(%s, %s, %s, %s::jsonb, source => %s)",
                    (tx, st["slot"][0], st["slot"][1], st["value"], SOURCE))
                ids.append(cur.fetchone()[0])
            out = {"tx": tx, "records": ids}
            if op == "txn":
                cur.execute("SELECT record_id, state::text, reason FROM memtx.commit(%s)", (tx,))
                out["verdicts"] = [list(r) for r in cur.fetchall()]
            return out

        res = self.run_op(op, {"stages": stages}, self.in_tx(step))
        if res:
            if op == "open":
                self.open_tx = res["tx"]
            for st, rec in zip(stages, res["records"]):
                self.shared.saw(tuple(st["slot"]), rec)

    def op_open(self):
        self.op_stage("open", 2)

    def op_finish(self, how=None):
        tx, self.open_tx = self.open_tx, None
        how = how or ("commit" if self.rng.random() < 0.6 else "abort")

        def body(cur):
            if how == "commit":
                cur.execute("SELECT record_id, state::text, reason FROM memtx.commit(%s)", (tx,))
                return {"verdicts": [list(r) for r in cur.fetchall()]}
            cur.execute("SELECT record_id, action FROM memtx.abort(%s)", (tx,))
            return {"repaired": [list(r) for r in cur.fetchall()]}

        # a commit or abort whose reply was lost is repeated (commit is
        # idempotent: the repeat returns the stored outcome)
        args = {"tx": tx}
        for _ in range(5):
            self.run_op(how, args, body)
            if self.outcome != "maybe":
                break
            args = {"tx": tx, "retry": True}

    def op_revoke(self):
        seen = self.shared.seen_ids()
        if not seen:
            return
        rec = self.rng.choice(seen)

        def body(cur):
            cur.execute("SELECT root_id, record_id, action, reason FROM memtx.revoke(%s)", (rec,))
            return {"repaired": [list(r) for r in cur.fetchall()]}

        self.run_op("revoke", {"record": rec}, body)

    def gated(self, call, args, agent=None, stage=0):
        """begin + (stage records: the caller's own staging in flight) + the
        gate call + commit, in one SQL transaction."""
        slots = [self.slot() for _ in range(stage)]

        def step(cur, tx):
            own = []
            for slot in slots:
                cur.execute("SELECT memtx.stage(%s, %s, %s, %s::jsonb, source => %s)",
                            (tx, slot[0], slot[1], self.rng.choice(VALUES), SOURCE))
                own.append(cur.fetchone()[0])
            cur.execute(call, [tx] + args)
            row = dict(zip([d.name for d in cur.description], cur.fetchone()))
            cur.execute("SELECT count(*) FROM memtx.commit(%s)", (tx,))
            return dict(row, tx=tx, own=own)

        return self.in_tx(step, agent)

    def op_act(self):
        """act under an effect key: the key's own call (tool, agent, args), or
        now and then the same key with other args, tool or agent, which
        §16 refuses once the key is used up."""
        rng = self.rng
        key = rng.choice(EFFECT_KEYS)
        agent = None
        if rng.random() < 0.2:
            tool, effect_key = rng.choice((TOOL_IRREVERSIBLE, TOOL_REVERSIBLE)), None
            call_args = {"key": key}
            variant = "none"
        else:
            tool, effect_key, call_args = tool_of_key(key), key, {"key": key}
            variant = rng.choices(("same", "args", "tool", "agent"), (70, 10, 10, 10))[0]
            if variant == "args":
                call_args = {"key": key, "n": rng.randint(1, 3)}
            elif variant == "tool":
                tool = TOOL_REVERSIBLE if tool == TOOL_IRREVERSIBLE else TOOL_IRREVERSIBLE
            elif variant == "agent":
                agent = rng.choice(AGENTS)
        args = {"tool": tool, "args": call_args, "effect_key": effect_key,
                "agent": agent, "variant": variant}
        call = ("SELECT allowed, reason, action_id, blockers FROM memtx.act("
                "%s, %s, %s::jsonb, effect_key => %s)")
        self.run_op("act", args, self.gated(
            call, [tool, json.dumps(call_args), effect_key], agent))

    def op_own(self):
        """gate or act (irreversible, no key) with the caller's own staging
        in flight: SPEC §5 (1) blocks it, the own records among the
        blockers."""
        rng = self.rng
        n = rng.randint(1, 2)
        if rng.random() < 0.5:
            call = "SELECT allowed, reason, blockers FROM memtx.gate(%s, %s)"
            params = [TOOL_IRREVERSIBLE]
            kind = "gate"
        else:
            call = ("SELECT allowed, reason, action_id, blockers FROM memtx.act("
                    "%s, %s, %s::jsonb)")
            params = [TOOL_IRREVERSIBLE, json.dumps({"own": True})]
            kind = "act"
        self.run_op("own", {"tool": TOOL_IRREVERSIBLE, "call": kind, "staged": n},
                    self.gated(call, params, rng.choice((None,) + AGENTS), stage=n))

    # -- snapshot readers and writers (namespace of their own)
    def op_swrite(self):
        """A record on a slot of its own, committed with a pause between
        memtx.commit (which takes the commit's sequence number) and the SQL
        COMMIT (which makes it visible)."""
        slot = self.shared.snapshot_slot(self.n)
        pause = self.rng.uniform(0.02, 0.25)

        def step(cur, tx):
            cur.execute("SELECT memtx.stage(%s, %s, %s, %s::jsonb, source => %s)",
                        (tx, slot, "v", '"s"', SOURCE))
            rec = cur.fetchone()[0]
            cur.execute("SELECT state::text FROM memtx.commit(%s)", (tx,))
            state = cur.fetchone()[0]
            mcommit_t = time.monotonic()
            time.sleep(pause)
            return {"tx": tx, "record": rec, "state": state, "mcommit_t": mcommit_t,
                    "commit_invoke_t": time.monotonic()}

        self.run_op("swrite", {"slot": slot}, self.in_tx(step, ns=self.shared.snapshot_ns))

    def op_sbegin(self):
        """A reader: a memtx transaction (committed_read) of the snapshot
        namespace, begun by this call, read by later ones."""
        ns = self.shared.snapshot_ns

        def body(cur):
            cur.execute("SELECT memtx.begin(tier => 'low', namespace => %s)", (ns,))
            return {"tx": cur.fetchone()[0]}

        res = self.run_op("sbegin", {}, body)
        if res:
            self.reader = [res["tx"], self.rng.randint(1, 4)]

    def op_sread(self):
        tx = self.reader[0]
        self.reader[1] -= 1

        def body(cur):
            cur.execute("SELECT id FROM memtx.read(%s) ORDER BY id", (tx,))
            return {"records": [r[0] for r in cur.fetchall()]}

        self.run_op("sread", {"tx": tx}, body)
        if self.reader and self.reader[1] <= 0:
            self.reader = None

    def op_gate(self):
        tool = self.rng.choice((TOOL_IRREVERSIBLE, TOOL_IRREVERSIBLE, TOOL_REVERSIBLE))
        call = "SELECT allowed, reason, blockers FROM memtx.gate(%s, %s)"
        self.run_op("gate", {"tool": tool}, self.gated(call, [tool]))

    def run(self):
        try:
            self.loop()
        except Exception as exc:  # a driver bug: report it, fail the run
            self.error = repr(exc)

    def loop(self):
        ops = ((self.op_propose, 40), (self.op_stage, 12), (self.op_open, 10),
               (self.op_lookup, 8), (self.op_revoke, 6), (self.op_act, 14),
               (self.op_gate, 10), (self.op_own, 5), (self.op_swrite, 10),
               (self.op_sbegin, 4))
        funcs = [f for f, _ in ops]
        weights = [w for _, w in ops]
        while time.monotonic() < self.shared.deadline:
            if self.open_tx is not None and self.rng.random() < 0.5:
                self.op_finish()
                continue
            if self.reader is not None and self.rng.random() < 0.5:
                self.op_sread()
                continue
            self.rng.choices(funcs, weights)[0]()
        if self.open_tx is not None:
            self.op_finish("commit")
        if self.conn is not None:
            self.conn.close()


def supervisor(shared, dsn, mean, rng, stop):
    """Terminates a random client backend every `mean` seconds on average."""
    conn = None
    while not stop.wait(rng.expovariate(1.0 / mean)):
        try:
            if conn is None or conn.closed:
                conn = psycopg.connect(dsn, autocommit=True)
            row = conn.execute(
                "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s AND pid <> pg_backend_pid()"
                " ORDER BY random() LIMIT 1",
                ("memtx-history-%s" % shared.namespace,)).fetchone()
            if row:
                shared.log({"op": "terminate", "client": None, "args": {"pid": row[0]},
                            "invoke_t": time.monotonic(), "complete_t": time.monotonic(),
                            "outcome": "ok", "result": row[1], "sqlstate": None})
        except psycopg.Error:
            conn = None  # the server is restarting: try again later


def setup(dsn, namespace):
    with psycopg.connect(dsn, autocommit=True) as conn:
        for role in AGENTS:
            if not conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s",
                                (role,)).fetchone():
                try:
                    conn.execute("CREATE ROLE %s NOLOGIN" % role)
                except psycopg.errors.DuplicateObject:
                    pass    # made by a concurrent setup
        for tool, reversible, comp in ((TOOL_IRREVERSIBLE, False, None),
                                       (TOOL_REVERSIBLE, True, "hist_release")):
            conn.execute("SELECT memtx.register_tool(%s, %s, %s)", (tool, reversible, comp))
        conn.execute("SELECT memtx.register_source(%s, 0.5)", (SOURCE,))
        n = conn.execute("SELECT count(*) FROM memtx.records WHERE namespace IN (%s, %s)",
                         (namespace, namespace + "-snapshot")).fetchone()[0]
        if n:
            sys.exit("namespace %s is not empty" % namespace)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--clients", type=int, default=12)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--terminate", type=float, default=0,
                    help="mean seconds between backend terminations (0: none)")
    ap.add_argument("--namespace", default=None)
    ap.add_argument("--dsn", default="")
    opt = ap.parse_args()
    seed = opt.seed if opt.seed is not None else random.randrange(1, 2**31)
    namespace = opt.namespace or "history-%d" % seed
    setup(opt.dsn, namespace)

    with open(opt.out, "w") as out:
        shared = Shared(out, namespace, time.monotonic() + opt.seconds)
        shared.log({"op": "start", "client": None, "args": {
            "namespace": namespace, "snapshot_namespace": shared.snapshot_ns,
            "seed": seed, "clients": opt.clients,
            "seconds": opt.seconds, "terminate": opt.terminate},
            "invoke_t": time.monotonic(), "complete_t": time.monotonic(),
            "outcome": "ok", "result": None, "sqlstate": None})
        clients = [Client(i, shared, opt.dsn, seed) for i in range(opt.clients)]
        stop = threading.Event()
        sup = None
        if opt.terminate > 0:
            sup = threading.Thread(target=supervisor, daemon=True, args=(
                shared, opt.dsn, opt.terminate, random.Random(seed), stop))
            sup.start()
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        stop.set()
        if sup:
            sup.join()
    errors = [c.error for c in clients if c.error]
    print("history: namespace %s, seed %d, %d clients, %.0f s, %d operations"
          % (namespace, seed, opt.clients, opt.seconds, shared.ops))
    for e in errors:
        print("driver error: %s" % e, file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
