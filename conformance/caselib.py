"""Conformance case format: loading and validation.

A case is one JSON object (one file).  See README.md for the format.  The
loader refuses anything the runner could only guess at: unknown families,
verbs, keys or labels, a label used before the event that defines it, and a
ground truth that contradicts itself (one value expected both committed and
aborted).
"""

import json
import os
import re

FAMILIES = (
    "tool_result_pollution",
    "stale_late_write",
    "dirty_tentative_read",
    "semantic_conflict",
    "permission_laundering",
    "cascading_rollback",
    "source_scope",
    "temporal_scope",
)

# Which rule closes each open-problem family, and how the runner turns it off.
ABLATIONS = {
    "source_scope": "flow_control=declared",
    "temporal_scope": "no observed_at",
}

CLASSES = ("trap", "control")
TIERS = ("low", "medium", "high", "external_action")
ISOLATIONS = ("raw_read", "committed_read", "verified_read",
              "causally_stable_read", "action_safe_read")
KINDS = ("belief", "summary", "profile", "index_entry", "shared_copy", "tool_action")
SCOPES = ("private", "shared", "public")
STATES = ("raw", "tentative", "validated", "committed", "action_safe",
          "quarantined", "superseded", "revoked")
REASONS = (
    "low_evidence", "outside_validity", "revoked_parent", "uncommitted_parent",
    "inactive_parent", "permission_laundering", "stale_late_write",
    "lower_authority", "write_not_permitted", "needs_review",
    "unstable_dependency", "invalidated", "in_flight_tentative",
    "no_action_safe_support", "input_not_visible", "input_not_action_safe",
    "inputs_required", "aborted", "revoked", "expired", "fenced",
    "stale_head", "erased",
)
REPAIRS = ("revoked", "quarantined", "compensated", "leaked")

HARNESS = "harness"          # the runner's own (superuser) identity in events
NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
CASE_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,79}$")
SETTING_RE = re.compile(r"^memtx\.[a-z_]+$")

STAGE_ARGS = ("entity", "attribute", "value", "kind", "source", "confidence",
              "derived_from", "scope", "readers", "writers", "valid", "observed_at",
              "expected_head", "proposal")

# verb -> (allowed named arguments, required ones, does it run in a transaction)
VERBS = {
    "begin": (("tier", "isolation", "namespace"), (), False),
    "stage": (STAGE_ARGS, ("entity", "attribute", "value"), True),
    "read": (("entity", "attribute"), (), True),
    "commit": ((), (), True),
    "abort": ((), (), True),
    "gate": (("tool",), ("tool",), True),
    "act": (("tool", "args", "derived_from", "effect_key"), ("tool",), True),
    "revoke": (("record", "note"), ("record",), False),
    "resolve": (("record", "accept"), ("record", "accept"), False),
}
EVENT_KEYS = {"do", "agent", "label", "tx", "now", "expect_error", "comment"}
SEED_KEYS = set(STAGE_ARGS) | {"label", "agent", "tier", "now", "comment"}


class CaseError(ValueError):
    """A case file that the loader refuses."""


def _ref(value):
    """The label named by a "$label" reference, or None."""
    if isinstance(value, str) and value.startswith("$"):
        return value[1:]
    return None


def _refs(value):
    """Every label referenced anywhere inside an argument value."""
    if isinstance(value, str):
        r = _ref(value)
        return [r] if r else []
    if isinstance(value, list):
        out = []
        for v in value:
            out.extend(_refs(v))
        return out
    return []


def canon(value):
    """Canonical text of a JSON value as Python sees it, for messages only."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _slot_key(item, where):
    for k in ("entity", "attribute", "value"):
        if k not in item:
            raise CaseError("%s: missing %r" % (where, k))
    return (item.get("namespace"), item["entity"], item["attribute"], canon(item["value"]))


def validate(case):
    """Raise CaseError unless case is a well-formed case; fill in defaults."""
    def need(cond, msg):
        if not cond:
            raise CaseError("%s: %s" % (case.get("name", "?"), msg))

    need(isinstance(case, dict), "a case is a JSON object")
    allowed = {"name", "family", "domain", "description", "class", "namespace",
               "clock", "settings", "agents", "teams", "store", "events", "expect"}
    extra = set(case) - allowed
    need(not extra, "unknown keys %s" % sorted(extra))
    need(isinstance(case.get("name"), str) and CASE_NAME_RE.match(case["name"]),
         "name must be lowercase letters, digits, _ or -")
    need(case.get("family") in FAMILIES, "unknown family %r" % case.get("family"))
    need(isinstance(case.get("domain"), str) and case["domain"], "domain required")
    need(isinstance(case.get("description"), str) and case["description"], "description required")
    case.setdefault("class", "trap")
    need(case["class"] in CLASSES, "class must be trap or control")
    case.setdefault("namespace", "default")
    case.setdefault("settings", {})
    for k, v in case["settings"].items():
        need(SETTING_RE.match(k), "setting %r is not a memtx.* setting" % k)
        need(isinstance(v, (str, int, float)), "setting %r must be a scalar" % k)

    # principals
    teams = case.setdefault("teams", {})
    agents = case.get("agents")
    need(isinstance(agents, list) and agents, "agents: a non-empty list")
    names = set()
    for a in agents:
        need(isinstance(a, dict) and NAME_RE.match(str(a.get("name", ""))),
             "agent needs a name matching %s" % NAME_RE.pattern)
        need(a["name"] not in names and a["name"] != HARNESS, "duplicate or reserved agent %r" % a["name"])
        need(set(a) <= {"name", "role", "tier"}, "agent %s: unknown keys" % a["name"])
        need(isinstance(a.get("role"), str) and a["role"], "agent %s: role (what it does) required" % a["name"])
        need(a.get("tier") in (None,) + TIERS, "agent %s: unknown tier" % a["name"])
        names.add(a["name"])
    for t, members in teams.items():
        need(NAME_RE.match(t) and t not in names and t != HARNESS, "bad team name %r" % t)
        need(isinstance(members, list) and all(m in names for m in members),
             "team %s: members must be agents" % t)
    principals = names | set(teams)

    def check_principals(lst, where):
        need(lst is None or (isinstance(lst, list) and all(p in principals for p in lst)),
             "%s: readers/writers must name agents or teams" % where)

    labels = {}   # label -> verb that defines it

    def check_stage_args(args, where):
        need(isinstance(args.get("entity"), str) and isinstance(args.get("attribute"), str),
             "%s: entity and attribute are strings" % where)
        need("value" in args, "%s: value required" % where)
        need(args.get("kind", "belief") in KINDS, "%s: unknown kind" % where)
        need(args.get("scope", "private") in SCOPES, "%s: unknown scope" % where)
        check_principals(args.get("readers"), where)
        check_principals(args.get("writers"), where)
        v = args.get("valid")
        need(v is None or (isinstance(v, list) and len(v) == 2), "%s: valid is [lower, upper]" % where)
        c = args.get("confidence", 1.0)
        need(isinstance(c, (int, float)), "%s: confidence is a number" % where)
        h = args.get("expected_head")
        need(h is None or h == 0 or _ref(h), "%s: expected_head is 0 or a $label" % where)
        p = args.get("proposal")
        need(p is None or (isinstance(p, str) and p), "%s: proposal is a non-empty string" % where)

    def check_refs(value, where, kinds):
        for r in _refs(value):
            need(r in labels, "%s: dangling label $%s" % (where, r))
            need(labels[r] in kinds, "%s: $%s is a %s result, expected %s" % (where, r, labels[r], "/".join(kinds)))

    # initial store
    store = case.setdefault("store", {})
    need(set(store) <= {"sources", "tools", "seed"}, "store: unknown keys")
    for s in store.setdefault("sources", []):
        need(isinstance(s.get("name"), str) and isinstance(s.get("authority"), (int, float))
             and 0 <= s["authority"] <= 1, "source needs name and authority in 0..1")
    for t in store.setdefault("tools", []):
        need(isinstance(t.get("name"), str) and isinstance(t.get("reversible"), bool),
             "tool needs name and reversible")
        need(set(t) <= {"name", "reversible", "compensator"}, "tool %s: unknown keys" % t.get("name"))
    for i, s in enumerate(store.setdefault("seed", [])):
        where = "seed[%d]" % i
        need(set(s) <= SEED_KEYS, "%s: unknown keys %s" % (where, sorted(set(s) - SEED_KEYS)))
        need(s.get("agent") in names, "%s: agent must be one of the case's agents" % where)
        need(s.get("tier") in (None,) + TIERS, "%s: unknown tier" % where)
        check_stage_args(s, where)
        check_refs(s.get("derived_from", []), where, ("seed", "stage"))
        check_refs(s.get("expected_head"), where, ("seed", "stage"))
        if "label" in s:
            need(NAME_RE.match(s["label"]) and s["label"] not in labels, "%s: bad or duplicate label" % where)
            labels[s["label"]] = "seed"

    # schedule
    events = case.get("events")
    need(isinstance(events, list), "events: a list")
    open_tx = {}     # agent -> label of its latest begin
    for i, e in enumerate(events):
        where = "event[%d]" % i
        need(isinstance(e, dict), "%s: an object" % where)
        verb = e.get("do")
        need(verb in VERBS, "%s: unknown verb %r" % (where, verb))
        allowed_args, required, in_tx = VERBS[verb]
        args = {k: v for k, v in e.items() if k not in EVENT_KEYS}
        unknown = set(args) - set(allowed_args)
        need(not unknown, "%s: %s takes no %s" % (where, verb, sorted(unknown)))
        for r in required:
            need(r in args, "%s: %s needs %r" % (where, verb, r))
        agent = e.setdefault("agent", HARNESS if verb in ("revoke", "resolve") else None)
        need(agent in names or agent == HARNESS, "%s: unknown agent %r" % (where, agent))
        need(not (verb == "begin" and agent == HARNESS), "%s: begin names an agent" % where)
        need(verb != "resolve" or agent == HARNESS, "%s: resolve is a harness operation" % where)
        if verb == "begin":
            need(args.get("tier") in (None,) + TIERS, "%s: unknown tier" % where)
            need(args.get("isolation") in (None,) + ISOLATIONS, "%s: unknown isolation" % where)
        if in_tx:
            if "tx" not in e:
                need(agent in open_tx, "%s: %s has no transaction to use" % (where, agent))
                e["tx"] = "$" + open_tx[agent]
            check_refs(e["tx"], where, ("begin",))
        else:
            need("tx" not in e, "%s: %s takes no tx" % (where, verb))
        if verb == "stage":
            check_stage_args(args, where)
            check_refs(args.get("derived_from", []), where, ("seed", "stage"))
            check_refs(args.get("expected_head"), where, ("seed", "stage"))
        if verb == "act":
            check_refs(args.get("derived_from", []), where, ("seed", "stage"))
            need(isinstance(args.get("args", {}), dict), "%s: act args is an object" % where)
        if verb in ("revoke", "resolve"):
            check_refs(args["record"], where, ("seed", "stage", "act"))
            need(_ref(args["record"]), "%s: record is a $label" % where)
        ee = e.get("expect_error")
        need(ee is None or (isinstance(ee, str) and re.match(r"^[0-9A-Z]{5}$", ee)),
             "%s: expect_error is a SQLSTATE" % where)
        if "label" in e:
            need(NAME_RE.match(e["label"]) and e["label"] not in labels, "%s: bad or duplicate label" % where)
            labels[e["label"]] = verb
            if verb == "begin":
                open_tx[agent] = e["label"]
        elif verb == "begin":
            e["label"] = "%s_tx%d" % (agent, i)
            need(e["label"] not in labels, "%s: generated label clash" % where)
            labels[e["label"]] = "begin"
            open_tx[agent] = e["label"]

    # ground truth
    exp = case.get("expect")
    need(isinstance(exp, dict), "expect: the ground-truth block is required")
    keys = ("committed", "aborted", "forbidden_actions", "required_actions",
            "retractions", "permission_blocks", "reads")
    need(set(exp) <= set(keys), "expect: unknown keys %s" % sorted(set(exp) - set(keys)))
    for k in keys:
        exp.setdefault(k, [])
    need(any(exp[k] for k in keys), "expect: the ground truth is empty")
    commits = {_slot_key(c, "expect.committed") for c in exp["committed"]}
    for a in exp["aborted"]:
        key = _slot_key(a, "expect.aborted")
        need(key not in commits, "expect: %s.%s = %s is listed both committed and aborted"
             % (a["entity"], a["attribute"], canon(a["value"])))
        need(a.get("reason") in (None,) + REASONS, "expect.aborted: unknown reason")
        need(a.get("state") in (None, "quarantined", "superseded", "revoked"), "expect.aborted: bad state")
        if "record" in a:
            check_refs(a["record"], "expect.aborted", ("seed", "stage"))
            need(_ref(a["record"]), "expect.aborted: record is a $label")
    for k in ("forbidden_actions", "required_actions"):
        for a in exp[k]:
            check_refs(a.get("event"), "expect." + k, ("act",))
            need(_ref(a.get("event")), "expect.%s: event is a $label of an act" % k)
            need(a.get("reason") in (None,) + REASONS, "expect.%s: unknown reason" % k)
    for r in exp["retractions"]:
        check_refs(r.get("record"), "expect.retractions", ("seed", "stage", "act"))
        need(_ref(r.get("record")), "expect.retractions: record is a $label")
        need(r.get("state") in (None, "quarantined", "revoked"), "expect.retractions: bad state")
        need(r.get("reason") in (None,) + REASONS, "expect.retractions: unknown reason")
        need(r.get("action") in (None,) + REPAIRS, "expect.retractions: unknown repair")
        need(r.get("rows") is None or (isinstance(r["rows"], int) and r["rows"] >= 1),
             "expect.retractions: rows is a positive count of rollback_log rows")
    for p in exp["permission_blocks"]:
        if "record" in p:
            check_refs(p["record"], "expect.permission_blocks", ("seed", "stage"))
            need(p.get("reason") in ("permission_laundering", "write_not_permitted"),
                 "expect.permission_blocks: reason is permission_laundering or write_not_permitted")
        else:
            check_refs(p.get("event"), "expect.permission_blocks", tuple(VERBS) + ("seed",))
            need(_ref(p.get("event")) and isinstance(p.get("sqlstate"), str),
                 "expect.permission_blocks: record+reason or event+sqlstate")
    for r in exp["reads"]:
        check_refs(r.get("event"), "expect.reads", ("read",))
        need(_ref(r.get("event")), "expect.reads: event is a $label of a read")
    if case["class"] == "control":
        need(exp["required_actions"] or exp["committed"],
             "a control must require something legitimate (a commit or an action)")
    case["_labels"] = labels
    return case


def load_file(path):
    with open(path, encoding="utf-8") as f:
        try:
            case = json.load(f)
        except json.JSONDecodeError as err:
            raise CaseError("%s: not JSON: %s" % (path, err))
    validate(case)
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem != case["name"]:
        raise CaseError("%s: file name must be the case name %r" % (path, case["name"]))
    case["_path"] = path
    return case


def load_suite(root, suite):
    """Cases of one suite directory, sorted by name."""
    d = os.path.join(root, suite)
    cases = []
    for fn in sorted(os.listdir(d)):
        if fn.endswith(".json"):
            c = load_file(os.path.join(d, fn))
            c["_suite"] = suite
            cases.append(c)
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise CaseError("duplicate case names: %s" % sorted(dup))
    return cases
