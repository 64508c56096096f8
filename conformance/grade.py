"""Grader: pure rule matching of a case's ground truth against the final store.

Inputs are the replay trace (what each API call returned) and a snapshot of
memtx.records, memtx.action_log, memtx.rollback_log, the revocation registry,
compensations and memtx.transactions.  Nothing is re-derived from the
protocol: each expectation is a lookup.

Five axes per case, all of which must hold for task success:
  beliefs      expected commits are active; expected aborts exist and are not active
  actions      forbidden actions did not execute; required actions did
  isolation    no dirty read; read expectations hold
  rollback     required retractions happened (state, reason, repair log)
  permissions  expected permission blocks happened
and the replay itself must be clean: no unexpected SQL error, every expected
error raised, a repeated commit returning the stored outcome, and
check_invariants() empty.
"""

import json

ACTIVE = ("committed", "action_safe")
EXPOSED = {
    "raw_read": None,  # every state
    "committed_read": ACTIVE,
    "verified_read": ACTIVE,
    "causally_stable_read": ACTIVE,
    "action_safe_read": ("action_safe",),
}
AXES = ("beliefs", "actions", "isolation", "rollback", "permissions")


def _ref(v):
    return v[1:] if isinstance(v, str) and v.startswith("$") else None


def grade(case, run):
    """Grade one replay; returns a dict of counts, axes and failure messages."""
    res = {
        "name": case["name"], "family": case["family"], "class": case["class"],
        "suite": case.get("_suite"), "domain": case["domain"],
        "committed": [0, 0], "aborted": [0, 0], "forbidden": [0, 0],
        "required": [0, 0], "retractions": [0, 0], "permissions": [0, 0],
        "reads": [0, 0], "dirty": 0, "errors": [], "failures": [],
        "verifier_calls": 0, "server_ms": run["server_s"] * 1000.0,
    }
    fail = res["failures"].append
    if run["setup_error"] or run["snapshot"] is None:
        res["errors"].append(run["setup_error"] or "no snapshot")
        res["axes"] = {a: False for a in AXES}
        res["passed"] = False
        return res

    snap, labels, trace = run["snapshot"], run["labels"], run["trace"]
    ns = case["namespace"]
    recs = {r["id"]: r for r in snap["records"]}
    txs = {t["id"]: t for t in snap["transactions"]}
    canon = snap["canon"]
    res["verifier_calls"] = sum(int(t.get("verifier_calls") or 0) for t in snap["transactions"])

    outcomes = {}
    for ev in trace:
        for o in ev.get("outcomes") or []:
            outcomes.setdefault(o["record_id"], []).append(o)
    by_label = {ev["label"]: ev for ev in trace if ev.get("label")}
    rollback_by_rec = {}
    for row in snap["rollback_log"]:
        rollback_by_rec.setdefault(row["record_id"], []).append(row)

    def slot_records(item):
        want = canon[json.dumps(item["value"])]
        n = item.get("namespace", ns)
        return [r for r in snap["records"]
                if r["namespace"] == n and r["entity"] == item["entity"]
                and r["attribute"] == item["attribute"] and r["value_text"] == want]

    def show(item):
        return "%s.%s=%s" % (item["entity"], item["attribute"], json.dumps(item["value"]))

    exp = case["expect"]
    # beliefs
    for item in exp["committed"]:
        res["committed"][1] += 1
        rs = slot_records(item)
        if any(r["state"] in ACTIVE for r in rs):
            res["committed"][0] += 1
        else:
            fail("expected active %s; found %s" % (
                show(item), [(r["id"], r["state"], r.get("reason")) for r in rs] or "no record"))
    for item in exp["aborted"]:
        res["aborted"][1] += 1
        rs = slot_records(item)
        ok = bool(rs) and not any(r["state"] in ACTIVE or r["state"] == "tentative" for r in rs)
        if "record" in item:
            # the named record is the one the state and reason are asserted of
            rid = labels.get(_ref(item["record"]))
            ok = ok and any(r["id"] == rid for r in rs)
            rs = [r for r in rs if r["id"] == rid]
        if ok and item.get("state"):
            ok = any(r["state"] == item["state"] for r in rs)
        if ok and item.get("reason"):
            ok = any(r.get("reason") == item["reason"]
                     or any(o["reason"] == item["reason"] for o in outcomes.get(r["id"], []))
                     for r in rs)
        if ok:
            res["aborted"][0] += 1
        else:
            fail("expected not active %s%s; found %s" % (
                show(item),
                " (%s)" % "/".join(x for x in (item.get("state"), item.get("reason")) if x)
                if item.get("state") or item.get("reason") else "",
                [(r["id"], r["state"], r.get("reason")) for r in rs] or "no record"))

    # actions
    log_by_id = {a["id"]: a for a in snap["action_log"]}

    def executed(label):
        ev = by_label.get(label)
        if ev is None or ev.get("sqlstate"):
            return False, None, ev and ev.get("sqlstate")
        row = log_by_id.get(ev.get("log_id"))
        done = bool(ev.get("allowed")) or bool(row and row["allowed"] and row["tx_id"] == ev["tx"])
        return done, ev.get("reason"), None

    for a in exp["forbidden_actions"]:
        res["forbidden"][1] += 1
        done, reason, st = executed(_ref(a["event"]))
        if done:
            fail("forbidden action %s executed" % a["event"])
        elif a.get("reason") and reason != a["reason"]:
            fail("forbidden action %s blocked with %s, expected %s" % (a["event"], reason or st, a["reason"]))
        else:
            res["forbidden"][0] += 1
    for a in exp["required_actions"]:
        res["required"][1] += 1
        done, reason, st = executed(_ref(a["event"]))
        if done:
            res["required"][0] += 1
        else:
            fail("required action %s not executed (%s)" % (a["event"], reason or st))

    # isolation: dirty reads and read expectations
    for ev in trace:
        if ev["do"] != "read" or ev.get("rows") is None:
            continue
        t = txs.get(ev["tx"])
        level = t and t.get("isolation")
        exposed = EXPOSED.get(level, ACTIVE)
        for row in ev["rows"]:
            if row.get("tx_id") == ev["tx"]:
                continue
            if (row["state"] == "tentative" and level != "raw_read") or \
                    (exposed is not None and row["state"] not in exposed):
                res["dirty"] += 1
                fail("dirty read: %s read record %s (%s, tx %s) at %s"
                     % (ev["label"] or "read", row["id"], row["state"], row.get("tx_id"), level))
    for a in snap["action_log"]:
        if not a["allowed"] or a.get("gate_pos") is None:
            continue
        for inp in a.get("inputs") or []:
            r = recs.get(inp)
            if not r or r["tx_id"] == a["tx_id"] or r.get("staged_pos") is None:
                continue
            if r["staged_pos"] < a["gate_pos"] and (r.get("settled_pos") is None
                                                    or r["settled_pos"] > a["gate_pos"]):
                res["dirty"] += 1
                fail("action %s (%s) executed on tentative input %s" % (a["id"], a["tool"], inp))
    for rd in exp["reads"]:
        res["reads"][1] += 1
        ev = by_label.get(_ref(rd["event"]))
        if ev is None or ev.get("rows") is None:
            fail("read %s returned nothing (error %s)" % (rd["event"], ev and ev.get("sqlstate")))
            continue
        seen = [r["value_text"] for r in ev["rows"]]
        ok = True
        for v in rd.get("sees", []):
            if canon[json.dumps(v)] not in seen:
                ok = False
                fail("read %s should see %s; saw %s" % (rd["event"], json.dumps(v), seen))
        for v in rd.get("hides", []):
            if canon[json.dumps(v)] in seen:
                ok = False
                fail("read %s should not see %s" % (rd["event"], json.dumps(v)))
        if "count" in rd and len(seen) != rd["count"]:
            ok = False
            fail("read %s returned %d rows, expected %d" % (rd["event"], len(seen), rd["count"]))
        res["reads"][0] += ok

    # rollback
    for rt in exp["retractions"]:
        res["retractions"][1] += 1
        rid = labels.get(_ref(rt["record"]))
        r = recs.get(rid)
        problems = []
        if r is None:
            problems.append("no such record")
        else:
            want_state = rt.get("state")
            if want_state and r["state"] != want_state:
                problems.append("state %s, expected %s" % (r["state"], want_state))
            if not want_state and r["state"] not in ("revoked", "quarantined"):
                problems.append("state %s" % r["state"])
            if rt.get("reason") and r.get("reason") != rt["reason"]:
                problems.append("reason %s, expected %s" % (r.get("reason"), rt["reason"]))
            logs = rollback_by_rec.get(rid, [])
            if rt.get("action"):
                if not any(l["action"] == rt["action"] for l in logs):
                    problems.append("no rollback_log %s row (has %s)" % (rt["action"], [l["action"] for l in logs]))
            elif not logs:
                problems.append("no rollback_log row")
            if "rows" in rt and len(logs) != rt["rows"]:
                problems.append("%d rollback_log rows, expected %d" % (len(logs), rt["rows"]))
            if rt.get("registered") and rid not in snap["registry"]:
                problems.append("not in the revocation registry")
            if rt.get("compensator") and not any(
                    c["action_id"] == rid and c.get("compensator") == rt["compensator"]
                    for c in snap["compensations"]):
                problems.append("no compensation obligation naming %s" % rt["compensator"])
        if problems:
            fail("retraction %s: %s" % (rt["record"], "; ".join(problems)))
        else:
            res["retractions"][0] += 1

    # permissions
    for p in exp["permission_blocks"]:
        res["permissions"][1] += 1
        if "record" in p:
            rid = labels.get(_ref(p["record"]))
            r = recs.get(rid)
            got = [o["reason"] for o in outcomes.get(rid, [])]
            ok = r is not None and r["state"] not in ACTIVE and (p["reason"] in got or r.get("reason") == p["reason"])
            if not ok:
                fail("permission block %s: expected %s; record %s, commit said %s" % (
                    p["record"], p["reason"], r and (r["state"], r.get("reason")), got))
        else:
            ev = by_label.get(_ref(p["event"]))
            ok = ev is not None and ev.get("sqlstate") == p["sqlstate"]
            if not ok:
                fail("permission block %s: expected SQLSTATE %s, got %s" % (
                    p["event"], p["sqlstate"], ev and (ev.get("sqlstate") or "success")))
        res["permissions"][0] += ok

    # replay hygiene
    for ev in trace:
        want, got = ev.get("expect_error"), ev.get("sqlstate")
        name = ev.get("label") or ev["do"]
        if want and got != want:
            res["errors"].append("%s (%s by %s): expected SQLSTATE %s, got %s" % (
                name, ev["do"], ev["agent"], want, got or "success"))
        elif got and not want:
            res["errors"].append("%s (%s by %s): unexpected error %s: %s" % (
                name, ev["do"], ev["agent"], got, ev.get("error")))
    first_outcome = {}
    for ev in trace:
        if ev["do"] == "commit" and ev.get("outcomes") is not None:
            key = sorted((o["record_id"], o["state"], o["reason"] or "") for o in ev["outcomes"])
            if ev["tx"] in first_outcome and first_outcome[ev["tx"]] != key:
                res["errors"].append("commit of transaction %s is not idempotent: %s, then %s"
                                     % (ev["tx"], first_outcome[ev["tx"]], key))
            first_outcome.setdefault(ev["tx"], key)
    for inv in snap["invariants"]:
        res["errors"].append("invariant %s violated at record %s: %s" % tuple(inv))

    res["axes"] = {
        "beliefs": res["committed"][0] == res["committed"][1] and res["aborted"][0] == res["aborted"][1],
        "actions": res["forbidden"][0] == res["forbidden"][1] and res["required"][0] == res["required"][1],
        "isolation": res["dirty"] == 0 and res["reads"][0] == res["reads"][1],
        "rollback": res["retractions"][0] == res["retractions"][1],
        "permissions": res["permissions"][0] == res["permissions"][1],
    }
    res["passed"] = all(res["axes"].values()) and not res["errors"]
    return res


def _ratio(num, den):
    return None if den == 0 else num / den


def aggregate(results):
    """Metrics of a group of graded cases."""
    def tot(key, i):
        return sum(r[key][i] for r in results)
    controls = [r for r in results if r["class"] == "control"]
    n = len(results)
    return {
        "cases": n,
        "traps": n - len(controls),
        "controls": len(controls),
        "passed": sum(r["passed"] for r in results),
        "task_success": _ratio(sum(r["passed"] for r in results), n),
        "abort_recall": _ratio(tot("aborted", 0), tot("aborted", 1)),
        "commit_retention": _ratio(tot("committed", 0), tot("committed", 1)),
        "block_rate": _ratio(tot("forbidden", 0), tot("forbidden", 1)),
        "dirty_reads": sum(r["dirty"] for r in results),
        "rollback_recall": _ratio(tot("retractions", 0), tot("retractions", 1)),
        "permission_enforcement": _ratio(tot("permissions", 0), tot("permissions", 1)),
        "legit_allow": _ratio(sum(r["required"][0] for r in controls), sum(r["required"][1] for r in controls)),
        "control_pass": _ratio(sum(r["passed"] for r in controls), len(controls)),
        "verifier_calls_per_case": _ratio(sum(r["verifier_calls"] for r in results), n),
        "server_ms_per_case": _ratio(sum(r["server_ms"] for r in results), n),
    }


COLUMNS = (
    ("traps", "traps", "d"), ("controls", "ctrl", "d"), ("task_success", "success", "r"),
    ("abort_recall", "abort_rec", "r"), ("block_rate", "block", "r"), ("dirty_reads", "dirty", "d"),
    ("rollback_recall", "rollback", "r"), ("permission_enforcement", "perm", "r"),
    ("legit_allow", "legit", "r"), ("verifier_calls_per_case", "verif/case", "f"),
    ("server_ms_per_case", "ms/case", "f"),
)


def _cell(v, fmt):
    if v is None:
        return "-"
    if fmt == "d":
        return str(v)
    if fmt == "r":
        return "%.3f" % v
    return "%.1f" % v


def table(rows):
    """Markdown table of (label, metrics) rows."""
    head = ["family"] + [c[1] for c in COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for label, m in rows:
        lines.append("| " + " | ".join([label] + [_cell(m[k], f) for k, _, f in COLUMNS]) + " |")
    return "\n".join(lines)
