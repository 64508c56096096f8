"""An independent model of memtx's contract: SPEC.md §1-§22.

Written from the SPEC text alone, never from the extension's C or SQL: it is
a second reading of the contract, so a disagreement between it and the
extension is either a model error (fixed here, citing the SPEC) or an
extension bug.  The model is a plain state machine over records,
transactions, derivation edges, the revocation registry, sources, tools,
namespaces and their members, writer epochs, effect keys, proposals, the
history of every state change, the rollback log, compensation obligations,
the action log, read sets, the receipts of every namespace and (§19, in
vector_model.py, mixed in) embedding models and embeddings, driven one
call at a time by `Model.apply(op, new_id)`, which returns the predicted
result and moves the state as the extension should.

Ids are not predicted: the driver passes the id the extension returned for
a call that creates something (`begin`, `stage`, `restore`, `propose`, an
allowed `act`), and the model adopts it.  Everything else is predicted:

  ("ok", value)         the call returns value ("id": any new id)
  ("err", codes)        the call fails; codes is a set of SQLSTATEs, or None
                        where the SPEC names no code (any specific one will do)
  OneOf(a, b, ...)      inside a value: any of these (an ambiguity of the SPEC
                        whose readings differ only in what is returned)
  ("any", None)         the SPEC says nothing of the result (the state after
                        the call is still compared, and an internal error is
                        still a failure)

Readings where the SPEC is silent or ambiguous are marked READING, with the
section and the words they read; where the project wrote its decision down
(README, "Choices where SPEC.md is silent") the reading names it.

v3 (§17-§21) is modelled as written.  The rules the extension of this
branch does not implement yet are listed in PENDING_ENGINE_RULES: a model
built with them pending keeps the v2 behaviour for them, and the drivers
draw no call whose outcome depends on the difference.  `Model(...,
pending=())` models every rule (the merger of the v3 work turns them on:
MEMTX_MODEL_RULES=all).

Time is in whole minutes from an origin the driver picks (`Model.now`);
validity ranges are half-open [lo, hi) with None for an unbounded end.
"""

import decimal
import hashlib
import json

from vector_model import VectorModel    # §19, memtx_vector

ACTIVE = ("committed", "action_safe")
VIEW_KINDS = ("summary", "profile", "index_entry", "shared_copy")
SCOPE_RANK = {"private": 0, "shared": 1, "public": 2}
# §3: tier -> isolation level
TIER_LEVEL = {"low": "committed_read", "medium": "verified_read",
              "high": "causally_stable_read",
              "external_action": "action_safe_read"}
TIER_RANK = {"low": 0, "medium": 1, "high": 2, "external_action": 3}
LEVELS = ("raw_read", "committed_read", "verified_read",
          "causally_stable_read", "action_safe_read")
CONFIDENCE_THRESHOLD = 0.6      # §4 1, memtx.confidence_threshold
AUTHORITY_BYPASS = 0.9          # §4 1, memtx.authority_bypass
DEFAULT_AUTHORITY = 0.5         # §1, memtx.default_authority
DEFAULT_TIER = "medium"         # §3, memtx.default_tier
DEFAULT_NS = "default"
# §20: every id a node allocates (transactions, records, actions, log rows)
# carries the node's number in its top bits; a single server is node 0 and
# its ids are unchanged.  READING: SPEC names neither the width of the node
# field nor the hash; README ("More than one server") does: the number sits
# in the bits above the low 48, and memtx.node_of(namespace) is the first 31
# bits of the SHA-256 of the namespace's UTF-8 text (its node: mod N).
ID_NODE_SHIFT = 48


def node_of(namespace):
    """§20: a namespace's stable placement hash (README's definition)."""
    digest = hashlib.sha256(namespace.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def id_node(i):
    """§20: the node number an id carries."""
    return i >> ID_NODE_SHIFT

# The v3 rules (by SPEC section) that the extension of this branch does not
# implement yet.  Each name is a switch: while it is listed, the model keeps
# the v2 behaviour and the drivers avoid the calls where the two differ.
PENDING_ENGINE_RULES = frozenset()


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


def first(pred):
    """The first reading of a prediction (a definite value)."""
    if isinstance(pred, OneOf):
        return first(pred.options[0])
    if isinstance(pred, tuple):
        return tuple(first(p) for p in pred)
    if isinstance(pred, list):
        return [first(p) for p in pred]
    return pred


def overlaps(a, b):
    """Half-open ranges (lo, hi), None = unbounded."""
    alo, ahi = a
    blo, bhi = b
    return ((ahi is None or blo is None or blo < ahi)
            and (bhi is None or alo is None or alo < bhi))


def contains(rng, t):
    lo, hi = rng
    return (lo is None or lo <= t) and (hi is None or t < hi)


def _jsonb_text(v):
    if isinstance(v, dict):
        # jsonb keeps the last of duplicate keys and orders keys by length,
        # then bytes
        keys = sorted(v, key=lambda k: (len(k.encode()), k.encode()))
        return "{" + ", ".join("%s: %s" % (json.dumps(k, ensure_ascii=False),
                                           _jsonb_text(v[k])) for k in keys) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_jsonb_text(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, decimal.Decimal):
        if v == 0:
            return "0"
        if "e" in str(v).lower():
            return format(v, "f")
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def canon(text):
    """§4 3d: a jsonb value's canonical text (value::text)."""
    if text is None:
        return None
    return _jsonb_text(json.loads(text, parse_float=decimal.Decimal,
                                  parse_int=decimal.Decimal))


class Record:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Tx:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Model(VectorModel):
    def __init__(self, sources, tools, now, pending=PENDING_ENGINE_RULES,
                 confidence_threshold=CONFIDENCE_THRESHOLD,
                 authority_bypass=AUTHORITY_BYPASS,
                 default_authority=DEFAULT_AUTHORITY, harness_role="postgres",
                 flow_control="read_set", nodes=1):
        # §20: the store is split by namespace over nodes (a power of two;
        # one server is the store of one node, node 0)
        self.nodes = nodes
        # sources: name -> authority, or name -> (authority, claimants)
        self.sources = {}
        for name, v in dict(sources).items():
            self.sources[name] = v if isinstance(v, tuple) else (v, None)
        self.tools = dict(tools)            # name -> reversible
        self.now = now
        self.pending = frozenset(pending)
        self.threshold = confidence_threshold
        self.bypass = authority_bypass
        self.default_authority = default_authority
        self.flow_control = flow_control    # §4 3c, memtx.flow_control
        # §7: the principal is the calling role; the harness's calls are a
        # superuser's, whose role owns what it stages
        self.harness_role = harness_role
        self.records = {}                   # id -> Record
        self.edges = {}                     # child id -> [parent ids]
        self.children = {}                  # parent id -> [child ids]
        self.registry = set()               # §6 revocation registry
        self.txs = {}                       # id -> Tx
        self.effect_keys = {}               # (ns, key) -> (tool, agent, args, result)
        self.proposals = {}                 # §10: proposal key -> record id
        self.role_tiers = {}                # §3: role -> tier
        self.members = {}                   # §16: namespace -> roles
        self.epochs = {}                    # §12: role -> epoch
        self.fenced = set()                 # §12: roles fenced now
        self.history = {}                   # §13: id -> [(state, reason, at)]
        self.rollback = []                  # §6: (root, record, kind, action, reason, note)
        self.compensations = []             # §6: (root, action id, tool)
        self.action_log = []                # §5: (tx, tool, allowed, reason, action, key, args)
        self.receipts = {}                  # §11: ns -> [(kind, subject, disposition, reason)]
        self.receipt_moves = {}             # §17: ns -> [ids whose state moved, per receipt]
        self.receipt_names = {}             # §17: ns -> [the record each receipt names, or None]
        self.moved = {}                     # §17: ns -> ids moved since its last receipt
        self.pos = 0                        # one global order (§1)
        self.seq = 0                        # commit sequence (§3 snapshot)
        self.vector_init()                  # §19 (vector_model.py)

    def node(self, ns):
        """§20: the node namespace ns lives on, node_of(ns) mod N."""
        return node_of(ns) % self.nodes

    def misplaced(self, op, new_id):
        """§20: the ids a call allocated (new_id as the driver passes it to
        apply) that do not carry the node of their namespace, as pairs (id,
        the node it should carry).  A transaction and a proposal belong to
        the namespace named in the call, a record or an action to its
        transaction's."""
        if new_id is None:
            return []
        if op["op"] in ("begin", "propose"):
            ns = op.get("namespace") or DEFAULT_NS
        else:
            t = self.txs.get(op.get("tx"))
            if t is None:
                return []
            ns = t.ns
        want = self.node(ns)
        ids = new_id if isinstance(new_id, tuple) else (new_id,)
        return [(i, want) for i in ids if i <= 0 or id_node(i) != want]

    def rule(self, name):
        """Whether a v3 rule is modelled (not pending in the engine)."""
        return name not in self.pending

    def clone(self):
        """A copy that shares nothing mutable with self (cheaper than
        copy.deepcopy, for the enumeration)."""
        m = Model.__new__(Model)
        m.__dict__.update(self.__dict__)
        m.records = {k: Record(**r.__dict__) for k, r in self.records.items()}
        m.edges = dict(self.edges)
        m.children = {k: list(v) for k, v in self.children.items()}
        m.registry = set(self.registry)
        m.txs = {}
        for k, t in self.txs.items():
            c = Tx(**t.__dict__)
            c.staged = list(t.staged)
            c.read_set = set(t.read_set)
            m.txs[k] = c
        m.effect_keys = dict(self.effect_keys)
        m.proposals = dict(self.proposals)
        m.role_tiers = dict(self.role_tiers)
        m.members = {k: set(v) for k, v in self.members.items()}
        m.epochs = dict(self.epochs)
        m.fenced = set(self.fenced)
        m.sources = dict(self.sources)
        m.history = {k: list(v) for k, v in self.history.items()}
        m.rollback = list(self.rollback)
        m.compensations = list(self.compensations)
        m.action_log = list(self.action_log)
        m.receipts = {k: list(v) for k, v in self.receipts.items()}
        m.receipt_moves = {k: list(v) for k, v in self.receipt_moves.items()}
        m.receipt_names = {k: list(v) for k, v in self.receipt_names.items()}
        m.moved = {k: set(v) for k, v in self.moved.items()}
        self.vector_clone(m)
        return m

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
        # members of themselves only), or anyone when scope is public; the
        # harness (a superuser here) reads everything
        return (agent == "harness" or r.owner == agent or agent in r.readers
                or r.scope == "public")

    def is_member(self, role, target):
        """Role membership: agents are plain roles, members of themselves
        only; the harness is a superuser, a member of every role."""
        return role == target or role in ("harness", self.harness_role)

    def member(self, role, ns):
        """§16: a role may work in namespace ns (default: everyone)."""
        return (ns == DEFAULT_NS or role == "harness"
                or role in self.members.get(ns, ()))

    def rivals(self, a, b):
        """§4 3d: same namespace and slot, overlapping validity, different
        value; tool_action records take no part in adjudication."""
        return (a.id != b.id and a.kind != "tool_action"
                and b.kind != "tool_action" and a.ns == b.ns
                and a.entity == b.entity and a.attribute == b.attribute
                and overlaps(a.valid, b.valid) and a.value != b.value)

    def tentative_rival(self, x, t):
        # §22: a tentative rival staged by the reading transaction itself is
        # not "in flight" for it
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
        if r.ns != t.ns or not self.readable(r, t.agent):
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

    def old_epoch(self, t):
        """§12: t was opened under an older epoch of its agent."""
        return t.epoch < self.epochs.get(t.agent, 0)

    def authority_of(self, source):
        """§1: from the registry at staging, else memtx.default_authority."""
        entry = self.sources.get(source)
        return self.default_authority if entry is None else entry[0]

    # ------------------------------------------------------------- writing

    def move(self, r, state, reason):
        """A state change, kept in the history (§13) when something moved.
        READING §13 "every state change": a change of the reason alone is
        kept too (README)."""
        if (state, reason) != (r.state, r.reason):
            if state != r.state:
                self.moved.setdefault(r.ns, set()).add(r.id)
            r.state, r.reason = state, reason
            self.history.setdefault(r.id, []).append((state, reason, self.now))

    def receipt(self, ns, kind, subject, disposition, reason, record=None):
        """Appends a receipt; record: the record it names (a commit's or a
        record retraction's subject, an allowed act's action), whose state
        it settles (§17) even when it did not move it."""
        self.receipts.setdefault(ns, []).append(
            (kind, subject, disposition, reason))
        self.receipt_moves.setdefault(ns, []).append(
            frozenset(self.moved.pop(ns, ())))
        self.receipt_names.setdefault(ns, []).append(record)

    def log(self, root, rid, action, reason, note):
        self.rollback.append((root, rid, self.records[rid].kind, action,
                              reason, note))

    # ------------------------------------------------------------- checks

    def tx_check(self, op, allow_committed=False):
        """The common errors of a call on a transaction, or None."""
        t = self.txs[op["tx"]]
        caller = op["caller"]
        foreign = caller != t.agent and caller != "harness"
        ended = t.status != "open" and not (allow_committed and t.status in (
            "committed", "partially_committed"))
        if self.old_epoch(t):
            # §12: a call on a transaction opened under an older epoch fails
            # forever, even for a harness
            return ("err", {"42501"})
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

    # --- registries and configuration (§1, §3, §5, §16): harness only

    def op_register_source(self, op, new_id):
        if op["caller"] != "harness":
            return ("err", {"42501"})
        if not 0 <= op["authority"] <= 1:
            return ("err", None)
        # README: re-registering replaces the whole registration
        self.sources[op["name"]] = (op["authority"],
                                    None if op.get("claimants") is None
                                    else frozenset(op["claimants"]))
        return ("ok", None)

    def op_set_role_tier(self, op, new_id):
        if op["caller"] != "harness":
            return ("err", {"42501"})
        if op["tier"] is None:
            self.role_tiers.pop(op["role"], None)
        else:
            self.role_tiers[op["role"]] = op["tier"]
        return ("ok", None)

    def op_grant_namespace(self, op, new_id):
        if op["caller"] != "harness":
            return ("err", {"42501"})
        self.members.setdefault(op["namespace"], set()).add(op["role"])
        return ("ok", None)

    def op_revoke_namespace(self, op, new_id):
        if op["caller"] != "harness":
            return ("err", {"42501"})
        self.members.get(op["namespace"], set()).discard(op["role"])
        return ("ok", None)

    # --- transactions (§3)

    def op_begin(self, op, new_id):
        caller = op["caller"]
        ns = op.get("namespace") or DEFAULT_NS
        if caller != "harness":
            if op.get("tier") or op.get("isolation") or (
                    op.get("agent") not in (None, caller)):
                return ("err", {"42501"})   # §3: trusted configuration
            agent = caller
            # §16 tier floor: the session user is the superuser here, with
            # no tier of its own
            tier = self.role_tiers.get(agent, DEFAULT_TIER)
        else:
            agent = op["agent"]
            tier = op.get("tier") or self.role_tiers.get(agent, DEFAULT_TIER)
        # §16: only members (or a harness) begin outside default; READING: a
        # harness beginning for an agent vouches for it
        if not self.member(caller, ns):
            return ("err", {"42501"})
        if agent in self.fenced:
            return ("err", {"42501"})       # §12: begin is a write
        level = op.get("isolation") or TIER_LEVEL[tier]
        self.pos += 1
        self.txs[new_id] = Tx(id=new_id, agent=agent, tier=tier, ns=ns,
                              level=level, status="open", snapshot=self.seq,
                              begin_pos=self.pos, staged=[], read_set=set(),
                              short=bool(op.get("short_lease")), expired=False,
                              outcome=None, epoch=self.epochs.get(agent, 0),
                              verifier_calls=0)
        return ("ok", "id")

    def op_stage(self, op, new_id):
        # v2 preamble: each call "checks its arguments first"; READING: the
        # SPEC orders neither the argument checks among themselves nor against
        # the transaction checks, so with several problems any of their codes
        err = self.tx_check(op)
        t = self.txs[op["tx"]]
        problems = [] if err is None else [None if err[1] is None
                                           else next(iter(err[1]))]
        problems += self.argument_problems(op, t.agent, t.ns, op["caller"])
        claim = self.claim_refused(op["source"], op["caller"])
        if problems:
            # READING: the order of a claimants refusal and the argument
            # errors is not given
            if claim:
                problems.append("42501")
            return ("err", None if None in problems else set(problems))
        proposal = op.get("proposal")
        pkey = self.proposal_key(t.ns, t.agent, proposal)
        if proposal is not None and pkey in self.proposals:
            # §10: a retry of the same content by the same agent returns the
            # original id and stages nothing; anything else is 23505.
            # §22: a retry renews the lease.  READING: the order of a
            # claimants refusal (42501) and the content check is not given
            o = self.records[self.proposals[pkey]]
            if not self.same_content(o, op, t.agent):
                return ("err", {"23505", "42501"} if claim else {"23505"})
            if claim:
                return ("any", None)
            self.renew(t, op)
            return ("ok", o.id)
        if claim:
            return ("err", {"42501"})       # §16: claimants
        self.stage_record(t, op, new_id, op["parents"], self.observed(op),
                          op.get("expected_head"), proposal, None,
                          self.principal(op["caller"]))
        self.renew(t, op)
        return ("ok", "id")

    def claim_refused(self, source, caller):
        """§16: a source registered with claimants is staged with only by
        their members (or a harness)."""
        src = self.sources.get(source)
        return (src is not None and src[1] is not None
                and caller != "harness" and caller not in src[1])

    def principal(self, caller):
        """§7: the role that calls the API."""
        return self.harness_role if caller == "harness" else caller

    def stage_record(self, t, op, new_id, parents, observed, head, proposal,
                     restored_from, owner):
        self.pos += 1
        r = Record(id=new_id, tx=t.id, ns=t.ns, owner=owner,
                   entity=op["entity"], attribute=op["attribute"],
                   value=canon(op["value"]), kind=op["kind"],
                   source=op["source"],
                   authority=self.authority_of(op["source"]),
                   confidence=op["confidence"], scope=op["scope"],
                   readers=frozenset(op["readers"] or ()),
                   writers=frozenset(op["writers"] or ()),
                   valid=tuple(op["valid"]) if op["valid"] else (None, None),
                   observed_at=observed, state="tentative", reason=None,
                   staged_pos=self.pos, committed_seq=None, tool=None,
                   expected_head=head, proposal=proposal,
                   restored_from=restored_from, erased=False, salt=False)
        self.history[new_id] = [("tentative", None, self.now)]
        self.add_record(r, parents)
        if proposal is not None:
            self.proposals[self.proposal_key(t.ns, t.agent, proposal)] = r.id
        t.staged.append(r.id)
        return r

    def proposal_key(self, ns, agent, proposal):
        if self.rule("§17 proposal ids per agent"):
            return (ns, agent, proposal)
        return (ns, proposal)

    def argument_problems(self, op, agent, ns, principal=None):
        """The SQLSTATEs of what is wrong with a stage's (or a propose's)
        arguments; None stands for a code the SPEC does not name."""
        problems = []
        for p in op["parents"]:
            r = self.records.get(p)
            # §7: the principal (the calling role) must be able to read
            # every declared parent
            if r is None or not self.readable(r, principal or agent):
                problems.append("42704")    # §16: not readable = not existing
            elif r.ns != ns:
                # §3: no operation spans two namespaces.  READING: a parent
                # of another namespace is refused like an unknown one
                # (42704): through a router (§20) the call runs on its
                # namespace's node, where that record does not exist, and
                # §20 promises the same answers as one server
                problems.append("42704")
        if op["observed_at"] is not None and op["observed_at"] > self.now:
            problems.append("22008")        # §16 sources
        if not 0 <= op["confidence"] <= 1:
            problems.append(None)           # §4: a specific SQLSTATE, unnamed
        if op["valid"] and op["valid"][0] is not None and \
                op["valid"][1] is not None and op["valid"][0] >= op["valid"][1]:
            # READING: an empty validity range contains no instant; README
            # refuses it (code unnamed)
            problems.append(None)
        if op["entity"].startswith("tool:"):
            problems.append(None)           # §4: staging on tool: is an error
        head = op.get("expected_head")
        if head not in (None, 0):
            h = self.records.get(head)
            if not (h is not None and h.kind != "tool_action" and h.ns == ns
                    and h.entity == op["entity"]
                    and h.attribute == op["attribute"]
                    and self.readable(h, agent)):
                problems.append("22023")    # §10: one error for both cases
        return problems

    def observed(self, op):
        """§4: provenance follows content (observed_at inherited)."""
        if op["observed_at"] is not None:
            return op["observed_at"]
        seen = [self.records[p].observed_at for p in op["parents"]
                if self.records[p].observed_at is not None]
        return max(seen) if seen else None

    def same_content(self, r, op, agent):
        """§10: the same agent and what r stores once defaults apply; an
        erased record matches no content."""
        return not r.erased and self.txs[r.tx].agent == agent and (
            r.entity, r.attribute, r.value, r.kind, r.source, r.confidence,
            frozenset(self.edges[r.id]), r.scope, r.readers, r.writers,
            r.valid, r.observed_at, r.expected_head) == (
            op["entity"], op["attribute"], canon(op["value"]), op["kind"],
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
                and x.ns == r.ns and x.entity == r.entity
                and x.attribute == r.attribute and overlaps(x.valid, r.valid)}

    def head_matches(self, r):
        want = set() if r.expected_head == 0 else {r.expected_head}
        return self.head_set(r) == want

    def add_record(self, r, parents):
        self.records[r.id] = r
        self.edges[r.id] = list(dict.fromkeys(parents))
        for p in self.edges[r.id]:
            self.children.setdefault(p, []).append(r.id)

    def op_read(self, op, new_id):
        # README: read works in a committed transaction too (like gate and
        # act), not in an aborted one
        err = self.tx_check(op, allow_committed=True)
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
        # 1 evidence (both inclusive)
        if r.confidence < self.threshold and r.authority < self.bypass:
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
        # 3c: declared parents plus, under flow_control = read_set, the read
        # set
        flow = {p.id for p in parents}
        if self.flow_control == "read_set":
            flow |= t.read_set
        for pid in sorted(flow):
            p = self.records[pid]
            if SCOPE_RANK[p.scope] < SCOPE_RANK[r.scope]:
                return "permission_laundering", []
            if p.scope != "public" and not r.readers <= p.readers:
                return "permission_laundering", []
        # 3d slot adjudication; §4: a record that reaches it with a rival is
        # one metered verifier call; §10: the expected head is its first
        # rule, and a matching head lifts the snapshot-based staleness rule
        rivals = [x for x in self.records.values()
                  if x.state in ACTIVE and self.rivals(r, x)]
        if rivals:
            t.verifier_calls += 1
        if r.expected_head is not None and not self.head_matches(r):
            return "stale_head", []
        head_ok = r.expected_head is not None
        outcomes = set()
        for x in rivals:
            # §22: "(records committed by the same transaction are never
            # stale to it)" qualifies the snapshot rule only; a rival of the
            # same transaction observed later is stale_late_write
            if ((not head_ok and x.tx != t.id and x.committed_seq is not None
                 and x.committed_seq > t.snapshot)
                    or (x.observed_at is not None and r.observed_at is not None
                        and x.observed_at > r.observed_at)):
                outcomes.add("stale_late_write")
            elif r.authority < x.authority:
                outcomes.add("lower_authority")
            elif r.authority == x.authority and r.source != x.source:
                # READING §4 3d: two NULL sources are the same source (README)
                outcomes.add("needs_review")
            elif not (self.is_member(r.owner, x.owner)
                      or any(self.is_member(r.owner, w) for w in x.writers)):
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

    def supersede(self, x):
        # READING §4 3d: "rival -> superseded" names no reason; the rival
        # keeps its own (the reason vocabulary has no code for it)
        self.move(x, "superseded", x.reason)

    def op_commit(self, op, new_id):
        t = self.txs[op["tx"]]
        if self.old_epoch(t):
            return ("err", {"42501"})       # §12: the stored outcome included
        if t.outcome is not None and op["caller"] in (t.agent, "harness"):
            return ("ok", list(t.outcome))  # §4: idempotent
        if t.status == "aborted" and op["caller"] in (t.agent, "harness"):
            # READING §4: commit of a transaction ended by abort or expiry;
            # the SPEC says neither error nor outcome, so the result is not
            # compared (the state still is: nothing may change)
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
                self.move(r, "quarantined", reason)
                self.receipt(t.ns, "commit", rid, "quarantined", reason,
                             record=rid)
                self.repair_actions_of(r)
            else:
                for x in beaten:
                    self.supersede(x)
                self.seq += 1
                r.committed_seq = self.seq
                self.move(r, "action_safe" if t.tier == "external_action"
                          else "committed", None)
                self.receipt(t.ns, "commit", rid, r.state, None, record=rid)
                passed += 1
            r.salt = True
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
        other than by committing is repaired with that record as the root.
        README: the rows carry the record as root_id, with no root row."""
        for d in self.descendants(r.id):
            x = self.records[d]
            if x.kind != "tool_action":
                continue
            if x.state in ACTIVE:
                self.log(r.id, d, self.action_repair(x, r.id), "revoked_parent",
                         None)
                self.move(x, "revoked", "revoked_parent")
            # READING §16 "repaired as in §6": what descends from each action
            # below the record (one revoked earlier included) is then
            # repaired as §6 repairs descendants
            self.repair_descendants(d, r.id, None)

    # --- retraction (§6)

    def cascade(self, root, reason, note):
        r = self.records[root]
        if r.state == "revoked":
            return []
        if r.kind == "tool_action":
            # §16: a tool_action root is repaired like a descendant
            action = self.action_repair(r, root)
        else:
            action = "revoked"
        self.log(root, root, action, reason, note)
        rows = [(root, action, reason)]
        self.move(r, "revoked", reason)
        return rows + self.repair_descendants(root, root, note)

    def repair_descendants(self, below, root, note):
        rows = []
        for d in self.descendants(below):
            x = self.records[d]
            if x.state == "revoked":
                continue
            if x.state in ACTIVE:
                if x.kind == "belief":
                    action = "revoked"
                    self.move(x, "revoked", "revoked_parent")
                elif x.kind in VIEW_KINDS:
                    action = "quarantined"
                    self.move(x, "quarantined", "invalidated")
                    self.registry.add(d)
                else:
                    action = self.action_repair(x, root)
                    self.move(x, "revoked", "revoked_parent")
            elif x.state == "quarantined" and d in self.registry:
                continue                    # stays quarantined, no new row
            else:
                # tentative, superseded, quarantined at commit
                action = "revoked"
                self.move(x, "revoked", "revoked_parent")
            self.log(root, d, action, x.reason, note)
            rows.append((d, action, x.reason))
        return rows

    def action_repair(self, x, root):
        # §5: an unregistered tool is irreversible
        if self.tools.get(x.tool):
            self.compensations.append((root, x.id, x.tool))
            return "compensated"
        return "leaked"

    def abort_tx(self, t, reason):
        # §6: every staged record still tentative is a root (reason aborted,
        # expired or fenced), even one derived from another; then the
        # cascades
        roots = [rid for rid in t.staged
                 if self.records[rid].state == "tentative"]
        rows = []
        for rid in roots:
            r = self.records[rid]
            self.move(r, "revoked", reason)
            self.log(rid, rid, "revoked", reason, None)
            rows.append((rid, "revoked", reason))
        for rid in roots:
            rows.extend(self.repair_descendants(rid, rid, None))
        t.status = "aborted"
        # §11: one retract receipt per aborted transaction
        self.receipt(t.ns, "retract", t.id, "retracted", reason)
        return rows

    def op_abort(self, op, new_id):
        t = self.txs[op["tx"]]
        if (t.status == "aborted" and not self.old_epoch(t)
                and op["caller"] in (t.agent, "harness")):
            return ("ok", [])               # README: nothing to do
        err = self.tx_check(op)
        if err:
            return err
        return ("ok", self.abort_tx(t, "aborted"))

    def op_revoke(self, op, new_id):
        r = self.records[op["record"]]
        caller = op["caller"]
        if caller != "harness" and caller != r.owner:
            # §7: revoke of a record the caller does not own is a harness
            # operation; §16: an unreadable id is "does not exist"
            return ("err", {"42501"} if self.readable(r, caller)
                    else {"42501", "42704"})
        if caller in self.fenced:
            return ("err", {"42501"})       # §12: revoke is a write
        rows = self.cascade(r.id, "revoked", op.get("note", "n"))
        if rows:
            self.receipt(r.ns, "retract", r.id, "retracted", "revoked",
                         record=r.id)
        return ("ok", rows)

    def op_resolve(self, op, new_id):
        """§4 3d: the harness settles a needs_review record, and only such a
        record."""
        r = self.records[op["record"]]
        if op["caller"] != "harness":
            return ("err", {"42501"})       # §7: a harness operation
        t = self.txs[r.tx]
        if op["accept"] and self.old_epoch(t):
            # READING §12 "a call on any transaction opened under an older
            # epoch fails forever": accepting commits into it (README)
            return ("err", {"42501"})
        if r.state != "quarantined" or r.reason != "needs_review":
            return ("err", None)            # READING: the SPEC names no code
        if not op["accept"]:
            # README: rejecting revokes it with reason revoked, note
            # "review rejected"
            self.cascade(r.id, "revoked", "review rejected")
            self.receipt(r.ns, "retract", r.id, "retracted", "revoked",
                         record=r.id)
            return ("ok", "revoked")
        if any(self.records[a].state not in ACTIVE or a in self.registry
               for a in self.ancestors(r.id)):
            return ("err", {"55000"})       # §10: "as for an inactive ancestor"
        if r.expected_head is not None and not self.head_matches(r):
            return ("err", {"55000"})       # §10: the head re-checked
        for x in list(self.records.values()):
            if x.state in ACTIVE and self.rivals(r, x):
                self.supersede(x)
        self.seq += 1
        r.committed_seq = self.seq
        # §1 lifecycle: quarantined -> tentative (revalidation) -> committed
        self.move(r, "tentative", OneOf("needs_review", None))
        self.move(r, "action_safe" if t.tier == "external_action"
                  else "committed", None)
        self.receipt(r.ns, "commit", r.id, r.state, None, record=r.id)
        return ("ok", r.state)

    def op_outcome(self, op, new_id):
        """§10: the proposal's disposition, no row when unknown or not
        readable by the caller."""
        ns = op.get("namespace") or DEFAULT_NS
        caller = op["caller"]
        if self.rule("§17 read tenancy") and not self.member(caller, ns):
            return ("err", {"42501"})
        if self.rule("§17 outcome agent"):
            agent = op.get("agent") or caller
            rid = self.proposals.get(self.proposal_key(ns, agent,
                                                       op["proposal"]))
        else:
            rid = self.proposals.get(self.proposal_key(ns, caller,
                                                       op["proposal"]))
        if rid is None:
            return ("ok", [])
        r = self.records[rid]
        if not self.readable(r, caller):
            return ("ok", [])
        t = self.txs[r.tx]
        return ("ok", [(rid, t.id, r.state, r.reason, t.status)])

    def op_propose(self, op, new_id):
        """§10: begin + stage + commit of one record at the caller's
        configured tier."""
        caller = op["caller"]
        ns = op.get("namespace") or DEFAULT_NS
        # §10: "the checks of §4 come first"; README: argument checks come
        # before the proposal content check
        # READING: the order of the argument errors and the 42501 of a
        # namespace the caller is not a member of (or of a fenced caller) is
        # not given
        problems = self.argument_problems(op, caller, ns)
        if (not self.member(caller, ns) or caller in self.fenced
                or self.claim_refused(op["source"], caller)):
            problems.append("42501")
        if problems:
            return ("err", None if None in problems else set(problems))
        proposal = op.get("proposal")
        pkey = self.proposal_key(ns, caller, proposal)
        if proposal is not None and pkey in self.proposals:
            o = self.records[self.proposals[pkey]]
            if not self.same_content(o, op, caller):
                return ("err", {"23505"})
            t = self.txs[o.tx]
            return ("ok", (t.id, o.id, o.state, o.reason))
        if self.claim_refused(op["source"], caller):
            return ("err", {"42501"})
        if new_id is None:
            return ("ok", "ids")            # the extension refused it
        tx_id, rec_id = new_id
        self.op_begin({"caller": caller, "namespace": ns}, tx_id)
        t = self.txs[tx_id]
        r = self.stage_record(t, op, rec_id, op["parents"], self.observed(op),
                              op.get("expected_head"), proposal, None, caller)
        if self.rule("§21 propose history"):
            # §21: nobody could observe it tentative: no tentative row
            self.history[rec_id] = []
        rows = self.op_commit({"tx": tx_id, "caller": caller}, None)[1]
        rid, state, reason = rows[0]
        return ("ok", (tx_id, r.id, state, reason))

    def op_expire(self, op, new_id):
        ids = sorted(t.id for t in self.txs.values() if self.lease_out(t))
        for i in ids:
            self.abort_tx(self.txs[i], "expired")
        return ("ok", ids)

    # --- action time (§5)

    def gate_decision(self, t, tool):
        if self.tools.get(tool):
            return (True, None, [])
        # §5 (1), §22: every tentative record of the namespace blocks, the
        # caller's own staging included
        blockers = sorted(r.id for r in self.records.values()
                          if r.state == "tentative" and r.ns == t.ns)
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
        args = canon(op["args"])
        # §22: argument errors come first: an input that does not exist for
        # the agent (unreadable, another namespace) is 42704 before any gate
        # reason.  README: the harness acting for an agent may name what
        # either reads.  READING: its order against the effect key's 23505 is
        # not given
        # READING: an input of another namespace is unknown too (42704), as
        # a parent of another namespace is (argument_problems): §3, §20
        unknown = any(
            i not in self.records
            or not (self.readable(self.records[i], t.agent)
                    or self.readable(self.records[i], op["caller"]))
            or self.records[i].ns != t.ns
            for i in op["inputs"])
        key = op["effect_key"]
        repeated = self.rule("§17 act repeated")
        if key is not None and (t.ns, key) in self.effect_keys:
            tool, agent, kargs, result = self.effect_keys[t.ns, key]
            # READING §13 × §16: erasing the action that used the key up
            # nulls its args, so no call can be matched to it as a repeat:
            # every later use of the key is 23505 (README, act)
            if ((tool, agent, kargs) == (op["tool"], t.agent, args)
                    and not self.records[result[2]].erased):
                if unknown:
                    return ("any", None)
                return ("ok", result + (True,) if repeated else result)
            # §16: another tool, agent or args under a used key
            return ("err", {"23505", "42704"} if unknown else {"23505"})
        if unknown:
            return ("err", {"42704"})
        allowed, reason, blockers = self.gate_decision(t, op["tool"])
        self.renew(t, op)
        decision = None
        if not allowed:
            decision = (False, reason, None, blockers)
        else:
            reasons = {}
            dead = ({a for a, x in self.records.items() if x.state == "revoked"}
                    | self.registry)
            for i in op["inputs"]:
                x = self.records[i]
                # §16: a revoked or registry-listed transitive ancestor,
                # itself included; README: then visibility, then
                # action-safety, inputs in the order given
                if (({i} | self.ancestors(i)) & dead
                      and self.readable(x, t.agent)):
                    # READING (README): an input the caller (a harness) may
                    # read but the agent may not is input_not_visible, so
                    # the reason tells the agent nothing about it
                    reasons.setdefault("revoked_parent", []).append(i)
                elif not self.visible(x, t):
                    reasons.setdefault("input_not_visible", []).append(i)
                elif t.tier == "external_action" and x.state != "action_safe":
                    reasons.setdefault("input_not_action_safe", []).append(i)
            for k in ("revoked_parent", "input_not_visible",
                      "input_not_action_safe"):
                if k in reasons:
                    # READING §5: blockers name the inputs refused for the
                    # reason given
                    decision = (False, k, None, sorted(set(reasons[k])))
                    break
            if decision is None and (t.tier == "external_action"
                                     and not self.tools.get(op["tool"])
                                     and not op["inputs"]):
                decision = (False, "inputs_required", None, [])
        if decision is not None:
            self.action_log.append((t.id, op["tool"], False, decision[1], None,
                                    key, args))
            self.receipt(t.ns, "act", t.id, "blocked", decision[1])
            return ("ok", decision + (False,) if repeated else decision)
        # READING §5: the action record is "committed" at every tier, private
        # to the agent, its value the call's args (README)
        self.pos += 1
        self.seq += 1
        a = Record(id=new_id, tx=t.id, ns=t.ns,
                   owner=self.principal(op["caller"]),
                   entity="tool:" + op["tool"], attribute=str(new_id),
                   value=args, kind="tool_action", source=None,
                   authority=None, confidence=None, scope="private",
                   readers=frozenset(), writers=frozenset(),
                   valid=(None, None), observed_at=None, state="committed",
                   reason=None, staged_pos=self.pos,
                   committed_seq=self.seq, tool=op["tool"],
                   expected_head=None, proposal=None, restored_from=None,
                   erased=False, salt=False)
        self.history[new_id] = [("committed", None, self.now)]
        self.add_record(a, op["inputs"])
        result = (True, None, new_id, [])
        self.action_log.append((t.id, op["tool"], True, None, new_id, key,
                                args))
        self.receipt(t.ns, "act", t.id, "allowed", None, record=new_id)
        if key is not None:
            self.effect_keys[t.ns, key] = (op["tool"], t.agent, args, result)
        return ("ok", result + (False,) if repeated else result)

    # --- fencing (§12)

    def op_fence(self, op, new_id):
        if op["caller"] != "harness":
            return ("err", {"42501"})
        role = op["role"]
        epoch = self.epochs.get(role, 0) + 1
        # READING (README): a role that has no transaction anywhere gets no
        # receipt; namespaces in the order of their first transaction's id
        spaces = []
        for t in sorted(self.txs.values(), key=lambda t: t.id):
            if t.agent == role and t.ns not in spaces:
                spaces.append(t.ns)
        for t in sorted(self.txs.values(), key=lambda t: t.id):
            if t.agent == role and t.status == "open":
                self.abort_tx(t, "fenced")
        for ns in spaces:
            self.receipt(ns, "fence", epoch, "fenced", None)
        self.epochs[role] = epoch
        self.fenced.add(role)
        return ("ok", epoch)

    def op_unfence(self, op, new_id):
        if op["caller"] != "harness":
            return ("err", {"42501"})
        self.fenced.discard(op["role"])
        return ("ok", None)

    # --- history, as-of reads, restore, erasure (§13)

    def state_at(self, rid, at):
        """§13: the state and reason of the last history row at or before
        `at`; None when it did not exist yet."""
        last = None
        for state, reason, when in self.history.get(rid, ()):
            if when <= at:
                last = (state, reason)
        return last

    def op_read_as_of(self, op, new_id):
        ns = op.get("namespace") or DEFAULT_NS
        caller = op["caller"]
        if self.rule("§17 read tenancy") and not self.member(caller, ns):
            return ("err", {"42501"})
        rows = []
        for rid in sorted(self.records):
            r = self.records[rid]
            if r.ns != ns or not self.readable(r, caller):
                continue
            if op["entity"] is not None and r.entity != op["entity"]:
                continue
            if op["attribute"] is not None and r.attribute != op["attribute"]:
                continue
            if op.get("valid_at") is not None and not contains(r.valid,
                                                                op["valid_at"]):
                continue
            then = self.state_at(rid, op["at"])
            if then is None or first(then[0]) not in ACTIVE:
                continue
            rows.append((rid, then[0], then[1]))
        return ("ok", rows)

    def op_restore(self, op, new_id):
        err = self.tx_check(op)
        if err:
            return err
        t = self.txs[op["tx"]]
        found = []
        for r in self.records.values():
            if (r.ns == t.ns and r.entity == op["entity"]
                    and r.attribute == op["attribute"]
                    and self.readable(r, t.agent) and not r.erased
                    and (op.get("valid_at") is None
                         or contains(r.valid, op["valid_at"]))):
                then = self.state_at(r.id, op["at"])
                if then is not None and first(then[0]) in ACTIVE:
                    found.append(r)
        if len(found) != 1:
            return ("err", {"22023"})
        src = found[0]
        # READING (README): the head count takes every active overlapping
        # record, readable or not, as commit's head set does
        heads = [x.id for x in self.records.values()
                 if x.state in ACTIVE and x.kind != "tool_action"
                 and x.ns == t.ns and x.entity == src.entity
                 and x.attribute == src.attribute
                 and overlaps(x.valid, src.valid)]
        if len(heads) > 1:
            return ("err", {"22023"})
        head = heads[0] if heads else 0
        if head and not self.readable(self.records[head], t.agent):
            # §10 via §13: the copy is staged like any record, and a head the
            # agent may not read is stage's 22023
            return ("err", {"22023"})
        if self.claim_refused(src.source, op["caller"]):
            return ("err", {"42501"})
        content = {"entity": src.entity, "attribute": src.attribute,
                   "value": src.value, "kind": src.kind, "source": src.source,
                   "confidence": src.confidence, "scope": src.scope,
                   "readers": sorted(src.readers),
                   "writers": sorted(src.writers),
                   "valid": None if src.valid == (None, None) else src.valid}
        self.stage_record(t, content, new_id, [], None, head, None, src.id,
                          self.principal(op["caller"]))
        self.renew(t, op)
        return ("ok", "id")

    def op_erase(self, op, new_id):
        r = self.records[op["record"]]
        caller = op["caller"]
        if caller != "harness":
            return ("err", {"42501"} if self.readable(r, caller)
                    else {"42501", "42704"})
        if r.erased:
            return ("ok", [])               # §13: writes nothing
        rows = []
        if r.state != "revoked":
            rows = self.cascade(r.id, "erased", op.get("note"))
        copies = [r]
        if self.rule("§17 erase restored copies"):
            copies += [x for x in self.records.values()
                       if self.restored_chain_reaches(x, r.id)
                       and not x.erased]
        for x in copies:
            if x is not r and x.state != "revoked":
                rows += self.cascade(x.id, "erased", op.get("note"))
            x.erased = True
            x.value = "null"
            x.salt = False
            self.drop_embeddings(x.id)      # §19: and its embeddings
            if x.kind == "tool_action":
                # §13: the action log's and obligations' copies of the args
                self.action_log = [
                    e[:6] + ("null",) if e[4] == x.id else e
                    for e in self.action_log]
            self.receipt(x.ns, "retract", x.id, "retracted", "erased",
                         record=x.id)
        return ("ok", rows)

    def restored_chain_reaches(self, x, rid):
        seen = set()
        while x.restored_from is not None and x.id not in seen:
            seen.add(x.id)
            if x.restored_from == rid:
                return True
            x = self.records[x.restored_from]
        return False

    # --- retrieval and reads without a transaction (§14, §18)

    def op_recall(self, op, new_id):
        if not 1 <= op["k"] <= 1000:
            # §14: k outside 1..1000; READING: before or after the
            # transaction's own checks
            err = self.tx_check(op, allow_committed=True)
            return ("err", {"22003"} | (err[1] or set() if err else set()))
        err = self.tx_check(op, allow_committed=True)
        if err:
            return err
        t = self.txs[op["tx"]]
        words = self.query_words(op["query"])
        hits = []
        if words:
            for rid in sorted(self.records):
                r = self.records[rid]
                if op.get("entity_prefix") is not None and not \
                        r.entity.startswith(op["entity_prefix"]):
                    continue
                if not self.document_matches(r, words, op["query"]):
                    continue
                if op.get("valid_at") is not None and not contains(
                        r.valid, op["valid_at"]):
                    continue
                if self.visible(r, t):
                    hits.append(rid)
        # equal ranks (see document_matches): rank desc, then id
        hits = hits[:op["k"]]
        t.read_set.update(hits)
        if hits:
            self.renew(t, op)
        return ("ok", hits)

    @staticmethod
    def query_words(query):
        # the driver's queries are plain lowercase words, "or" between two,
        # or only stop words ("the", "a"), or empty: websearch_to_tsquery
        # keeps the words that are not stop words
        return [w for w in query.split() if w not in ("the", "a", "or", "of")]

    @staticmethod
    def document_matches(r, words, query):
        """§14: to_tsvector('english', entity || ' ' || attribute || ' ' ||
        value::text) @@ websearch_to_tsquery('english', query), for the
        driver's words (English words that stem to themselves and appear in
        no entity or attribute): a value string holding the word.  Every
        match has the word once, at the same position, so every rank is
        equal."""
        if r.value is None or not r.value.startswith('"'):
            return False
        tokens = json.loads(r.value).split()
        if " or " in " %s " % query:
            return any(w in tokens for w in words)
        return all(w in tokens for w in words)

    def op_lookup(self, op, new_id):
        ns = op.get("namespace") or DEFAULT_NS
        caller = op["caller"]
        if self.rule("§17 read tenancy") and not self.member(caller, ns):
            return ("err", {"42501"})
        rows = [rid for rid in sorted(self.records)
                if self.records[rid].ns == ns
                and self.records[rid].entity == op["entity"]
                and (op["attribute"] is None
                     or self.records[rid].attribute == op["attribute"])
                and self.records[rid].state in ACTIVE
                and self.readable(self.records[rid], caller)
                and (op.get("valid_at") is None
                     or contains(self.records[rid].valid, op["valid_at"]))]
        return ("ok", rows)

    def op_search(self, op, new_id):
        """memtx.search (README: SPEC is silent; recall without a
        transaction, as lookup is read without one): §14 recall's matching
        and ranking over lookup's records — the active records of the
        namespace the caller may read — with no transaction and no write;
        k checked first, then tenancy (§17)."""
        if not 1 <= op["k"] <= 1000:
            return ("err", {"22003"})
        ns = op.get("namespace") or DEFAULT_NS
        caller = op["caller"]
        if self.rule("§17 read tenancy") and not self.member(caller, ns):
            return ("err", {"42501"})
        words = self.query_words(op["query"])
        hits = []
        for rid in sorted(self.records) if words else ():
            r = self.records[rid]
            if (r.ns == ns and r.state in ACTIVE and self.readable(r, caller)
                    and (op.get("entity_prefix") is None
                         or r.entity.startswith(op["entity_prefix"]))
                    and self.document_matches(r, words, op["query"])
                    and (op.get("valid_at") is None
                         or contains(r.valid, op["valid_at"]))):
                hits.append(rid)
        # equal ranks (see document_matches): rank desc, then id
        return ("ok", hits[:op["k"]])

    # --- lineage (§9, §17)

    def op_lineage(self, op, new_id):
        """§9: the DAG walk from a record, each record once at its shortest
        depth, by depth then id; §17: restored_from walked too, with how
        each record was reached."""
        root, down = op["record"], op["direction"] == "down"
        via_rule = self.rule("§17 lineage via")
        depth, via, frontier = {root: 0}, {root: None}, [root]
        while frontier:
            nxt = []
            for x in frontier:
                steps = [(c, "derived_from") for c in (
                    self.children.get(x, ()) if down else self.edges.get(x, ()))]
                if via_rule:
                    if down:
                        steps += [(c.id, "restored_from") for c in
                                  self.records.values()
                                  if c.restored_from == x]
                    elif self.records[x].restored_from is not None:
                        steps.append((self.records[x].restored_from,
                                      "restored_from"))
                for y, how in steps:
                    if y not in depth:
                        depth[y] = depth[x] + 1
                        via[y] = how
                        nxt.append(y)
                    elif depth[y] == depth[x] + 1 and how == "derived_from":
                        via[y] = how        # derived_from when both
            frontier = nxt
        rows = sorted(depth, key=lambda y: (depth[y], y))
        if via_rule:
            return ("ok", [(y, depth[y], via[y]) for y in rows])
        return ("ok", [(y, depth[y]) for y in rows])

    # --- receipts (§11)

    def op_verify(self, op, new_id):
        """verify_receipts(namespace): harness; the chain holds."""
        if op["caller"] != "harness":
            return ("err", {"42501"})
        ns = op["namespace"]
        n = len(self.receipts.get(ns, ()))
        if not n:
            return ("ok", [])
        return ("ok", [(ns, n, None)])

    def tamper_target(self, op):
        """§11 (§17): the lowest seq verify_receipts must report after a
        change behind the API, or None when it reports none.  A change that
        reaches nothing (a seq past the chain's end, a record of another
        namespace: a shrunk trace keeps such calls) is reported by nothing."""
        ns, kind, index = op["namespace"], op["kind"], op["index"]
        chain = self.receipts.get(ns, [])
        moves = self.receipt_moves.get(ns, [])
        names = self.receipt_names.get(ns, [])
        if kind in ("hash", "body", "column", "prev_hash"):
            if index >= len(chain):
                return None
            rid = names[index]
            if (kind == "column" and chain[index][0] == "retract"
                    and chain[index][3] == "erased"):
                # the reason column changed: the receipt no longer records
                # an erasure, so the erased record's commit receipt loses its
                # digest's excuse (§17), reported there, lower
                return self.first_commit(ns, rid) or index + 1
            return index + 1
        if kind == "delete_last":
            if not chain:
                return None
            # the missing receipt, or lower: §17 receipts anchor states, so
            # a record whose state that receipt's call moved now differs from
            # what the rest of the chain gives it, reported at the receipt
            # that last settled it (READING: which receipts settle a record
            # is the engine's bookkeeping of bodies; the model offers every
            # earlier receipt that moved or named that record)
            lower = set()
            for rid in moves[-1] | {names[-1]} - {None}:
                earlier = [i + 1 for i in range(len(chain) - 1)
                           if rid in moves[i] or names[i] == rid]
                if earlier:
                    lower.add(earlier[-1])
            if chain[-1][0] == "retract" and chain[-1][3] == "erased":
                # an erasure without its receipt: the erased record's commit
                # receipt loses its digest's excuse (§17)
                first = self.first_commit(ns, names[-1])
                if first:
                    lower.add(first)
            if not lower:
                return len(chain)
            return OneOf(len(chain), *sorted(lower))
        r = self.records.get(op["record"])
        if r is None or r.ns != ns:
            return None
        rid = r.id
        first = self.first_commit(ns, rid)
        if kind == "value":
            # a value digest no longer matching its record; an erased
            # record's is excused only while its value is null (§17), so a
            # changed one is reported there too
            if r.erased and not first:
                # READING: no digest to report; "not erased as erasure
                # requires" at a receipt that names it or the seq after the
                # last
                return OneOf(*[i + 1 for i in range(len(chain))
                               if names[i] == rid], len(chain) + 1)
            return first
        if kind == "state":
            # §17 receipts anchor states: the receipt that last settled it
            # (its commit, act or retraction, or a later one whose call moved
            # it: a supersession or repair its body lists).  READING: which
            # receipts list a record is the engine's bookkeeping of bodies,
            # so the model offers the last that moved or named it and the
            # last that named it
            own = [i + 1 for i in range(len(chain)) if names[i] == rid]
            settled = own + [i + 1 for i in range(len(chain))
                             if rid in moves[i]]
            if r.erased and first:
                # an erased record made active again is no longer erased as
                # §17 requires, so its commit receipt's digest no longer has
                # an excuse: reported there, the lowest
                return first
            if not settled:
                # README (verify_receipts): a record no receipt names (a
                # tentative one, flipped) at the seq after the chain's last
                return len(chain) + 1
            later = max(settled)
            if not own or later == own[-1]:
                return later
            return OneOf(later, own[-1])
        if kind == "erased_at":
            # READING: §17 names no seq for a fake erasure; the README
            # (verify_receipts) reports it at a receipt of the chain, or, for
            # a record marked erased with no erasure receipt, as a missing
            # receipt: the seq after the last
            return OneOf(*range(1, len(chain) + 2))
        raise ValueError(kind)

    def first_commit(self, ns, rid):
        """The seq of the first commit receipt of record rid in ns, or None."""
        names = self.receipt_names.get(ns, [])
        for i, rc in enumerate(self.receipts.get(ns, [])):
            if rc[0] == "commit" and names[i] == rid:
                return i + 1
        return None

    def op_tamper(self, op, new_id):
        """A change behind the API in a rolled-back SQL transaction, then
        verify_receipts of its namespace: (checked, first_bad_seq).  The
        store is unchanged afterwards."""
        target = self.tamper_target(op)
        return ("ok", target)
