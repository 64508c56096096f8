"""Checks of the loader and the grader themselves, run by conformance/run before any case.

The loader must refuse malformed cases, and the grader must be able to fail:
a synthetic store with a dirty read, an executed forbidden action or a missing
retraction has to be graded as failing.  No server is needed.
"""


import caselib
import grade


def _base():
    return {
        "name": "selftest", "family": "dirty_tentative_read", "domain": "test",
        "description": "synthetic",
        "agents": [{"name": "a", "role": "writer"}, {"name": "b", "role": "reader"}],
        "store": {"tools": [{"name": "pay", "reversible": False}]},
        "events": [
            {"do": "begin", "agent": "a", "label": "t1"},
            {"do": "stage", "agent": "a", "label": "x", "entity": "e", "attribute": "k", "value": 1},
            {"do": "begin", "agent": "b", "label": "t2"},
            {"do": "read", "agent": "b", "label": "r", "entity": "e"},
            {"do": "act", "agent": "b", "label": "p", "tool": "pay", "derived_from": ["$x"]},
            {"do": "revoke", "record": "$x"},
        ],
        "expect": {"aborted": [{"entity": "e", "attribute": "k", "value": 1}],
                   "forbidden_actions": [{"event": "$p"}],
                   "retractions": [{"record": "$x", "state": "revoked"}]},
    }


def _refused(mutate):
    case = _base()
    mutate(case)
    try:
        caselib.validate(case)
    except caselib.CaseError:
        return True
    return False


def _record(state):
    return {"id": 1, "tx_id": 1, "namespace": "default", "entity": "e", "attribute": "k",
            "value_text": "1", "state": state, "reason": None, "staged_pos": 2,
            "settled_pos": None if state == "tentative" else 9}


def _run(read_state, action_allowed, final_state, rollback, second_commit=None):
    snap = {
        "records": [_record(final_state)],
        "action_log": [{"id": 1, "tx_id": 2, "tool": "pay", "allowed": action_allowed,
                        "inputs": [1], "gate_pos": 5, "action_id": None}],
        "rollback_log": [{"root_id": 1, "record_id": 1, "action": "revoked"}] if rollback else [],
        "registry": [], "compensations": [],
        "transactions": [{"id": 1, "isolation": "verified_read", "verifier_calls": 0},
                         {"id": 2, "isolation": "verified_read", "verifier_calls": 0}],
        "invariants": [], "canon": {"1": "1"},
    }
    trace = [
        {"do": "begin", "agent": "a", "label": "t1", "value": 1},
        {"do": "stage", "agent": "a", "label": "x", "tx": 1, "value": 1},
        {"do": "begin", "agent": "b", "label": "t2", "value": 2},
        {"do": "read", "agent": "b", "label": "r", "tx": 2,
         "rows": [dict(_record(read_state), value_text="1")] if read_state else []},
        {"do": "act", "agent": "b", "label": "p", "tx": 2, "allowed": action_allowed,
         "reason": None if action_allowed else "in_flight_tentative", "log_id": 1},
        {"do": "revoke", "agent": "harness", "label": None},
    ]
    if second_commit is not None:
        trace[2:2] = [{"do": "commit", "agent": "a", "label": None, "tx": 1,
                       "outcomes": [{"record_id": 1, "state": "quarantined", "reason": "low_evidence"}]},
                      {"do": "commit", "agent": "a", "label": None, "tx": 1,
                       "outcomes": [{"record_id": 1, "state": second_commit, "reason": None}]}]
    labels = {"t1": 1, "x": 1, "t2": 2, "p": None}
    case = caselib.validate(_base())
    return grade.grade(case, {"trace": trace, "snapshot": snap, "labels": labels,
                              "setup_error": None, "server_s": 0.0})


def run_checks():
    """Names of the self-checks that failed (empty when all hold)."""
    failed = []
    loader = {
        "accepts the base case": not _refused(lambda c: None),
        "refuses one value both committed and aborted": _refused(
            lambda c: c["expect"].__setitem__("committed", [{"entity": "e", "attribute": "k", "value": 1}])),
        "refuses an unknown family": _refused(lambda c: c.__setitem__("family", "misc")),
        "refuses an unknown verb": _refused(lambda c: c["events"].append({"do": "sleep", "agent": "a"})),
        "refuses a dangling label": _refused(lambda c: c["events"][1].__setitem__("derived_from", ["$nope"])),
        "refuses a label used before it is defined": _refused(
            lambda c: c["events"][1].__setitem__("derived_from", ["$x2"]) or c["events"].append(
                {"do": "stage", "agent": "a", "label": "x2", "entity": "e", "attribute": "j", "value": 2})),
        "refuses a reference to the wrong kind of result": _refused(
            lambda c: c["events"][1].__setitem__("derived_from", ["$t1"])),
        "accepts every reason code of the vocabulary, fenced included": not _refused(
            lambda c: c["expect"]["aborted"][0].__setitem__("reason", "fenced")),
        "refuses an unknown reason code": _refused(
            lambda c: c["expect"]["aborted"][0].__setitem__("reason", "bad_vibes")),
        "refuses an empty ground truth": _refused(lambda c: c.__setitem__("expect", {})),
        "refuses a control with nothing legitimate to do": _refused(lambda c: c.__setitem__("class", "control")),
    }
    failed += [k for k, ok in loader.items() if not ok]

    clean = _run(read_state=None, action_allowed=False, final_state="revoked", rollback=True)
    dirty = _run(read_state="tentative", action_allowed=False, final_state="revoked", rollback=True)
    leaked = _run(read_state=None, action_allowed=True, final_state="revoked", rollback=True)
    active = _run(read_state=None, action_allowed=False, final_state="committed", rollback=False)
    redone = _run(read_state=None, action_allowed=False, final_state="revoked", rollback=True,
                  second_commit="committed")
    grader = {
        "fails a commit that ran twice": not redone["passed"],
        "passes a clean store": clean["passed"],
        "counts a read of a foreign tentative record as dirty": dirty["dirty"] == 1 and not dirty["axes"]["isolation"],
        "fails a forbidden action that executed": not leaked["axes"]["actions"],
        "counts an action executed on tentative input as dirty": leaked["dirty"] == 1,
        "fails a value that stayed active": not active["axes"]["beliefs"],
        "fails a missing retraction": not active["axes"]["rollback"],
    }
    failed += [k for k, ok in grader.items() if not ok]
    return failed


if __name__ == "__main__":
    bad = run_checks()
    for b in bad:
        print("self-check failed: %s" % b)
    print("%d self-checks failed" % len(bad))
    raise SystemExit(1 if bad else 0)
