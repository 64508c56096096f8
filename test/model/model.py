"""An independent model of memtx's contract (SPEC.md §1-§10, and the §16
rules they touch).

Written from the SPEC text alone, never from the extension's C or SQL: it is
a second reading of the contract, so a disagreement between it and the
extension is either a model error (fixed here, citing the SPEC) or an
extension bug.  The model is a plain state machine over records,
transactions, edges, the revocation registry, tools, effect keys and
proposals, driven
one call at a time by `Model.apply(op, new_id)`, which returns the predicted
result and moves the state as the extension should.

Ids are not predicted: the driver passes the id the extension returned for
a call that creates something (`begin`, `stage`, `propose`, an allowed
`act`), and the model adopts it.  Everything else is predicted:

  ("ok", value)         the call returns value ("id": any new id)
  ("err", codes)        the call fails; codes is a set of SQLSTATEs, or None
                        where the SPEC names no code (any specific one will do)
  OneOf(a, b, ...)      inside a value: any of these (an ambiguity of the SPEC
                        whose readings differ only in what is returned)
  ("any", None)         the SPEC says nothing of the result (the state after
                        the call is still compared, and an internal error is
                        still a failure)

Readings where the SPEC is silent or ambiguous are marked READING, with the
section and the words they read.

Time is in whole minutes from an origin the driver picks (`Model.now`);
validity ranges are half-open [lo, hi) with None for an unbounded end.
"""

ACTIVE = ("committed", "action_safe")
VIEW_KINDS = ("summary", "profile", "index_entry", "shared_copy")
SCOPE_RANK = {"private": 0, "shared": 1, "public": 2}
# §3: tier -> isolation level
TIER_LEVEL = {"low": "committed_read", "medium": "verified_read",
              "high": "causally_stable_read",
              "external_action": "action_safe_read"}
LEVELS = ("raw_read", "committed_read", "verified_read",
          "causally_stable_read", "action_safe_read")
CONFIDENCE_THRESHOLD = 0.6      # §4 1, memtx.confidence_threshold
AUTHORITY_BYPASS = 0.9          # §4 1, memtx.authority_bypass
DEFAULT_AUTHORITY = 0.5         # §1, memtx.default_authority


class OneOf:
    """A predicted value with several readings (see READING notes)."""

    def __init__(self, *options):
        self.options = options

    def __repr__(self):
        return "OneOf%r" % (self.options,)


def matches(pred, actual):
    if isinstance(pred, OneOf):
        return any(matches(p, actual) for p in pred.options)
    if isinstance(pred, (list, tuple)) and isinstance(actual, (list, tuple)):
        return len(pred) == len(actual) and all(
            matches(p, a) for p, a in zip(pred, actual))
    return pred == actual


def overlaps(a, b):
    """Half-open ranges (lo, hi), None = unbounded."""
    alo, ahi = a
    blo, bhi = b
    return ((ahi is None or blo is None or blo < ahi)
            and (bhi is None or alo is None or alo < bhi))


def contains(rng, t):
    lo, hi = rng
    return (lo is None or lo <= t) and (hi is None or t < hi)


class Record:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Tx:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Model:
    def __init__(self, sources, tools, now):
        self.sources = dict(sources)        # name -> authority
        self.tools = dict(tools)            # name -> reversible
        self.now = now
        self.records = {}                   # id -> Record
        self.edges = {}                     # child id -> [parent ids]
        self.children = {}                  # parent id -> [child ids]
        self.registry = set()               # §6 revocation registry
        self.txs = {}                       # id -> Tx
        self.effect_keys = {}               # key -> (tool, agent, args, result)
        self.proposals = {}                 # §10, §17: (agent, proposal id) -> record id
        self.pos = 0                        # one global order (§1)
        self.seq = 0                        # commit sequence (§3 snapshot)

    # ------------------------------------------------------------ predicates

    def ancestors(self, rid):
        seen, todo = set(), list(self.edges.get(rid, ()))
        while todo:
            p = todo.pop()
            if p not in seen:
                seen.add(p)
                todo.extend(self.edges.get(p, ()))
        return seen

    def descendants(self, rid):
        seen, order, todo = set(), [], list(self.children.get(rid, ()))
        while todo:
            c = todo.pop(0)
            if c not in seen:
                seen.add(c)
                order.append(c)
                todo.extend(self.children.get(c, ()))
        return order

    @staticmethod
    def readable(r, agent):
        # §7: owner, a member of one of its readers (agents are plain roles,
        # members of themselves only), or anyone when scope is public
        return r.owner == agent or agent in r.readers or r.scope == "public"

    def rivals(self, a, b):
        """§4 3d: same slot, overlapping validity, different value;
        tool_action records take no part in adjudication."""
        return (a.id != b.id and a.kind != "tool_action"
                and b.kind != "tool_action" and a.entity == b.entity
                and a.attribute == b.attribute and overlaps(a.valid, b.valid)
                and a.value != b.value)

    def tentative_rival(self, x, t):
        # READING §3 causally_stable_read: "a tentative rival in flight" is a
        # tentative rival staged by another transaction than the reader (the
        # gate's rule says "the agent's own uncommitted staging included";
        # this one does not, and the extension leaves the reader's own out)
        return any(y.state == "tentative" and y.tx != t.id and self.rivals(x, y)
                   for y in self.records.values())

    def exposes(self, r, t):
        """§3 table: does t's level expose r's current state."""
        level = t.level
        if level == "raw_read":
            return True
        if r.state not in ACTIVE:
            return False
        if level == "committed_read":
            return True
        anc = self.ancestors(r.id)
        if any(self.records[a].state not in ACTIVE for a in anc):
            return False
        if level == "verified_read":
            return True
        if any(self.tentative_rival(self.records[x], t) for x in anc | {r.id}):
            return False
        if anc & self.registry:
            return False
        if level == "causally_stable_read":
            return True
        return r.state == "action_safe"

    def visible(self, r, t):
        """§3 visibility of record r to transaction t."""
        if not self.readable(r, t.agent):
            return False
        if r.tx == t.id:
            return r.state == "tentative" or self.exposes(r, t)
        if t.level == "raw_read":
            in_snapshot = r.staged_pos < t.begin_pos
        else:
            in_snapshot = (r.committed_seq is not None
                           and r.committed_seq <= t.snapshot)
        return in_snapshot and self.exposes(r, t)

    @staticmethod
    def lease_out(t):
        # READING §2/§3: the lease runs on the wall clock (§2 names validity
        # and observation times, not the lease, as judged by memtx.now()).
        # The driver opens some transactions with the shortest lease (1 s),
        # makes a few calls on them at once with that lease in force, then a
        # "wait" call sleeps past it: a short lease not renewed since (with
        # the 30-minute lease of every other call) has run out
        return t.status == "open" and t.expired

    # ------------------------------------------------------------- checks

    def tx_check(self, op, allow_committed=False):
        """The common errors of a call on a transaction, or None."""
        t = self.txs[op["tx"]]
        foreign = op["caller"] != t.agent
        ended = t.status != "open" and not (allow_committed and t.status in (
            "committed", "partially_committed"))
        if foreign and not ended and not self.lease_out(t):
            return ("err", {"42501"})       # §3: only the transaction's agent
        if foreign or ended or self.lease_out(t):
            # READING §3/§5: the SPEC names no SQLSTATE for a call on an ended
            # transaction or one whose lease ran out, nor an order of checks
            return ("err", None)
        return None

    @staticmethod
    def renew(t, op):
        """§3: a call renews the lease with the value in force for it."""
        if t.status == "open" and not t.expired:
            t.short = bool(op.get("short_lease"))

    # -------------------------------------------------------------- calls

    def apply(self, op, new_id=None):
        return getattr(self, "op_" + op["op"])(op, new_id)

    def op_tick(self, op, new_id):
        self.now += op["minutes"]
        return ("ok", None)

    def op_wait(self, op, new_id):
        for t in self.txs.values():
            if t.status == "open" and t.short:
                t.expired = True
        return ("ok", None)

    def op_begin(self, op, new_id):
        # §3: a harness passes tier, agent and (sometimes) isolation
        level = op.get("isolation") or TIER_LEVEL[op["tier"]]
        self.pos += 1
        self.txs[new_id] = Tx(id=new_id, agent=op["agent"], tier=op["tier"],
                              level=level, status="open", snapshot=self.seq,
                              begin_pos=self.pos, staged=[], read_set=set(),
                              short=bool(op.get("short_lease")), expired=False,
                              outcome=None)
        return ("ok", "id")

    def op_stage(self, op, new_id):
        # v2 preamble: each call "checks its arguments first"; READING: the
        # SPEC orders neither the argument checks among themselves nor against
        # the transaction checks, so with several problems any of their codes
        err = self.tx_check(op)
        problems = [] if err is None else [None if err[1] is None
                                           else next(iter(err[1]))]
        t = self.txs[op["tx"]]
        problems += self.argument_problems(op, t.agent)
        if problems:
            return ("err", None if None in problems else set(problems))
        parents = op["parents"]
        observed = self.observed(op)
        head = op.get("expected_head")
        proposal = op.get("proposal")
        if proposal is not None and (t.agent, proposal) in self.proposals:
            # §10: a retry of the same content by the same agent returns the
            # original id and stages nothing; anything else is 23505.
            # §17: ids are per agent: another agent's use is another proposal.
            # READING §3/§16: a retry writes nothing, yet as a call on the
            # transaction (not a probe) it renews the lease
            o = self.records[self.proposals[t.agent, proposal]]
            if not self.same_content(o, op, t.agent):
                return ("err", {"23505"})
            self.renew(t, op)
            return ("ok", o.id)
        self.pos += 1
        r = Record(id=new_id, tx=t.id, owner=t.agent, entity=op["entity"],
                   attribute=op["attribute"], value=op["value"],
                   kind=op["kind"], source=op["source"],
                   authority=self.sources.get(op["source"], DEFAULT_AUTHORITY),
                   confidence=op["confidence"], scope=op["scope"],
                   readers=frozenset(op["readers"] or ()),
                   writers=frozenset(op["writers"] or ()),
                   valid=tuple(op["valid"]) if op["valid"] else (None, None),
                   observed_at=observed, state="tentative", reason=None,
                   staged_pos=self.pos, committed_seq=None, tool=None,
                   expected_head=head, proposal=proposal)
        self.add_record(r, parents)
        if proposal is not None:
            self.proposals[t.agent, proposal] = r.id
        t.staged.append(r.id)
        self.renew(t, op)
        return ("ok", "id")

    def argument_problems(self, op, agent):
        """The SQLSTATEs of what is wrong with a stage's (or a propose's)
        arguments; None stands for a code the SPEC does not name."""
        problems = []
        for p in op["parents"]:
            if not self.readable(self.records[p], agent):
                problems.append("42704")    # §16: not readable = not existing
        if op["observed_at"] is not None and op["observed_at"] > self.now:
            problems.append("22008")        # §16 sources
        if not 0 <= op["confidence"] <= 1:
            problems.append(None)           # §4: a specific SQLSTATE, unnamed
        head = op.get("expected_head")
        if head not in (None, 0) and not (
                head in self.records and self.records[head].kind != "tool_action"
                and self.records[head].entity == op["entity"]
                and self.records[head].attribute == op["attribute"]
                and self.readable(self.records[head], agent)):
            problems.append("22023")        # §10: one error for both cases
        return problems

    def observed(self, op):
        """§4: provenance follows content (observed_at inherited)."""
        if op["observed_at"] is not None:
            return op["observed_at"]
        seen = [self.records[p].observed_at for p in op["parents"]
                if self.records[p].observed_at is not None]
        return max(seen) if seen else None

    def same_content(self, r, op, agent):
        """§10: the same agent and what r stores once defaults apply."""
        return r.owner == agent and (
            r.entity, r.attribute, r.value, r.kind, r.source, r.confidence,
            frozenset(self.edges[r.id]), r.scope, r.readers, r.writers,
            r.valid, r.observed_at, r.expected_head) == (
            op["entity"], op["attribute"], op["value"], op["kind"],
            op["source"], op["confidence"], frozenset(op["parents"]),
            op["scope"], frozenset(op["readers"] or ()),
            frozenset(op["writers"] or ()),
            tuple(op["valid"]) if op["valid"] else (None, None),
            self.observed(op), op.get("expected_head"))

    def head_set(self, r):
        """§10: the active records on r's slot whose validity overlaps r's,
        whatever their value."""
        return {x.id for x in self.records.values()
                if x.state in ACTIVE and x.id != r.id and x.kind != "tool_action"
                and x.entity == r.entity and x.attribute == r.attribute
                and overlaps(x.valid, r.valid)}

    def head_matches(self, r):
        want = set() if r.expected_head == 0 else {r.expected_head}
        return self.head_set(r) == want

    def add_record(self, r, parents):
        self.records[r.id] = r
        self.edges[r.id] = list(parents)
        for p in parents:
            self.children.setdefault(p, []).append(r.id)

    def op_read(self, op, new_id):
        err = self.tx_check(op)
        if err:
            return err
        t = self.txs[op["tx"]]
        ids = sorted(r.id for r in self.records.values()
                     if (op["entity"] is None or r.entity == op["entity"])
                     and (op["attribute"] is None
                          or r.attribute == op["attribute"])
                     and self.visible(r, t))
        t.read_set.update(ids)
        # READING §3/§16 "a lease is renewed only by calls that write
        # anyway": a read renews it when it writes the read set, i.e. when it
        # returns a row
        if ids:
            self.renew(t, op)
        return ("ok", ids)

    # --- the commit pipeline (§4)

    def check_record(self, r, t):
        """The four ordered checks; returns (reason, rivals to supersede)."""
        # 1 evidence
        if r.confidence < CONFIDENCE_THRESHOLD and r.authority < AUTHORITY_BYPASS:
            return "low_evidence", []
        # 2 validity
        if not contains(r.valid, self.now):
            return "outside_validity", []
        parents = [self.records[p] for p in self.edges[r.id]]
        # 3a
        if any(p.state == "revoked" or p.id in self.registry for p in parents):
            return "revoked_parent", []
        # 3b; READING: with both kinds of parent, uncommitted_parent (named
        # first) wins
        if any(p.state == "tentative" and p.tx != t.id for p in parents):
            return "uncommitted_parent", []
        if any(p.state in ("quarantined", "superseded") for p in parents):
            return "inactive_parent", []
        # 3c: declared parents plus the read set (flow_control = read_set)
        flow = {p.id for p in parents} | t.read_set
        for pid in sorted(flow):
            p = self.records[pid]
            if SCOPE_RANK[p.scope] < SCOPE_RANK[r.scope]:
                return "permission_laundering", []
            if p.scope != "public" and not r.readers <= p.readers:
                return "permission_laundering", []
        # 3d slot adjudication; §10: the expected head is its first rule,
        # and a matching head lifts the snapshot-based staleness rule
        if r.expected_head is not None and not self.head_matches(r):
            return "stale_head", []
        head_ok = r.expected_head is not None
        rivals = [x for x in self.records.values()
                  if x.state in ACTIVE and self.rivals(r, x)]
        outcomes = set()
        for x in rivals:
            # READING §4 3d: "(records committed by the same transaction are
            # never stale to it)" qualifies the snapshot rule only; a rival
            # of the same transaction observed later is stale_late_write
            if ((not head_ok and x.tx != t.id and x.committed_seq is not None
                 and x.committed_seq > t.snapshot)
                    or (x.observed_at is not None and r.observed_at is not None
                        and x.observed_at > r.observed_at)):
                outcomes.add("stale_late_write")
            elif r.authority < x.authority:
                outcomes.add("lower_authority")
            elif r.authority == x.authority and r.source != x.source:
                # READING §4 3d: two NULL sources are the same source
                outcomes.add("needs_review")
            elif not (t.agent == x.owner or t.agent in x.writers):
                outcomes.add("write_not_permitted")
        for reason in ("stale_late_write", "lower_authority",
                       "write_not_permitted", "needs_review"):
            if reason in outcomes:
                return reason, []
        # 4 dependency stability
        for a in self.ancestors(r.id):
            if self.records[a].state == "revoked" or a in self.registry:
                return "unstable_dependency", []
        return None, rivals

    def op_commit(self, op, new_id):
        t = self.txs[op["tx"]]
        if t.outcome is not None and op["caller"] == t.agent:
            return ("ok", list(t.outcome))  # §4: idempotent
        if t.status == "aborted" and op["caller"] == t.agent:
            # READING §4: commit of a transaction ended by abort, expiry or
            # fence; the SPEC says neither error nor outcome, so the result is
            # not compared (the state still is: nothing may change)
            return ("any", None)
        err = self.tx_check(op)
        if err:
            return err
        rows, passed = [], 0
        for rid in t.staged:
            r = self.records[rid]
            if r.state != "tentative":
                # §11: records repaired before their commit, as they stand
                rows.append((rid, r.state, r.reason))
                continue
            reason, beaten = self.check_record(r, t)
            if reason:
                r.state, r.reason = "quarantined", reason
                self.repair_actions_of(r)
            else:
                for x in beaten:
                    x.state = "superseded"
                    x.reason = OneOf(x.reason, None, "superseded")
                self.seq += 1
                r.committed_seq = self.seq
                r.state = ("action_safe" if t.tier == "external_action"
                           else "committed")
                passed += 1
            rows.append((rid, r.state, r.reason))
        if passed == len(t.staged):
            t.status = "committed"
        elif passed:
            t.status = "partially_committed"
        else:
            t.status = "aborted"
        t.outcome = rows
        return ("ok", rows)

    def repair_actions_of(self, r):
        """§16: a tool action derived from a record that leaves tentative
        other than by committing is repaired with that record as the root."""
        for d in self.descendants(r.id):
            x = self.records[d]
            if x.kind != "tool_action":
                continue
            if x.state in ACTIVE:
                x.state, x.reason = "revoked", "revoked_parent"
            # READING §16 "repaired as in §6": what descends from each action
            # below the record (one revoked earlier included) is then
            # repaired as §6 repairs descendants
            self.repair_descendants(d)

    # --- retraction (§6)

    def cascade(self, root, reason):
        r = self.records[root]
        if r.state == "revoked":
            return []
        rows = []
        if r.kind == "tool_action":
            # §16: a tool_action root is repaired like a descendant
            rows.append((root, self.action_repair(r), reason))
        else:
            rows.append((root, "revoked", reason))
        r.state, r.reason = "revoked", reason
        return rows + self.repair_descendants(root)

    def repair_descendants(self, root):
        rows = []
        for d in self.descendants(root):
            x = self.records[d]
            if x.state == "revoked":
                continue
            if x.state in ACTIVE:
                if x.kind == "belief":
                    x.state, x.reason = "revoked", "revoked_parent"
                    rows.append((d, "revoked", "revoked_parent"))
                elif x.kind in VIEW_KINDS:
                    x.state, x.reason = "quarantined", "invalidated"
                    self.registry.add(d)
                    rows.append((d, "quarantined", "invalidated"))
                else:
                    rows.append((d, self.action_repair(x), "revoked_parent"))
                    x.state, x.reason = "revoked", "revoked_parent"
            elif x.state == "quarantined" and d in self.registry:
                continue                    # stays quarantined, no new row
            else:
                # tentative, superseded, quarantined at commit
                x.state, x.reason = "revoked", "revoked_parent"
                rows.append((d, "revoked", "revoked_parent"))
        return rows

    def action_repair(self, x):
        # §5: an unregistered tool is irreversible
        return "compensated" if self.tools.get(x.tool) else "leaked"

    def abort_tx(self, t, reason):
        # §6: every staged record still tentative is a root (reason aborted or
        # expired), even one derived from another; then the cascades
        roots = [rid for rid in t.staged
                 if self.records[rid].state == "tentative"]
        rows = []
        for rid in roots:
            r = self.records[rid]
            r.state, r.reason = "revoked", reason
            rows.append((rid, "revoked", reason))
        for rid in roots:
            rows.extend(self.repair_descendants(rid))
        t.status = "aborted"
        return rows

    def op_abort(self, op, new_id):
        err = self.tx_check(op)
        if err:
            return err
        return ("ok", self.abort_tx(self.txs[op["tx"]], "aborted"))

    def op_revoke(self, op, new_id):
        r = self.records[op["record"]]
        caller = op["caller"]
        if caller != "harness" and caller != r.owner:
            # §7: revoke of a record the caller does not own is a harness
            # operation; §16: an unreadable id is "does not exist"
            return ("err", {"42501"} if self.readable(r, caller)
                    else {"42501", "42704"})
        return ("ok", self.cascade(r.id, "revoked"))

    def op_resolve(self, op, new_id):
        """§4 3d: the harness settles a needs_review record, and only such a
        record."""
        r = self.records[op["record"]]
        if op["caller"] != "harness":
            return ("err", {"42501"})       # §7: a harness operation
        if r.state != "quarantined" or r.reason != "needs_review":
            return ("err", None)            # READING: the SPEC names no code
        if not op["accept"]:
            # READING §4: "reject revokes it, with cascade"; the root's reason
            # is that of a revoke
            self.cascade(r.id, "revoked")
            r.reason = OneOf("revoked", "needs_review")
            return ("ok", "revoked")
        if any(self.records[a].state not in ACTIVE
               for a in self.ancestors(r.id)):
            return ("err", {"55000"})       # §10: "as for an inactive ancestor"
        if r.expected_head is not None and not self.head_matches(r):
            return ("err", {"55000"})       # §10: the head re-checked
        for x in list(self.records.values()):
            if x.state in ACTIVE and self.rivals(r, x):
                x.state = "superseded"
                x.reason = OneOf(x.reason, None, "superseded")
        self.seq += 1
        r.committed_seq = self.seq
        t = self.txs[r.tx]
        r.state = "action_safe" if t.tier == "external_action" else "committed"
        r.reason = OneOf(None, "needs_review")
        return ("ok", r.state)

    def op_outcome(self, op, new_id):
        """§10: the proposal's disposition, no row when unknown or not
        readable by the caller."""
        # §17: the caller's own proposal; a harness names the agent
        agent = op.get("agent") or op["caller"]
        rid = self.proposals.get((agent, op["proposal"]))
        if rid is None:
            return ("ok", [])
        r = self.records[rid]
        if op["caller"] != "harness" and not self.readable(r, op["caller"]):
            return ("ok", [])
        t = self.txs[r.tx]
        return ("ok", [(rid, t.id, r.state, r.reason, t.status)])

    def op_propose(self, op, new_id):
        """§10: begin + stage + commit of one record at the caller's
        configured tier (the driver configures none: memtx.default_tier,
        medium)."""
        # §10: "the checks of §4 come first"
        problems = self.argument_problems(op, op["caller"])
        if problems:
            return ("err", None if None in problems else set(problems))
        proposal = op.get("proposal")
        if proposal is not None and (op["caller"], proposal) in self.proposals:
            o = self.records[self.proposals[op["caller"], proposal]]
            if not self.same_content(o, op, op["caller"]):
                return ("err", {"23505"})
            t = self.txs[o.tx]
            return ("ok", (t.id, o.id, o.state, o.reason))
        if new_id is None:
            return ("ok", "ids")            # the extension refused it
        tx_id, rec_id = new_id
        self.op_begin({"tier": "medium", "agent": op["caller"],
                       "isolation": None}, tx_id)
        st = dict(op, tx=tx_id)
        got = self.op_stage(st, rec_id)
        if got[0] != "ok":
            return got
        rows = self.op_commit({"tx": tx_id, "caller": op["caller"]}, None)[1]
        rid, state, reason = rows[0]
        return ("ok", (tx_id, rid, state, reason))

    def op_expire(self, op, new_id):
        ids = sorted(t.id for t in self.txs.values() if self.lease_out(t))
        for i in ids:
            self.abort_tx(self.txs[i], "expired")
        return ("ok", ids)

    # --- action time (§5)

    def gate_decision(self, t, tool):
        if self.tools.get(tool):
            return (True, None, [])
        blockers = sorted(r.id for r in self.records.values()
                          if r.state == "tentative")
        if blockers:
            return (False, "in_flight_tentative", blockers)
        if t.tier == "external_action" and not any(
                r.state == "action_safe" and self.visible(r, t)
                for r in self.records.values()):
            return (False, "no_action_safe_support", [])
        return (True, None, [])

    def op_gate(self, op, new_id):
        err = self.tx_check(op, allow_committed=True)
        if err:
            return err
        # §16: a probe writes nothing, so it renews no lease
        return ("ok", self.gate_decision(self.txs[op["tx"]], op["tool"]))

    def op_act(self, op, new_id):
        err = self.tx_check(op, allow_committed=True)
        if err:
            return err
        t = self.txs[op["tx"]]
        # §16: an input the agent may not read does not exist (42704);
        # READING §5 "(unknown ids are an error; the gate's reasons come
        # first)": the error comes before the gate runs, and its order
        # against the effect key's is not given
        unreadable = any(not self.readable(self.records[i], t.agent)
                         for i in op["inputs"])
        key = op["effect_key"]
        if key is not None and key in self.effect_keys:
            tool, agent, args, result = self.effect_keys[key]
            if (tool, agent, args) == (op["tool"], t.agent, op["args"]):
                return ("any", None) if unreadable else ("ok", result)
            return ("err", {"23505", "42704"} if unreadable else {"23505"})
        if unreadable:
            return ("err", {"42704"})
        allowed, reason, blockers = self.gate_decision(t, op["tool"])
        self.renew(t, op)
        if not allowed:
            return ("ok", (False, reason, None, blockers))
        reasons = {}
        for i in op["inputs"]:
            x = self.records[i]
            # §16: a revoked or registry-listed transitive ancestor, itself
            # included; READING: the SPEC orders neither this against the §5
            # input reasons nor inputs among themselves, so any of them
            if ({i} | self.ancestors(i)) & ({a for a in self.records
                                             if self.records[a].state == "revoked"}
                                            | self.registry):
                reasons.setdefault("revoked_parent", []).append(i)
            if not self.visible(x, t):
                reasons.setdefault("input_not_visible", []).append(i)
            elif t.tier == "external_action" and x.state != "action_safe":
                reasons.setdefault("input_not_action_safe", []).append(i)
        if reasons:
            # READING §5: blockers name the inputs refused for the reason
            # given (all of them, or the first)
            return ("ok", OneOf(*[(False, k, None, v)
                                  for k, ids in sorted(reasons.items())
                                  for v in (sorted(ids), ids[:1])]))
        if (t.tier == "external_action" and not self.tools.get(op["tool"])
                and not op["inputs"]):
            return ("ok", (False, "inputs_required", None, []))
        # READING §5: the action record is "committed" at every tier
        self.pos += 1
        self.seq += 1
        a = Record(id=new_id, tx=t.id, owner=t.agent,
                   entity="tool:" + op["tool"], attribute=str(new_id),
                   value=None, kind="tool_action", source=None,
                   authority=None, confidence=None, scope="private",
                   readers=frozenset(), writers=frozenset(),
                   valid=(None, None), observed_at=None, state="committed",
                   reason=OneOf(None, "committed"), staged_pos=self.pos,
                   committed_seq=self.seq, tool=op["tool"])
        self.add_record(a, op["inputs"])
        result = (True, None, new_id, [])
        if key is not None:
            self.effect_keys[key] = (op["tool"], t.agent, op["args"], result)
        return ("ok", result)
