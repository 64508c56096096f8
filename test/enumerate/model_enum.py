#!/usr/bin/python3
"""The enumeration graph of enumerate.sql, walked by the model of SPEC.md.

The in-server driver (driver/memtx_enumerate.c) walks the graph that
enumerate.sql defines against the real extension; this program walks the
same graph against test/model/model.py, in memory, and the two are compared
state by state.  For the comparison both write, for every canonical state
they reached, one line

    DIGEST DEPTH EXPANDED NOUT FINGERPRINT

DIGEST the first 16 bytes of sha256(the state's canonical text, as
memtx_enum.state() writes it), in hex; DEPTH the shortest depth it was
reached at; EXPANDED 1 when its calls were run (its depth is below the
bound), else 0; NOUT how many calls it has; FINGERPRINT the sum modulo 2^64
of the first 8 bytes (big-endian) of sha256(label TAB result TAB target)
over its calls: label the call in canonical form, result its result in
canonical form (ids as T1.., R1..; "error SQLSTATE" for an error), target
the digest of the state it leads to.  Equal lines for every state mean that
every call of every state gave the same result and led to the same state in
both: every transition the driver took was checked against the model.

    model_enum.py --records R --tx T --depth D [--alphabet papers|memtx]
                  [--parts N --part I --split-depth K] --out FILE
        walk the graph (or the part I of N: below depth K, only every N-th
        state of depth K, counted in the order of the walk, is expanded;
        together the parts expand every state) and write the states
    model_enum.py --compare MODEL_FILES... --against DRIVER_FILES...
                  --records R --tx T --depth D [--alphabet A] [--traces DIR]
        merge each side's parts (a state two parts reached must have the
        same fingerprint in both) and compare; on a difference, walk the
        model again to the states that differ, print each with its calls,
        and write for each of their calls a trace (the path from the empty
        store and the call) that test/model/traces.py replays call by call
        against the extension, which names the call that differs
    model_enum.py --describe DIGEST ... (with the bounds): the same for
        given states
    model_enum.py --faithful (with the bounds): every transition into a
        state already known reaches one that behaves as the model state it
        was first known by: the canonical state merges no model states that
        differ

Prints the figures (states, transitions, transitions/s) and, with
--compare, "N passed, N failed" last.
"""

import argparse
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "model"))
import model as M          # noqa: E402

AGENT_A, AGENT_B = "memtx_enum_a", "memtx_enum_b"
SOURCES = {"crm": 0.7, "crm2": 0.7}
TOOLS = {"refund": False, "note": True}
START = 600
BEGINS = ((AGENT_A, "low", None), (AGENT_B, "external_action", None),
          (AGENT_B, "low", "raw_read"))
# the roles test/model/traces.py makes, for the traces written here
TRACE_AGENTS = {AGENT_A: "memtx_model_a", AGENT_B: "memtx_model_b"}


class Ambiguous(Exception):
    """The model predicts several readings where the enumeration compares
    one: the alphabet must not offer the call (or the reading be settled)."""


def digest(text):
    return hashlib.sha256(text.encode()).digest()[:16]


def transition_hash(label, result, target):
    h = hashlib.sha256(("%s\t%s\t%s" % (label, result, target.hex()))
                       .encode()).digest()
    return int.from_bytes(h[:8], "big")


def fingerprint_add(f, label, result, target):
    """A state's fingerprint with one more call: the sum, modulo 2^64, of
    its calls' transition hashes (the in-server driver's sum)."""
    return (f + transition_hash(label, result, target)) & 0xFFFFFFFFFFFFFFFF


def successors(g, m, key):
    """The calls of model state m, whose canonical digest is key, one at a
    time: (label, call, result text, model after, target digest); a call
    that fails leaves the state, so its model after is None and its target
    key."""
    for label, call in g.actions(m):
        result, m2 = g.step(m, call)
        yield (label, call, result, m2,
               key if m2 is None else digest(g.state_text(m2)))


class Graph:
    """The alphabet, the canonical state and the canonical results of
    enumerate.sql, over a model."""

    def __init__(self, records, txs, alphabet):
        self.max_records = records
        self.max_tx = txs
        self.extra = alphabet == "memtx"
        # the papers' alphabet is the lean one (see enumerate.sql)
        self.begins = BEGINS if self.extra else BEGINS[:2]
        self.slots = ("s1", "s2") if self.extra else ("s1",)
        self.tools = ("refund", "note") if self.extra else ("refund",)

    @staticmethod
    def start():
        # enumerate.sql sets memtx.flow_control = declared: see there
        return M.Model(SOURCES, TOOLS, START, flow_control="declared")

    @staticmethod
    def ranks(m):
        tl = {tid: "T%d" % i for i, tid in enumerate(sorted(m.txs), 1)}
        rl = {rid: "R%d" % i for i, rid in enumerate(sorted(m.records), 1)}
        return tl, rl

    # --- the alphabet (memtx_enum.actions)

    def actions(self, m):
        """[(label, call)] of the calls enabled in m."""
        tl, rl = self.ranks(m)
        txs = [m.txs[i] for i in sorted(m.txs)]
        recs = [m.records[i] for i in sorted(m.records)]
        beliefs = [r for r in recs if r.kind != "tool_action"]
        out = []
        live = ("open", "committed", "partially_committed")
        if len(txs) < self.max_tx:
            begins = self.begins
            if not self.extra:
                # papers: the transactions alternate between the agents
                begins = [BEGINS[len(txs) % 2]]
            for agent, tier, iso in begins:
                out.append(("begin %s %s %s" % (agent, tier, iso or "-"),
                            {"op": "begin", "caller": "harness", "agent": agent,
                             "tier": tier, "isolation": iso,
                             "short_lease": False}))
        for t in txs:
            if t.status in live:
                out.append(("read %s" % tl[t.id],
                            {"op": "read", "caller": t.agent, "tx": t.id,
                             "entity": None, "attribute": None}))
        if len(beliefs) < self.max_records:
            used = []
            for r in beliefs:
                if r.attribute not in used:
                    used.append(r.attribute)
            unused = [s for s in self.slots if s not in used]
            slots = [s for s in self.slots
                     if s in used or (unused and s == unused[0])]
            if self.extra:
                derivations = [(None, "belief", 1.0), (None, "belief", 0.3)]
                for b in beliefs:
                    derivations += [(b, "belief", 1.0), (b, "summary", 1.0)]
            else:
                derivations = [(None, "belief", 1.0)]
                derivations += [(b, "belief", 1.0) for b in beliefs]
            for t in txs:
                if t.status != "open":
                    continue
                source = "crm" if t.agent == AGENT_A else "crm2"
                for s in slots:
                    vals = {r.value for r in beliefs if r.attribute == s}
                    free = [v for v in ("1", "2") if v not in vals]
                    values = [v for v in ("1", "2")
                              if v in vals or (free and v == free[0])]
                    if not self.extra:
                        # papers: each agent stages its own value
                        values = ["1" if t.agent == AGENT_A else "2"]
                    for p, kind, conf in derivations:
                        for v in values:
                            out.append((
                                "stage %s %s=%s %s %s %s" % (
                                    tl[t.id], s, v, kind, conf,
                                    rl[p.id] if p else "-"),
                                {"op": "stage", "caller": t.agent,
                                 "tx": t.id, "entity": "e", "attribute": s,
                                 "value": v, "kind": kind, "source": source,
                                 "confidence": conf,
                                 "parents": [p.id] if p else [],
                                 "scope": "public", "readers": None,
                                 "writers": None, "valid": None,
                                 "observed_at": None, "expected_head": None,
                                 "proposal": None}))
        for t in txs:
            if t.status == "open":
                for op in ("commit", "abort"):
                    out.append(("%s %s" % (op, tl[t.id]),
                                {"op": op, "caller": t.agent, "tx": t.id}))
        for r in recs:
            if r.state != "revoked":
                out.append(("revoke %s" % rl[r.id],
                            {"op": "revoke", "caller": r.owner,
                             "record": r.id, "note": "n"}))
        for t in txs:
            if t.status in live and not any(
                    r.kind == "tool_action" and r.tx == t.id for r in recs):
                for tool in self.tools:
                    for i in [None] + beliefs:
                        out.append((
                            "act %s %s %s" % (tl[t.id], tool,
                                              rl[i.id] if i else "-"),
                            {"op": "act", "caller": t.agent, "tx": t.id,
                             "tool": tool, "args": '{"n": 1}',
                             "inputs": [i.id] if i else [],
                             "effect_key": None}))
        for t in txs:
            if t.status in live:
                out.append(("gate %s refund" % tl[t.id],
                            {"op": "gate", "caller": t.agent, "tx": t.id,
                             "tool": "refund"}))
        if not self.extra:
            return out
        for r in recs:
            if r.state == "quarantined" and r.reason == "needs_review":
                for accept in (True, False):
                    out.append(("resolve %s %s" % (rl[r.id],
                                                   "true" if accept else "false"),
                                {"op": "resolve", "caller": "harness",
                                 "record": r.id, "accept": accept}))
        op = "unfence" if AGENT_B in m.fenced else "fence"
        out.append(("%s %s" % (op, AGENT_B),
                    {"op": op, "caller": "harness", "role": AGENT_B}))
        for r in recs:
            if not r.erased:
                out.append(("erase %s" % rl[r.id],
                            {"op": "erase", "caller": "harness",
                             "record": r.id, "note": None}))
        return out

    # --- the canonical state (memtx_enum.state)

    def state_text(self, m):
        tl, rl = self.ranks(m)
        recs = [m.records[i] for i in sorted(m.records)]
        slot_n, value_n = {}, {}
        for r in recs:
            if r.kind == "tool_action":
                continue
            s = (r.entity, r.attribute)
            slot_n.setdefault(s, "S%d" % (len(slot_n) + 1))
            if not r.erased:
                vs = value_n.setdefault(s, {})
                vs.setdefault(r.value, "V%d" % (len(vs) + 1))
        lines = []
        for tid in sorted(m.txs):
            t = m.txs[tid]
            snap = ",".join(rl[r.id] for r in recs if r.tx != t.id
                            and r.committed_seq is not None
                            and r.committed_seq <= t.snapshot)
            line = "%s %s %s %s %s snap[%s]" % (tl[tid], t.agent, t.tier,
                                                 t.level, t.status, snap)
            if t.level == "raw_read":
                line += " staged[%s]" % ",".join(
                    rl[r.id] for r in recs
                    if r.tx != t.id and r.staged_pos < t.begin_pos)
            if m.old_epoch(t):
                line += " fenced"
            lines.append(line)
        rb, cp = {}, {}
        for row in m.rollback:
            rb[row[1]] = rb.get(row[1], 0) + 1
        for row in m.compensations:
            cp[row[1]] = cp.get(row[1], 0) + 1
        for r in recs:
            if r.kind == "tool_action":
                sv = r.entity
            elif r.erased:
                sv = slot_n[r.entity, r.attribute] + "=erased"
            else:
                sv = "%s=%s" % (slot_n[r.entity, r.attribute],
                                value_n[r.entity, r.attribute][r.value])
            conf = ("-" if r.kind == "tool_action"
                    else "high" if r.confidence >= 0.6 else "low")
            parents = ",".join(rl[p] for p in sorted(m.edges[r.id]))
            reason = M.first(r.reason)
            lines.append("%s %s %s %s %s %s P[%s] %s/%s rb%d cp%d%s%s" % (
                rl[r.id], tl[r.tx], sv, r.kind, conf, r.source or "-",
                parents, r.state, reason or "-", rb.get(r.id, 0),
                cp.get(r.id, 0),
                " seq" if r.committed_seq is not None else "",
                " erased" if r.erased and r.kind == "tool_action" else ""))
        lines.append("reg[%s]" % ",".join(rl[i] for i in sorted(m.registry)))
        if m.epochs.get(AGENT_B):
            lines.append("b E%d%s" % (m.epochs[AGENT_B],
                                      " fenced" if AGENT_B in m.fenced else ""))
        return " | ".join(lines)

    # --- canonical results (the probes of actions())

    def result_text(self, call, pred, m):
        kind = pred[0]
        if kind == "err":
            codes = pred[1]
            if codes is None or len(codes) != 1:
                raise Ambiguous("%s: error %s" % (call["op"], codes))
            return "error " + next(iter(codes))
        if kind != "ok":
            raise Ambiguous("%s: %r" % (call["op"], pred))
        v = pred[1]
        if _has_oneof(v):
            raise Ambiguous("%s: %r" % (call["op"], v))
        tl, rl = self.ranks(m)
        op = call["op"]
        if op == "begin":
            return tl[max(m.txs)]
        if op == "stage":
            return rl[max(m.records)]
        if op == "commit":
            return "; ".join("%s %s %s" % (rl[rid], state, reason or "-")
                             for rid, state, reason in v)
        if op in ("abort", "revoke", "erase"):
            return "; ".join("%s %s %s" % (rl[rid], action, reason)
                             for rid, action, reason in
                             sorted(v, key=lambda x: (x[0], x[1])))
        if op == "resolve":
            return v
        if op == "read":
            return "[%s]" % ",".join(rl[i] for i in sorted(v))
        if op == "gate":
            allowed, reason, blockers = v
            return "%s %s [%s]" % ("true" if allowed else "false",
                                   reason or "-",
                                   ",".join(rl[i] for i in sorted(blockers)))
        if op == "act":
            allowed, reason, action, blockers = v[:4]
            return "%s %s %s [%s]" % ("true" if allowed else "false",
                                      reason or "-",
                                      rl[action] if action else "-",
                                      ",".join(rl[i] for i in sorted(blockers)))
        if op == "fence":
            return str(v)
        if op == "unfence":
            return ""
        raise ValueError(op)

    def step(self, m, call):
        """Applies call to a copy of m: (result text, model after or None
        when the call failed)."""
        m2 = m.clone()
        op = call["op"]
        new_id = None
        if op == "begin":
            new_id = max(m2.txs, default=0) + 1
        elif op in ("stage", "act"):
            new_id = max(m2.records, default=0) + 1
        pred = m2.apply(dict(call), new_id)
        result = self.result_text(call, pred, m2)
        return result, (None if pred[0] == "err" else m2)


def _has_oneof(v):
    if isinstance(v, M.OneOf):
        return True
    if isinstance(v, (list, tuple)):
        return any(_has_oneof(x) for x in v)
    return False


class Walk:
    """The depth-first walk with the in-server driver's rules: a state
    reached again by a shorter path is expanded again, so the states found
    are exactly those within depth calls of the start; the calls of a state
    are counted once, when it is first expanded."""

    def __init__(self, graph, depth, parts=1, part=0, split_depth=0,
                 targets=None, transitions=None):
        self.g = graph
        self.depth = depth
        self.parts, self.part, self.split = parts, part, split_depth
        self.seen = {}          # digest -> [depth, expanded, nout, fp]
        self.transitions = 0
        self.shares = 0         # states of the split depth met so far
        self.targets = targets  # digests to describe: digest -> path
        self.found = {}
        self.tfile = transitions

    def share(self, depth):
        """Whether this part expands a state reached at depth."""
        if self.parts == 1 or depth != self.split:
            return True
        self.shares += 1
        return (self.shares - 1) % self.parts == self.part

    def run(self):
        m = self.g.start()
        text = self.g.state_text(m)
        key = digest(text)
        self.seen[key] = [0, False, 0, 0]
        self.expand(m, key, 0, [])

    def expand(self, m, key, depth, path):
        entry = self.seen[key]
        first = not entry[1]
        entry[1] = True
        if self.targets is not None and key in self.targets \
                and key not in self.found:
            self.found[key] = (list(path), m, self.g.state_text(m))
        for label, call, result, m2, target in successors(self.g, m, key):
            self.transitions += 1
            if first and self.tfile:
                self.tfile.write("%s\t%s\t%s\t%s\n" % (key.hex(), label, result,
                                                        target.hex()))
            if first:
                entry[2] += 1
                entry[3] = fingerprint_add(entry[3], label, result, target)
            if m2 is None:
                continue
            d = depth + 1
            seen = self.seen.get(target)
            if seen is not None and seen[0] <= d:
                continue
            if seen is None:
                self.seen[target] = [d, False, 0, 0]
            else:
                seen[0] = d
            if d < self.depth and self.share(d):
                self.expand(m2, target, d, path + [(label, call, m2)])


def faithful(g, depth, alphabet, limit=3):
    """Whether the canonical state is faithful to the model: breadth first
    over the graph, every transition that reaches a state already known
    must reach one whose calls give the same results and lead to the same
    states as the model state it was first known by (the fingerprint, from
    each model state).  A state text that merges model states which behave
    differently would prune, in every walk, a subtree no check then sees.
    Over memtx's alphabet the calls' labels are left out of the fingerprint
    (they name concrete values, which the canonical state renames by first
    appearance).  Prints up to limit merged states with the two paths;
    returns (states, transitions re-checked, merged)."""
    labels = alphabet == "papers"

    def fp(succ):
        f = 0
        for label, _, result, _, target in succ:
            f = fingerprint_add(f, label if labels else "", result, target)
        return f

    m0 = g.start()
    k0 = digest(g.state_text(m0))
    first = {k0: (fp(successors(g, m0, k0)), [])}
    layer = [(k0, m0, [])]
    checked = merged = 0
    for _ in range(depth):
        following = []
        for key, m, path in layer:
            for label, _, _, m2, k2 in successors(g, m, key):
                if m2 is None:
                    continue
                f2 = fp(successors(g, m2, k2))
                if k2 not in first:
                    first[k2] = (f2, path + [label])
                    following.append((k2, m2, path + [label]))
                    continue
                checked += 1
                if first[k2][0] != f2:
                    merged += 1
                    if merged <= limit:
                        print("MERGED: state %s, reached by\n  %s\nand by\n  %s\n"
                              "behaves otherwise (its calls' results or targets): %s"
                              % (k2.hex(), " ; ".join(first[k2][1]),
                                 " ; ".join(path + [label]), g.state_text(m2)))
        layer = following
    return len(first), checked, merged


def write_states(seen, path):
    with open(path, "w") as f:
        for key, (depth, expanded, nout, fp) in seen.items():
            f.write("%s %d %d %d %016x\n" % (key.hex(), depth, int(expanded),
                                             nout if expanded else 0,
                                             fp if expanded else 0))


def read_states(paths):
    """Merges the parts' files: {digest: (depth, expanded, nout, fp)};
    returns it and the states whose parts disagree."""
    out, bad = {}, []
    for path in paths:
        with open(path) as f:
            for line in f:
                key, depth, expanded, nout, fp = line.split()
                depth, expanded, nout = int(depth), int(expanded), int(nout)
                old = out.get(key)
                if old is None:
                    out[key] = (depth, expanded, nout, fp)
                    continue
                if expanded and old[1] and (nout, fp) != old[2:]:
                    bad.append(key)
                out[key] = (min(depth, old[0]), max(expanded, old[1]),
                            *(((nout, fp) if expanded else old[2:])))
    return out, bad


def describe(opts, keys, trace_dir):
    """Walks the model to the given states; prints each with its calls and
    writes a trace per call."""
    g = Graph(opts.records, opts.tx, opts.alphabet)
    w = Walk(g, opts.depth, targets={bytes.fromhex(k) for k in keys})
    w.run()
    for k in keys:
        found = w.found.get(bytes.fromhex(k))
        if found is None:
            print("state %s: the model does not reach it (within the bound)"
                  % k)
            continue
        path, m, text = found
        print("state %s, reached by %d calls: %s" % (k, len(path), text))
        print("  path: %s" % " ; ".join(label for label, _, _ in path))
        for n, (label, call) in enumerate(g.actions(m)):
            result, m2 = g.step(m, call)
            target = digest(g.state_text(m2)).hex() if m2 else k
            print("  %-40s -> %s  [%s]" % (label, result or "''", target))
            if trace_dir:
                write_trace(os.path.join(trace_dir, "%s-%02d.json" % (k[:12], n)),
                            [c for _, c, _ in path] + [call],
                            "state %s, call %r" % (k, label))


def write_trace(path, calls, note):
    """A trace test/model/traces.py replays: the calls, with labels for the
    ids the model gave (replayed here to learn which call made what)."""
    g = Graph(0, 0, "papers")
    m = g.start()
    labels, ops = {}, [{"op": "config", "flow_control": "declared"}]
    for n, call in enumerate(calls):
        op = dict(call)
        for k in ("agent", "caller", "role"):
            if k in op:
                op[k] = TRACE_AGENTS.get(op[k], op[k])
        for k in ("tx", "record"):
            if k in op:
                op[k] = labels[op[k] if k == "record" else ("tx", op[k])]
        for k in ("parents", "inputs"):
            if k in op:
                op[k] = [labels[x] for x in op[k]]
        before_tx, before_rec = set(m.txs), set(m.records)
        _, m2 = g.step(m, call)
        if m2 is not None:
            for tid in set(m2.txs) - before_tx:
                op["label"] = "t%d" % n
                labels[("tx", tid)] = op["label"]
            for rid in set(m2.records) - before_rec:
                op["label"] = "r%d" % n
                labels[rid] = op["label"]
            m = m2
        ops.append(op)
    with open(path, "w") as f:
        f.write('{\n "note": %s,\n "ops": [\n  %s\n ]\n}\n' % (
            json.dumps(note), ",\n  ".join(json.dumps(o) for o in ops)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=3)
    ap.add_argument("--tx", type=int, default=3)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--alphabet", default="papers", choices=("papers", "memtx"))
    ap.add_argument("--parts", type=int, default=1)
    ap.add_argument("--part", type=int, default=0)
    ap.add_argument("--split-depth", type=int, default=2)
    ap.add_argument("--out", help="write the states found there (a walk "
                    "without it prints its figures only)")
    ap.add_argument("--transitions", metavar="FILE",
                    help="also write every transition, a line each (as the "
                    "driver's MEMTX_ENUM_TRANSITIONS does)")
    ap.add_argument("--compare", nargs="+", metavar="MODEL_FILE")
    ap.add_argument("--against", nargs="+", metavar="DRIVER_FILE")
    ap.add_argument("--describe", nargs="+", metavar="DIGEST")
    ap.add_argument("--traces", metavar="DIR",
                    help="where --compare and --describe write traces")
    ap.add_argument("--faithful", action="store_true",
                    help="check that the canonical state is faithful to the "
                    "model within the bounds (see faithful())")
    opts = ap.parse_args()
    if opts.describe:
        describe(opts, opts.describe, opts.traces)
        return 0
    if opts.faithful:
        started = time.time()
        states, checked, merged = faithful(
            Graph(opts.records, opts.tx, opts.alphabet), opts.depth, opts.alphabet)
        print("canonical state at %d records, %d transactions, depth %d, "
              "alphabet %s: %d states, %d transitions into a known state "
              "re-checked from their own model state, %d merged, %.1f s"
              % (opts.records, opts.tx, opts.depth, opts.alphabet, states,
                 checked, merged, time.time() - started))
        print("%d passed, %d failed" % (merged == 0, merged != 0))
        return 1 if merged else 0
    if opts.compare:
        return compare(opts)
    started = time.time()
    g = Graph(opts.records, opts.tx, opts.alphabet)
    w = Walk(g, opts.depth, opts.parts, opts.part, opts.split_depth,
             transitions=open(opts.transitions, "w") if opts.transitions
             else None)
    try:
        w.run()
    except Ambiguous as e:
        print("the model predicts several readings where the enumeration "
              "compares one: %s" % e)
        return 2
    elapsed = time.time() - started
    if opts.out:
        write_states(w.seen, opts.out)
    print("model: bounds %d records, %d transactions, depth %d, alphabet %s"
          "%s: %d states (%d expanded), %d transitions in %.1f s: "
          "%.0f transitions/s" % (
              opts.records, opts.tx, opts.depth, opts.alphabet,
              " (part %d of %d)" % (opts.part + 1, opts.parts)
              if opts.parts > 1 else "",
              len(w.seen), sum(1 for v in w.seen.values() if v[1]),
              w.transitions, elapsed, w.transitions / max(elapsed, 1e-9)),
          flush=True)
    return 0


def compare(opts):
    model, mbad = read_states(opts.compare)
    driver, dbad = read_states(opts.against)
    problems = []
    if mbad:
        problems.append("the model's parts disagree on %d states" % len(mbad))
    if dbad:
        problems.append("the driver's parts disagree on %d states (the same "
                        "state gave other results in another part): %s"
                        % (len(dbad), " ".join(dbad[:5])))
    only_m = sorted(set(model) - set(driver))
    only_d = sorted(set(driver) - set(model))
    differ = sorted(k for k in set(model) & set(driver)
                    if model[k][1] and driver[k][1]
                    and model[k][2:] != driver[k][2:])
    unexpanded = sorted(k for k in set(model) & set(driver)
                        if model[k][1] != driver[k][1])
    print("compared: the model %d states, the driver %d; %d transitions "
          "compared (%d in the model)" % (
              len(model), len(driver),
              sum(v[2] for k, v in driver.items() if k in model and v[1]),
              sum(v[2] for v in model.values())))
    if only_m:
        problems.append("%d states only the model reaches" % len(only_m))
    if only_d:
        problems.append("%d states only the driver reaches" % len(only_d))
    if differ:
        problems.append("%d states whose calls differ (results or targets)"
                        % len(differ))
    if unexpanded:
        problems.append("%d states expanded by one side only" % len(unexpanded))
    for p in problems:
        print("MISMATCH: " + p)
    if differ or only_m or unexpanded:
        keys = (differ or only_m or unexpanded)[:3]
        # the shallowest first: its calls name the first difference
        keys = sorted(keys, key=lambda k: model.get(k, (99,))[0])
        if opts.traces:
            os.makedirs(opts.traces, exist_ok=True)
        describe(opts, keys, opts.traces)
        if opts.traces:
            print("traces of every call of these states, which "
                  "test/model/traces.py replays against the extension: %s"
                  % opts.traces)
    ok = not problems
    print("%d passed, %d failed" % (1 if ok else 0, 0 if ok else 1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
