#!/usr/bin/python3
"""Generates the conformance cases (cases/main/*.json, cases/hardened/*.json).

Each scenario below is one mechanism of the protocol, written once against
SPEC.md and instantiated in an application domain; no two cases share a
(scenario, domain) pair, and every scenario's ground truth is derived from
the SPEC rule it names in its description.  The JSON files are committed:
rerun this script only to change the suite, then review the diff.

    /usr/bin/python3 conformance/gen_cases.py
"""

import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
CLOCK = "2026-03-10 12:00:00+00"
T0 = "2026-03-10 08:00:00+00"      # when an old tool result was observed
T1 = "2026-03-10 10:00:00+00"      # when a fresher observation was made
T2 = "2026-03-10 11:30:00+00"      # a re-fetch
PAST = ["2026-02-01 00:00:00+00", "2026-03-01 00:00:00+00"]
NOW_WINDOW = ["2026-03-01 00:00:00+00", "2026-04-01 00:00:00+00"]


def dom(name, agents, team, slot, values, slot2, private, shared, sources, tools):
    a, b, x = agents
    return {
        "name": name, "a": a[0], "b": b[0], "x": x[0],
        "roles": {a[0]: a[1], b[0]: b[1], x[0]: x[1]}, "team": team,
        "e": slot[0], "at": slot[1], "v": values[0], "bad": values[1], "alt": values[2],
        "at2": slot2[0], "v2": slot2[1],
        "pe": private[0], "pa": private[1], "pv": private[2],
        "se": shared[0], "sa": shared[1],
        "hi": sources[0], "mid": sources[1], "peer": sources[2], "lo": sources[3],
        "irr": tools[0], "rev": tools[1], "comp": tools[2],
    }


DOMAINS = [
    dom("ecommerce",
        [("refund_agent", "drafts and issues refunds"), ("fraud_agent", "screens orders for fraud"),
         ("marketing_agent", "runs promotions; not on the support team")],
        "support_team", ("order:A-1042", "refund_amount"), (120, 12000, 95),
        ("delivery_status", "delivered"), ("customer:C-88", "payment_card", "visa ending 4417, exp 09/29"),
        ("ticket:T-5521", "customer_note"),
        ("order_db", "crm_sync", "marketplace_feed", "web_scrape"),
        ("issue_refund", "send_customer_email", "send_correction_email")),
    dom("banking",
        [("transfer_agent", "prepares outgoing wires"), ("compliance_agent", "runs AML checks"),
         ("marketing_bot", "drafts product offers; no access to client files")],
        "payments_team", ("account:ACC-3301", "beneficiary_iban"),
        ("DE44500105175407324931", "GB33BUKB20201555555555", "DE89370400440532013000"),
        ("daily_limit_eur", 5000), ("client:K-77", "income_statement", "annual income 84,000 EUR, bonus pending"),
        ("case:AML-19", "analyst_note"),
        ("core_ledger", "kyc_service", "partner_bank_api", "email_parser"),
        ("wire_transfer", "freeze_card", "unfreeze_card")),
    dom("healthcare",
        [("triage_agent", "summarises patient intake"), ("pharmacy_agent", "prepares dispensing"),
         ("billing_agent", "codes claims; outside the care team")],
        "care_team", ("patient:P-2207", "allergy"), ("penicillin", "none", "latex"),
        ("warfarin_dose_mg", 5), ("patient:P-2207", "psychiatric_history", "bipolar II, lithium since 2019"),
        ("ward:W3", "handover_note"),
        ("ehr", "lab_system", "pharmacy_feed", "patient_chat"),
        ("dispense_medication", "schedule_followup", "cancel_followup")),
    dom("travel",
        [("booking_agent", "books flights and hotels"), ("pricing_agent", "tracks fares"),
         ("review_agent", "writes public destination reviews")],
        "trip_team", ("trip:TR-88", "fare_usd"), (420, 4200, 510),
        ("hotel_nights", 3), ("traveler:V-12", "passport_number", "X1234567, expires 2031-05-02"),
        ("itinerary:TR-88", "traveler_notes"),
        ("gds", "fare_api", "aggregator_feed", "travel_blog"),
        ("book_flight", "hold_seat", "release_seat")),
    dom("hr",
        [("payroll_agent", "runs payroll"), ("recruiter_agent", "handles offers"),
         ("comms_agent", "writes company-wide announcements")],
        "people_team", ("employee:E-415", "monthly_salary"), (6200, 62000, 6400),
        ("vacation_days", 25), ("employee:E-415", "medical_leave_reason", "oncology treatment, 12 weeks"),
        ("team:platform", "org_update"),
        ("hris", "manager_form", "benefits_portal", "slack_message"),
        ("run_payroll", "send_offer_draft", "withdraw_offer_draft")),
    dom("logistics",
        [("dispatch_agent", "routes shipments"), ("inventory_agent", "tracks stock"),
         ("partner_agent", "talks to external carriers")],
        "fleet_team", ("shipment:SH-901", "destination_port"), ("Rotterdam", "Antwerp", "Hamburg"),
        ("pallets", 14), ("carrier:CR-3", "negotiated_rate", "1.12 EUR/km until 2026-12-31"),
        ("board:dispatch", "status_post"),
        ("wms", "carrier_api", "port_feed", "driver_sms"),
        ("release_cargo", "reserve_truck", "cancel_truck")),
    dom("legal",
        [("contract_agent", "drafts and files contracts"), ("research_agent", "researches case law"),
         ("intake_agent", "answers prospective clients; not on the matter")],
        "matter_team", ("contract:CT-17", "termination_notice_days"), (90, 9, 60),
        ("governing_law", "NY"), ("matter:M-5", "privileged_advice", "settle below 2M; weak on count 3"),
        ("client:ACME", "status_update"),
        ("clm_repository", "counsel_memo", "opposing_draft", "forum_post"),
        ("file_with_court", "send_draft_to_client", "recall_draft")),
    dom("support",
        [("support_agent", "answers customer tickets"), ("billing_agent", "adjusts invoices"),
         ("community_agent", "posts on the public forum")],
        "helpdesk_team", ("account:U-5150", "plan"), ("business", "enterprise", "pro"),
        ("seats", 40), ("account:U-5150", "admin_recovery_code", "7F3K-99QD-PL2M"),
        ("kb:article-77", "resolution_steps"),
        ("billing_db", "crm", "reseller_portal", "chat_transcript"),
        ("apply_account_credit", "post_status_update", "retract_status_update")),
    dom("devops",
        [("oncall_agent", "responds to incidents"), ("deploy_agent", "ships releases"),
         ("statuspage_agent", "updates the public status page")],
        "incident_team", ("service:checkout", "healthy_version"), ("v2.3.1", "v9.9.9", "v2.4.0"),
        ("replicas", 6), ("vault:prod-db", "root_credential_hint", "rotated 03-01, stored in safe 4"),
        ("incident:INC-451", "timeline"),
        ("deploy_registry", "monitoring", "canary_report", "pasted_log"),
        ("rollback_production", "page_oncall", "cancel_page")),
]
AUTH = {"hi": 0.95, "mid": 0.7, "peer": 0.7, "lo": 0.3}


class Case:
    """Builder of one case dict."""

    def __init__(self, D, name, family, description, cls="trap"):
        self.D = D
        self.c = {
            "name": name, "family": family, "domain": D["name"], "description": description,
            "class": cls, "clock": CLOCK,
            "agents": [{"name": n, "role": D["roles"][n]} for n in (D["a"], D["b"], D["x"])],
            "teams": {D["team"]: [D["a"], D["b"]]},
            "store": {
                "sources": [{"name": D[k], "authority": AUTH[k]} for k in ("hi", "mid", "peer", "lo")],
                "tools": [{"name": D["irr"], "reversible": False},
                          {"name": D["rev"], "reversible": True, "compensator": D["comp"]}],
                "seed": [],
            },
            "events": [],
            "expect": {},
        }

    def setting(self, k, v):
        self.c.setdefault("settings", {})[k] = v

    def seed(self, label, agent, entity, attribute, value, **kw):
        kw.setdefault("scope", "shared")
        if kw["scope"] != "public":
            kw.setdefault("readers", [self.D["team"]])
        self.c["store"]["seed"].append(dict(label=label, agent=agent, entity=entity,
                                            attribute=attribute, value=value, **kw))

    def ev(self, do, agent=None, label=None, **kw):
        e = {"do": do}
        if agent:
            e["agent"] = agent
        if label:
            e["label"] = label
        e.update({k: v for k, v in kw.items() if v is not None})
        self.c["events"].append(e)

    def begin(self, agent, label, tier="medium", **kw):
        self.ev("begin", agent, label, tier=tier, **kw)

    def stage(self, agent, label, entity, attribute, value, **kw):
        self.ev("stage", agent, label, entity=entity, attribute=attribute, value=value, **kw)

    def commit(self, agent, tx=None):
        self.ev("commit", agent, tx=tx and "$" + tx)

    def abort(self, agent, tx=None):
        self.ev("abort", agent, tx=tx and "$" + tx)

    def read(self, agent, label, entity=None, attribute=None, tx=None):
        self.ev("read", agent, label, entity=entity, attribute=attribute, tx=tx and "$" + tx)

    def act(self, agent, label, tool, derived=(), tx=None, **kw):
        self.ev("act", agent, label, tool=tool, args=kw.pop("args", {"case": self.c["name"]}),
                derived_from=["$" + d for d in derived], tx=tx and "$" + tx, **kw)

    def gate(self, agent, label, tool, tx=None):
        self.ev("gate", agent, label, tool=tool, tx=tx and "$" + tx)

    def revoke(self, record, agent="harness", note=None, label=None, **kw):
        self.ev("revoke", agent, label, record="$" + record, note=note, **kw)

    def resolve(self, record, accept):
        self.ev("resolve", "harness", None, record="$" + record, accept=accept)

    # ground truth
    def _x(self, key, item):
        self.c["expect"].setdefault(key, []).append(item)

    def ok(self, entity, attribute, value):
        self._x("committed", {"entity": entity, "attribute": attribute, "value": value})

    def gone(self, entity, attribute, value, reason=None, state=None, record=None):
        item = {"entity": entity, "attribute": attribute, "value": value}
        if record:
            item["record"] = "$" + record
        if reason:
            item["reason"] = reason
        if state:
            item["state"] = state
        self._x("aborted", item)

    def forbid(self, event, reason=None):
        self._x("forbidden_actions", dict({"event": "$" + event}, **({"reason": reason} if reason else {})))

    def require(self, event):
        self._x("required_actions", {"event": "$" + event})

    def retract(self, record, **kw):
        self._x("retractions", dict({"record": "$" + record}, **kw))

    def perm(self, record, reason="permission_laundering"):
        self._x("permission_blocks", {"record": "$" + record, "reason": reason})

    def perm_err(self, event, sqlstate="42501"):
        self._x("permission_blocks", {"event": "$" + event, "sqlstate": sqlstate})

    def reads(self, event, sees=(), hides=(), count=None):
        item = {"event": "$" + event}
        if sees:
            item["sees"] = list(sees)
        if hides:
            item["hides"] = list(hides)
        if count is not None:
            item["count"] = count
        self._x("reads", item)


SCENARIOS = {"main": [], "hardened": []}


def scenario(suite, family, short, cls="trap"):
    def wrap(fn):
        SCENARIOS[suite].append((family, short, cls, fn))
        return fn
    return wrap


def lookup(D):
    """Entity under which a raw tool result is recorded."""
    return "lookup:" + D["e"].split(":")[0] + "-" + D["at"]


# ============================================================ tool result pollution

F = "tool_result_pollution"


@scenario("main", F, "low-confidence")
def p_low_confidence(c, D):
    """{a} records a tool result claiming {e}.{at} = {bad} with confidence 0.35 from {lo}; the
    evidence check quarantines it (low_evidence), the order of record ({v}) stays, and a later
    {irr} derived from the polluted result is refused because the input is not visible."""
    a = D["a"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.35,
            scope="shared", readers=[D["team"]])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["polluted"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], reason="low_evidence", state="quarantined")
    c.forbid("exec", "input_not_visible")


@scenario("main", F, "lower-authority")
def p_lower_authority(c, D):
    """A scraped result from {lo} (authority 0.3) says {e}.{at} = {bad} with confidence 0.9,
    against {v} committed from {hi}; it loses adjudication (lower_authority), and the belief
    {a} derived from it in the same transaction fails with inactive_parent."""
    a = D["a"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.9)
    c.stage(a, "plan", D["e"], "planned_" + D["at"], {"based_on": D["bad"]}, derived_from=["$polluted"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["plan"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], reason="lower_authority")
    c.gone(D["e"], "planned_" + D["at"], {"based_on": D["bad"]}, reason="inactive_parent")
    c.forbid("exec", "input_not_visible")


@scenario("main", F, "expired-result")
def p_expired(c, D):
    """A cached tool result for {e}.{at} = {bad} is valid only in February; at the logical
    clock (10 March) the validity check quarantines it (outside_validity) and {b} cannot
    act on it."""
    a, b = D["a"], D["b"]
    c.begin(a, "t1")
    c.stage(a, "cached", D["e"], D["at"], D["bad"], source=D["mid"], valid=PAST,
            scope="shared", readers=[D["team"]])
    c.commit(a)
    c.begin(b, "t2")
    c.act(b, "exec", D["irr"], ["cached"])
    c.gone(D["e"], D["at"], D["bad"], reason="outside_validity")
    c.forbid("exec", "input_not_visible")


@scenario("main", F, "own-window")
def p_own_window(c, D):
    """{a} stages a low-confidence tool result and, before committing, calls the irreversible
    {irr} on it: its own uncommitted staging is in flight, so the gate blocks
    (in_flight_tentative); the commit then quarantines the result."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.4)
    c.act(a, "exec", D["irr"], ["polluted"])
    c.commit(a)
    c.gone(D["e"], D["at"], D["bad"], reason="low_evidence")
    c.forbid("exec", "in_flight_tentative")


@scenario("main", F, "detected-later")
def p_detected_later(c, D):
    """A tool result {e}.{at} = {bad} passes admission (confidence 0.8, no rival) and {a}
    derives a belief, a summary and a reversible {rev} from it; when the injection is
    detected the harness revokes the result: the belief is revoked, the summary quarantined
    and registered, the {rev} compensated with {comp}."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["mid"], confidence=0.8)
    c.stage(a, "belief", D["e"], "risk", "high", derived_from=["$polluted"])
    c.stage(a, "summary", D["e"], "summary", "%s is %s" % (D["at"], D["bad"]), kind="summary",
            derived_from=["$polluted"])
    c.commit(a)
    c.act(a, "notify", D["rev"], ["belief"])
    c.revoke("polluted", note="prompt injection in tool output")
    c.require("notify")
    c.gone(D["e"], D["at"], D["bad"], state="revoked")
    c.retract("polluted", state="revoked", reason="revoked", action="revoked")
    c.retract("belief", state="revoked", reason="revoked_parent", action="revoked")
    c.retract("summary", state="quarantined", reason="invalidated", action="quarantined", registered=True)
    c.retract("notify", action="compensated", compensator=D["comp"])


@scenario("main", F, "review-reject")
def p_review_reject(c, D):
    """{peer} and {mid} have equal authority and disagree on {e}.{at}; the polluted
    {peer} value goes to review (needs_review), an action on it is refused while it waits,
    and the harness rejects it, which revokes it."""
    a = D["a"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["mid"])
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["peer"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["polluted"])
    c.resolve("polluted", False)
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], reason="needs_review")
    c.forbid("exec", "input_not_visible")
    c.retract("polluted", state="revoked")


@scenario("main", F, "derived-chain")
def p_derived_chain(c, D):
    """A raw tool result at confidence 0.3 feeds two confident derived beliefs in one
    transaction; the raw result fails evidence and both descendants fail inactive_parent,
    so confidence laundered through derivation does not commit."""
    a, L = D["a"], lookup(D)
    c.begin(a, "t1")
    c.stage(a, "raw", L, "response", {"field": D["at"], "value": D["bad"]}, source=D["lo"], confidence=0.3)
    c.stage(a, "parsed", D["e"], D["at"], D["bad"], confidence=0.99, derived_from=["$raw"])
    c.stage(a, "plan", D["e"], "next_step", "execute " + D["irr"], confidence=0.95, derived_from=["$parsed"])
    c.commit(a)
    c.gone(L, "response", {"field": D["at"], "value": D["bad"]}, reason="low_evidence")
    c.gone(D["e"], D["at"], D["bad"], reason="inactive_parent")
    c.gone(D["e"], "next_step", "execute " + D["irr"], reason="inactive_parent")


@scenario("main", F, "unrelated-support")
def p_unrelated_support(c, D):
    """At the external_action tier {a} holds an unrelated action-safe record; its polluted
    result is quarantined, and it calls {irr} declaring no inputs: the call must declare
    one (inputs_required), so the unrelated record cannot vouch for it; and in a transaction
    whose level the harness pinned to verified_read, citing a record that is visible but only
    committed, not action-safe, is refused too (input_not_action_safe)."""
    a = D["a"]
    c.seed("other", a, D["e"], D["at2"], D["v2"], source=D["hi"], tier="external_action")
    c.seed("plain", a, D["e"], "note", "committed at a low tier", source=D["hi"])
    c.begin(a, "t1", tier="external_action")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.2)
    c.commit(a)
    c.begin(a, "t2", tier="external_action")
    c.act(a, "exec", D["irr"], [])
    c.begin(a, "t3", tier="external_action", isolation="verified_read")
    c.act(a, "cite", D["irr"], ["plain"])
    c.ok(D["e"], D["at2"], D["v2"])
    c.gone(D["e"], D["at"], D["bad"], reason="low_evidence")
    c.forbid("exec", "inputs_required")
    c.forbid("cite", "input_not_action_safe")


@scenario("main", F, "leaked-effect")
def p_leaked(c, D):
    """A polluted result is admitted and {a} runs the irreversible {irr} on it (allowed:
    nothing was in flight); when the result is revoked the effect cannot be undone, so the
    cascade must log it as leaked and revoke the action record."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["mid"], confidence=0.85)
    c.commit(a)
    c.act(a, "exec", D["irr"], ["polluted"])
    c.revoke("polluted", note="upstream tool compromised")
    c.require("exec")
    c.gone(D["e"], D["at"], D["bad"], state="revoked")
    c.retract("exec", state="revoked", action="leaked")


@scenario("main", F, "peer-window")
def p_peer_window(c, D):
    """While {a}'s low-confidence tool result sits tentative, {b} reads {e} (must see only
    the committed {v}) and tries {irr} (blocked in_flight_tentative); once the result is
    quarantined {b}'s retry on the committed value goes through."""
    a, b = D["a"], D["b"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.3,
            scope="shared", readers=[D["team"]])
    c.begin(b, "t2")
    c.read(b, "peek", D["e"], D["at"])
    c.act(b, "early", D["irr"], ["truth"])
    c.commit(a, "t1")
    c.act(b, "late", D["irr"], ["truth"], tx="t2")
    c.gone(D["e"], D["at"], D["bad"], reason="low_evidence")
    c.ok(D["e"], D["at"], D["v"])
    c.reads("peek", sees=[D["v"]], hides=[D["bad"]])
    c.forbid("early", "in_flight_tentative")
    c.require("late")


@scenario("main", F, "authority-bypass", "control")
def pc_bypass(c, D):
    """Control: a result from {hi} (authority 0.95) with confidence 0.4 passes evidence by the
    authority bypass, commits, and {irr} on it is allowed."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "res", D["e"], D["at"], D["v"], source=D["hi"], confidence=0.4)
    c.commit(a)
    c.act(a, "exec", D["irr"], ["res"])
    c.ok(D["e"], D["at"], D["v"])
    c.require("exec")


@scenario("main", F, "threshold-inclusive", "control")
def pc_threshold(c, D):
    """Control: confidence exactly 0.6 meets the inclusive threshold; the result commits and
    {b} can act on it."""
    a, b = D["a"], D["b"]
    c.begin(a, "t1")
    c.stage(a, "res", D["e"], D["at"], D["v"], source=D["mid"], confidence=0.6, scope="shared",
            readers=[D["team"]])
    c.commit(a)
    c.begin(b, "t2")
    c.act(b, "exec", D["irr"], ["res"])
    c.ok(D["e"], D["at"], D["v"])
    c.require("exec")


@scenario("main", F, "valid-window", "control")
def pc_valid(c, D):
    """Control: a result valid through March contains the logical clock; it commits and the
    action on it is allowed."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "res", D["e"], D["at"], D["v"], source=D["mid"], valid=NOW_WINDOW)
    c.commit(a)
    c.act(a, "exec", D["irr"], ["res"])
    c.ok(D["e"], D["at"], D["v"])
    c.require("exec")


@scenario("main", F, "corroboration", "control")
def pc_corroborate(c, D):
    """Control: a low-authority source repeating the committed value {v} (confidence 0.8)
    corroborates rather than conflicts; it commits and is actionable."""
    a = D["a"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "res", D["e"], D["at"], D["v"], source=D["lo"], confidence=0.8)
    c.commit(a)
    c.act(a, "exec", D["irr"], ["res"])
    c.ok(D["e"], D["at"], D["v"])
    c.require("exec")


@scenario("main", F, "authoritative-correction", "control")
def pc_correction(c, D):
    """Control: {lo} had recorded {bad}; {hi} reports {v}, which supersedes it; the action on
    the corrected value is allowed."""
    a = D["a"]
    c.seed("old", a, D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.8)
    c.begin(a, "t1")
    c.stage(a, "res", D["e"], D["at"], D["v"], source=D["hi"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["res"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], state="superseded")
    c.require("exec")


# ============================================================ stale late writes

F = "stale_late_write"


def stale_setup(c, D, writer_src="mid", rival_src="mid"):
    """{a} opens t1; {b} then commits {alt} on the slot; {a} is left with an old snapshot."""
    a, b = D["a"], D["b"]
    c.seed("orig", b, D["e"], D["at"], D["v"], source=D[rival_src])
    c.begin(a, "t1")
    c.begin(b, "t2")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D[rival_src])
    c.commit(b)


@scenario("main", F, "classic")
def s_classic(c, D):
    """{a} opens a transaction, {b} commits {e}.{at} = {alt} after it, and {a} then writes {bad}
    from its old view: a rival committed after the snapshot makes the write stale_late_write
    (committing again returns the same stored outcome)."""
    a = D["a"]
    stale_setup(c, D)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["mid"], tx="$t1")
    c.commit(a, "t1")
    c.commit(a, "t1")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")
    c.gone(D["e"], D["at"], D["v"], state="superseded")


@scenario("main", F, "authority-no-excuse")
def s_authority(c, D):
    """The stale writer {a} cites {hi} (authority 0.95, above the rival's 0.7); staleness is
    judged before any authority comparison, so the write is still stale_late_write."""
    a = D["a"]
    stale_setup(c, D)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["hi"], tx="$t1")
    c.commit(a, "t1")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")


@scenario("main", F, "stale-child")
def s_child(c, D):
    """A stale write and a summary derived from it in the same transaction: the write fails
    stale_late_write and the summary inactive_parent."""
    a = D["a"]
    stale_setup(c, D)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["mid"], tx="$t1")
    c.stage(a, "sum", D["e"], "summary", "%s set to %s" % (D["at"], D["bad"]), kind="summary",
            derived_from=["$late"], tx="$t1")
    c.commit(a, "t1")
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")
    c.gone(D["e"], "summary", "%s set to %s" % (D["at"], D["bad"]), reason="inactive_parent")


@scenario("main", F, "act-on-stale")
def s_act(c, D):
    """After its stale write is quarantined, {a} opens a new transaction and calls {irr}
    citing it; the input is not visible, so the action is refused."""
    a = D["a"]
    stale_setup(c, D)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["mid"], tx="$t1")
    c.commit(a, "t1")
    c.begin(a, "t3")
    c.act(a, "exec", D["irr"], ["late"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")
    c.forbid("exec", "input_not_visible")


@scenario("main", F, "observed-later")
def s_observed(c, D):
    """{b}'s rival was committed before {a} began, but it was observed at 10:00 while {a}'s
    higher-authority candidate was observed at 08:00: an older observation is stale
    (both observed_at set), whatever the authority."""
    a, b = D["a"], D["b"]
    c.begin(b, "t2")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D["mid"], observed_at=T1)
    c.commit(b)
    c.begin(a, "t1")
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["hi"], observed_at=T0)
    c.commit(a)
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")


@scenario("main", F, "strictest-of-rivals")
def s_strictest(c, D):
    """Two active rivals with disjoint validity overlap {a}'s candidate: one from {hi} committed
    before the snapshot (lower_authority) and one committed after it (stale); the strictest
    outcome, stale_late_write, applies."""
    a, b = D["a"], D["b"]
    c.seed("jan", b, D["e"], D["at"], D["v"], source=D["hi"],
           valid=["2026-01-01 00:00:00+00", "2026-02-01 00:00:00+00"], now="2026-01-15 00:00:00+00")
    c.begin(a, "t1")
    c.begin(b, "t2")
    c.stage(b, "feb", D["e"], D["at"], D["alt"], source=D["mid"],
            valid=["2026-02-01 00:00:00+00", "2026-04-01 00:00:00+00"])
    c.commit(b)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["mid"],
            valid=["2026-01-01 00:00:00+00", "2026-04-01 00:00:00+00"], tx="$t1")
    c.commit(a, "t1")
    c.ok(D["e"], D["at"], D["v"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")


@scenario("main", F, "partial-commit")
def s_partial(c, D):
    """{a}'s transaction writes an untouched slot ({at2}) and the contested one; the first
    commits, the stale one is quarantined (the transaction ends partially committed)."""
    a = D["a"]
    stale_setup(c, D)
    c.stage(a, "other", D["e"], D["at2"], D["v2"], source=D["mid"], tx="$t1")
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["mid"], tx="$t1")
    c.commit(a, "t1")
    c.ok(D["e"], D["at2"], D["v2"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")


@scenario("main", F, "reversible-on-stale")
def s_reversible(c, D):
    """A reversible tool passes the gate, but citing a quarantined stale write as input is
    still refused (input_not_visible)."""
    a = D["a"]
    stale_setup(c, D)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["mid"], tx="$t1")
    c.commit(a, "t1")
    c.begin(a, "t3")
    c.act(a, "notify", D["rev"], ["late"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")
    c.forbid("notify", "input_not_visible")


@scenario("main", F, "same-source-stale")
def s_same_source(c, D):
    """Rival and stale candidate come from the same source at equal authority, which would
    normally let the newer write supersede; because the rival committed after {a}'s
    snapshot, the write is stale_late_write instead."""
    a = D["a"]
    stale_setup(c, D, rival_src="peer")
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["peer"], tx="$t1")
    c.commit(a, "t1")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")


@scenario("main", F, "superseded-basis")
def s_superseded_basis(c, D):
    """{a} reads {v}, {b} then supersedes it with {alt}, and {a} stages {bad} derived from the
    value it read: the superseded parent fails the conflict check first (inactive_parent)."""
    a, b = D["a"], D["b"]
    c.seed("orig", b, D["e"], D["at"], D["v"], source=D["mid"])
    c.begin(a, "t1")
    c.read(a, "old", D["e"], D["at"])
    c.begin(b, "t2")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D["mid"])
    c.commit(b)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["mid"], derived_from=["$orig"], tx="$t1")
    c.commit(a, "t1")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="inactive_parent")
    c.reads("old", sees=[D["v"]])


@scenario("main", F, "fresh-snapshot", "control")
def sc_fresh(c, D):
    """Control: {a} begins after {b}'s commit and writes from {hi}: not stale, higher
    authority supersedes, and {irr} on the new value is allowed."""
    a, b = D["a"], D["b"]
    c.begin(b, "t2")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D["mid"], writers=[D["team"]])
    c.commit(b)
    c.begin(a, "t1")
    c.stage(a, "new", D["e"], D["at"], D["v"], source=D["hi"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["new"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["alt"], state="superseded")
    c.require("exec")


@scenario("main", F, "same-value-late", "control")
def sc_same_value(c, D):
    """Control: the late writer's value equals the rival's, which corroborates and commits."""
    a = D["a"]
    stale_setup(c, D)
    c.stage(a, "late", D["e"], D["at"], D["alt"], source=D["mid"], tx="$t1")
    c.commit(a, "t1")
    c.act(a, "exec", D["irr"], ["late"], tx="t1")
    c.ok(D["e"], D["at"], D["alt"])
    c.require("exec")


@scenario("main", F, "disjoint-validity", "control")
def sc_disjoint(c, D):
    """Control: the late write covers February only, the rival March onwards; validity does
    not overlap, so there is no rival and both commit."""
    a, b = D["a"], D["b"]
    c.begin(a, "t1")
    c.begin(b, "t2")
    c.stage(b, "march", D["e"], D["at"], D["alt"], source=D["mid"],
            valid=["2026-03-01 00:00:00+00", "2026-06-01 00:00:00+00"])
    c.commit(b)
    c.stage(a, "feb", D["e"], D["at"], D["bad"], source=D["mid"],
            valid=["2026-02-01 00:00:00+00", "2026-03-01 00:00:00+00"], tx="$t1", now="2026-02-20 00:00:00+00")
    c.commit(a, "t1")
    c.ok(D["e"], D["at"], D["alt"])
    c.ok(D["e"], D["at"], D["bad"])


@scenario("main", F, "same-transaction-rewrite", "control")
def sc_same_tx(c, D):
    """Control: one transaction writes {v} and then {alt} from the same source; a record
    committed by the same transaction is never stale to it, so {alt} supersedes {v}."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "first", D["e"], D["at"], D["v"], source=D["mid"])
    c.stage(a, "second", D["e"], D["at"], D["alt"], source=D["mid"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["second"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], state="superseded")
    c.require("exec")


@scenario("main", F, "other-attribute", "control")
def sc_other_attr(c, D):
    """Control: an old snapshot writing a different attribute ({at2}) is not stale."""
    a = D["a"]
    stale_setup(c, D)
    c.stage(a, "other", D["e"], D["at2"], D["v2"], source=D["mid"], tx="$t1")
    c.commit(a, "t1")
    c.act(a, "exec", D["irr"], ["other"], tx="t1")
    c.ok(D["e"], D["at2"], D["v2"])
    c.ok(D["e"], D["at"], D["alt"])
    c.require("exec")


# ============================================================ dirty tentative reads

F = "dirty_tentative_read"


def tentative_write(c, D, label="draft", value=None, **kw):
    """{a} opens t1 and stages a team-readable draft it has not committed."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, label, D["e"], D["at"], D["bad"] if value is None else value, source=D["mid"],
            scope="shared", readers=[D["team"]], **kw)


@scenario("main", F, "read-hides-draft")
def d_read_hides(c, D):
    """{b} reads {e}.{at} while {a}'s draft {bad} is uncommitted: it must see the committed
    {v} and not the draft, which {a} then abandons (aborted)."""
    a, b = D["a"], D["b"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    tentative_write(c, D)
    c.begin(b, "t2")
    c.read(b, "peek", D["e"], D["at"])
    c.abort(a, "t1")
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], reason="aborted", state="revoked")
    c.reads("peek", sees=[D["v"]], hides=[D["bad"]])


@scenario("main", F, "gate-window")
def d_gate_window(c, D):
    """{b} calls the irreversible {irr} while {a}'s draft is in flight: blocked
    (in_flight_tentative); after {a} aborts, the same call on committed input is allowed."""
    a, b = D["a"], D["b"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    tentative_write(c, D)
    c.begin(b, "t2")
    c.gate(b, "probe", D["irr"])
    c.act(b, "early", D["irr"], ["truth"])
    c.abort(a, "t1")
    c.act(b, "late", D["irr"], ["truth"], tx="t2")
    c.forbid("early", "in_flight_tentative")
    c.require("late")
    c.gone(D["e"], D["at"], D["bad"], reason="aborted")


@scenario("main", F, "act-on-draft")
def d_act_on_draft(c, D):
    """{b} learns the id of {a}'s draft and cites it as input to {irr}; the gate's
    in_flight_tentative reason comes first and the call is blocked."""
    a, b = D["a"], D["b"]
    tentative_write(c, D)
    c.begin(b, "t2")
    c.act(b, "exec", D["irr"], ["draft"])
    c.abort(a, "t1")
    c.forbid("exec", "in_flight_tentative")
    c.gone(D["e"], D["at"], D["bad"], reason="aborted")


@scenario("main", F, "reversible-on-draft")
def d_reversible_on_draft(c, D):
    """A reversible {rev} passes the gate, but its declared input is {a}'s uncommitted draft,
    which is not visible to {b}: refused (input_not_visible)."""
    a, b = D["a"], D["b"]
    tentative_write(c, D)
    c.begin(b, "t2")
    c.act(b, "notify", D["rev"], ["draft"])
    c.abort(a, "t1")
    c.forbid("notify", "input_not_visible")
    c.gone(D["e"], D["at"], D["bad"], reason="aborted")


@scenario("main", F, "uncommitted-parent")
def d_uncommitted_parent(c, D):
    """{b} derives a belief from {a}'s still-open draft and commits first: the parent is
    tentative in another transaction (uncommitted_parent)."""
    a, b = D["a"], D["b"]
    tentative_write(c, D)
    c.begin(b, "t2")
    c.stage(b, "child", D["e"], "plan", {"use": D["bad"]}, derived_from=["$draft"])
    c.commit(b)
    c.abort(a, "t1")
    c.gone(D["e"], "plan", {"use": D["bad"]}, reason="uncommitted_parent")
    c.gone(D["e"], D["at"], D["bad"], reason="aborted")


@scenario("main", F, "abort-reaches-reader")
def d_abort_reaches(c, D):
    """{b} stages a belief derived from {a}'s draft; {a} aborts, and the cascade revokes {b}'s
    tentative descendant (revoked_parent) before {b} can commit it."""
    a, b = D["a"], D["b"]
    tentative_write(c, D)
    c.begin(b, "t2")
    c.stage(b, "child", D["e"], "plan", {"use": D["bad"]}, derived_from=["$draft"])
    c.abort(a, "t1")
    c.commit(b, "t2")
    c.gone(D["e"], "plan", {"use": D["bad"]}, state="revoked")
    c.retract("draft", state="revoked", reason="aborted")
    c.retract("child", state="revoked", reason="revoked_parent", action="revoked")


@scenario("main", F, "raw-reader")
def d_raw_reader(c, D):
    """A harness-pinned raw_read transaction of {b} may see the draft (its level exposes every
    state), but a belief it derives from it cannot commit while the draft is open
    (uncommitted_parent)."""
    a, b = D["a"], D["b"]
    tentative_write(c, D)
    c.begin(b, "t2", isolation="raw_read")
    c.read(b, "peek", D["e"], D["at"])
    c.stage(b, "child", D["e"], "plan", {"use": D["bad"]}, derived_from=["$draft"])
    c.commit(b)
    c.abort(a, "t1")
    c.reads("peek", sees=[D["bad"]])
    c.gone(D["e"], "plan", {"use": D["bad"]}, reason="uncommitted_parent")


@scenario("main", F, "contested-slot")
def d_contested(c, D):
    """While {a}'s rival draft is in flight on {e}.{at}, a high-tier (causally_stable_read)
    read by {b} must not return the contested committed value, while a medium-tier
    (verified_read) read still does."""
    a, b = D["a"], D["b"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    tentative_write(c, D)
    c.begin(b, "hi_tx", tier="high")
    c.read(b, "stable", D["e"], D["at"])
    c.begin(b, "mid_tx", tier="medium")
    c.read(b, "verified", D["e"], D["at"])
    c.abort(a, "t1")
    c.reads("stable", count=0)
    c.reads("verified", sees=[D["v"]], hides=[D["bad"]])
    c.gone(D["e"], D["at"], D["bad"], reason="aborted")


@scenario("main", F, "own-staging")
def d_own_staging(c, D):
    """{a}'s own uncommitted staging counts as in flight: {irr} before its commit is blocked,
    after its commit allowed."""
    a = D["a"]
    tentative_write(c, D, value=D["v"])
    c.act(a, "early", D["irr"], ["draft"])
    c.commit(a)
    c.act(a, "late", D["irr"], ["draft"], tx="t1")
    c.forbid("early", "in_flight_tentative")
    c.require("late")
    c.ok(D["e"], D["at"], D["v"])


@scenario("main", F, "low-tier-listing")
def d_low_tier(c, D):
    """A low-tier (committed_read) listing of every attribute of {e} by {b}, taken while
    {a}'s draft is in flight, returns only the committed record."""
    a, b = D["a"], D["b"]
    c.seed("truth", a, D["e"], D["at2"], D["v2"], source=D["hi"])
    tentative_write(c, D)
    c.begin(b, "t2", tier="low")
    c.read(b, "all", D["e"])
    c.abort(a, "t1")
    c.reads("all", sees=[D["v2"]], hides=[D["bad"]], count=1)
    c.gone(D["e"], D["at"], D["bad"], reason="aborted")


@scenario("main", F, "after-commit", "control")
def dc_after_commit(c, D):
    """Control: once {a} commits, {b}'s new transaction reads the value and acts on it."""
    a, b = D["a"], D["b"]
    tentative_write(c, D, value=D["v"])
    c.commit(a)
    c.begin(b, "t2")
    c.read(b, "seen", D["e"], D["at"])
    c.act(b, "exec", D["irr"], ["draft"])
    c.reads("seen", sees=[D["v"]])
    c.ok(D["e"], D["at"], D["v"])
    c.require("exec")


@scenario("main", F, "reversible-in-window", "control")
def dc_reversible(c, D):
    """Control: a reversible {rev} on committed input passes the gate even while a draft
    is in flight."""
    a, b = D["a"], D["b"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    tentative_write(c, D)
    c.begin(b, "t2")
    c.act(b, "notify", D["rev"], ["truth"])
    c.abort(a, "t1")
    c.require("notify")
    c.ok(D["e"], D["at"], D["v"])


@scenario("main", F, "other-namespace", "control")
def dc_namespace(c, D):
    """Control: a draft in namespace eu does not block an irreversible call in namespace us
    (the gate looks at its own namespace only)."""
    a, b = D["a"], D["b"]
    c.c["namespace"] = "us"
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    c.begin(a, "t1", namespace="eu")
    c.stage(a, "draft", D["e"], D["at"], D["bad"], source=D["mid"])
    c.begin(b, "t2")
    c.act(b, "exec", D["irr"], ["truth"])
    c.abort(a, "t1")
    c.require("exec")
    c.ok(D["e"], D["at"], D["v"])


@scenario("main", F, "own-draft-visible", "control")
def dc_own_draft(c, D):
    """Control: a transaction sees its own tentative record, commits it, and acts on it."""
    a = D["a"]
    tentative_write(c, D, value=D["v"])
    c.read(a, "mine", D["e"], D["at"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["draft"], tx="t1")
    c.reads("mine", sees=[D["v"]])
    c.ok(D["e"], D["at"], D["v"])
    c.require("exec")


@scenario("main", F, "abort-clears-window", "control")
def dc_abort_clears(c, D):
    """Control: after {a} aborts its draft nothing is in flight, and {b}'s irreversible call
    on committed input is allowed."""
    a, b = D["a"], D["b"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    tentative_write(c, D)
    c.abort(a, "t1")
    c.begin(b, "t2")
    c.act(b, "exec", D["irr"], ["truth"])
    c.require("exec")
    c.ok(D["e"], D["at"], D["v"])


# ============================================================ semantic conflict

F = "semantic_conflict"


@scenario("main", F, "lower-authority")
def k_lower(c, D):
    """{e}.{at} = {v} is committed from {hi}; {a} asserts {bad} from {mid}: lower authority
    loses (lower_authority) and {irr} citing it is refused."""
    a = D["a"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "claim", D["e"], D["at"], D["bad"], source=D["mid"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["claim"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], reason="lower_authority")
    c.forbid("exec", "input_not_visible")


@scenario("main", F, "needs-review")
def k_review(c, D):
    """{mid} and {peer} carry equal authority and disagree: the newcomer is held for review
    (needs_review), the committed value stays, and the held value cannot be acted on."""
    a, b = D["a"], D["b"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["mid"])
    c.begin(b, "t1")
    c.stage(b, "claim", D["e"], D["at"], D["bad"], source=D["peer"])
    c.commit(b)
    c.begin(b, "t2")
    c.act(b, "exec", D["irr"], ["claim"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], reason="needs_review")
    c.forbid("exec", "input_not_visible")


@scenario("main", F, "review-rejected")
def k_reject(c, D):
    """A needs_review value and a belief derived from it: the harness rejects the value, which
    revokes it and, by cascade, the derived belief."""
    a = D["a"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["mid"])
    c.begin(a, "t1")
    c.stage(a, "claim", D["e"], D["at"], D["bad"], source=D["peer"])
    c.commit(a)
    c.resolve("claim", False)
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], state="revoked")
    c.retract("claim", state="revoked")


@scenario("main", F, "wrong-old-value")
def k_wrong_old(c, D):
    """An old low-authority {bad} is superseded by {hi}'s {v}; an agent that still cites the
    superseded record for {irr} is refused."""
    a, b = D["a"], D["b"]
    c.seed("old", b, D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.9, writers=[D["team"]])
    c.begin(a, "t1")
    c.stage(a, "fix", D["e"], D["at"], D["v"], source=D["hi"])
    c.commit(a)
    c.begin(b, "t2")
    c.act(b, "exec", D["irr"], ["old"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], state="superseded")
    c.forbid("exec", "input_not_visible")


@scenario("main", F, "canonical-number")
def k_canonical(c, D):
    """Values compare by canonical text: {peer} reporting 1.0 against a committed 1 from {mid}
    is a different value at equal authority, so it needs review."""
    a = D["a"]
    c.seed("truth", a, D["e"], "quantity", 1, source=D["mid"])
    c.begin(a, "t1")
    c.stage(a, "claim", D["e"], "quantity", 1.0, source=D["peer"])
    c.commit(a)
    c.ok(D["e"], "quantity", 1)
    c.gone(D["e"], "quantity", 1.0, reason="needs_review")


@scenario("main", F, "not-a-writer")
def k_not_writer(c, D):
    """{x} owns {e}.{at} = {v} with writers limited to itself; {a}'s higher-authority value
    would supersede it but {a} is not among its writers (write_not_permitted)."""
    a, x = D["a"], D["x"]
    c.seed("truth", x, D["e"], D["at"], D["v"], source=D["mid"], scope="public", writers=[x])
    c.begin(a, "t1")
    c.stage(a, "claim", D["e"], D["at"], D["bad"], source=D["hi"])
    c.commit(a)
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], reason="write_not_permitted")
    c.perm("claim", "write_not_permitted")


@scenario("main", F, "strictest-rival")
def k_strictest(c, D):
    """Against two rivals with disjoint validity, one from {hi} (lower_authority) and one from
    {peer} (needs_review), the strictest outcome applies: lower_authority."""
    a, b = D["a"], D["b"]
    c.seed("jan", b, D["e"], D["at"], D["v"], source=D["hi"],
           valid=["2026-01-01 00:00:00+00", "2026-02-01 00:00:00+00"], now="2026-01-15 00:00:00+00")
    c.seed("feb", b, D["e"], D["at"], D["alt"], source=D["peer"],
           valid=["2026-02-01 00:00:00+00", "2026-04-01 00:00:00+00"], now=CLOCK)
    c.begin(a, "t1")
    c.stage(a, "claim", D["e"], D["at"], D["bad"], source=D["mid"],
            valid=["2026-01-01 00:00:00+00", "2026-04-01 00:00:00+00"])
    c.commit(a)
    c.ok(D["e"], D["at"], D["v"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="lower_authority")


@scenario("main", F, "accept-supersedes")
def k_accept(c, D):
    """The harness accepts a needs_review value: it commits and the rival must end superseded
    (single truth), after which {irr} on the accepted value is allowed."""
    a = D["a"]
    c.seed("old", a, D["e"], D["at"], D["bad"], source=D["mid"])
    c.begin(a, "t1")
    c.stage(a, "claim", D["e"], D["at"], D["v"], source=D["peer"])
    c.commit(a)
    c.resolve("claim", True)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["claim"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], state="superseded")
    c.require("exec")


@scenario("main", F, "conflict-and-summary")
def k_summary(c, D):
    """A losing value (lower_authority) and the summary derived from it in one transaction:
    the summary fails with inactive_parent."""
    a = D["a"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "claim", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.9)
    c.stage(a, "sum", D["e"], "summary", "now %s" % D["bad"], kind="summary", derived_from=["$claim"])
    c.commit(a)
    c.gone(D["e"], D["at"], D["bad"], reason="lower_authority")
    c.gone(D["e"], "summary", "now %s" % D["bad"], reason="inactive_parent")


@scenario("main", F, "two-sources-one-tx")
def k_one_tx(c, D):
    """One transaction records {v} from {mid} and then {bad} from {peer}: the first commits;
    the second meets it as an active rival of equal authority from another source
    (needs_review)."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "first", D["e"], D["at"], D["v"], source=D["mid"])
    c.stage(a, "second", D["e"], D["at"], D["bad"], source=D["peer"])
    c.commit(a)
    c.commit(a)
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], reason="needs_review")


@scenario("main", F, "corroboration", "control")
def kc_corroborate(c, D):
    """Control: {peer} repeating the committed value corroborates it and commits."""
    a = D["a"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["mid"])
    c.begin(a, "t1")
    c.stage(a, "same", D["e"], D["at"], D["v"], source=D["peer"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["same"])
    c.ok(D["e"], D["at"], D["v"])
    c.require("exec")


@scenario("main", F, "same-source-update", "control")
def kc_update(c, D):
    """Control: a new value from the same source at equal authority supersedes the old one."""
    a = D["a"]
    c.seed("old", a, D["e"], D["at"], D["v"], source=D["mid"])
    c.begin(a, "t1")
    c.stage(a, "new", D["e"], D["at"], D["alt"], source=D["mid"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["new"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], state="superseded")
    c.require("exec")


@scenario("main", F, "disjoint-validity", "control")
def kc_disjoint(c, D):
    """Control: different values for disjoint periods are not in conflict."""
    a = D["a"]
    c.seed("old", a, D["e"], D["at"], D["v"], source=D["hi"],
           valid=["2026-01-01 00:00:00+00", "2026-03-01 00:00:00+00"], now="2026-02-01 00:00:00+00")
    c.begin(a, "t1")
    c.stage(a, "new", D["e"], D["at"], D["alt"], source=D["mid"],
            valid=["2026-03-01 00:00:00+00", "2026-06-01 00:00:00+00"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["new"])
    c.ok(D["e"], D["at"], D["v"])
    c.ok(D["e"], D["at"], D["alt"])
    c.require("exec")


@scenario("main", F, "team-writer", "control")
def kc_writer(c, D):
    """Control: {b} owns the rival but lists {team} as writers; {a}, a team member, supersedes
    it with a higher-authority value."""
    a, b = D["a"], D["b"]
    c.seed("old", b, D["e"], D["at"], D["v"], source=D["mid"], writers=[D["team"]])
    c.begin(a, "t1")
    c.stage(a, "new", D["e"], D["at"], D["alt"], source=D["hi"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["new"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], state="superseded")
    c.require("exec")


@scenario("main", F, "key-order", "control")
def kc_key_order(c, D):
    """Control: two JSON objects with the same keys in a different order have the same
    canonical text: corroboration, not conflict."""
    a = D["a"]
    c.seed("truth", a, D["e"], "terms", {"currency": "EUR", "amount": 100}, source=D["mid"])
    c.begin(a, "t1")
    c.stage(a, "same", D["e"], "terms", {"amount": 100, "currency": "EUR"}, source=D["peer"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["same"])
    c.ok(D["e"], "terms", {"amount": 100, "currency": "EUR"})
    c.require("exec")


# ============================================================ permission laundering

F = "permission_laundering"


def private_seed(c, D, agent=None, label="secret", **kw):
    """A private record of {a} (or agent): readable by its owner only."""
    c.seed(label, agent or D["a"], D["pe"], D["pa"], D["pv"], source=D["hi"], scope="private",
           readers=kw.pop("readers", []), **kw)


@scenario("main", F, "private-to-shared")
def l_private_shared(c, D):
    """{a} derives a team-shared note from its private {pa} record: a private parent cannot
    have a shared child (permission_laundering), and {b}'s action on the note is refused."""
    a, b = D["a"], D["b"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.stage(a, "note", D["se"], D["sa"], "customer detail: " + D["pv"], derived_from=["$secret"],
            scope="shared", readers=[D["team"]])
    c.commit(a)
    c.begin(b, "t2")
    c.act(b, "exec", D["rev"], ["note"])
    c.perm("note")
    c.gone(D["se"], D["sa"], "customer detail: " + D["pv"], reason="permission_laundering")
    c.forbid("exec", "input_not_visible")


@scenario("main", F, "widened-readers")
def l_widen(c, D):
    """A shared record readable by {a} and {b} feeds a shared child that adds {x} as reader:
    a child may not widen its parents' audience (permission_laundering)."""
    a, b, x = D["a"], D["b"], D["x"]
    c.seed("src", a, D["pe"], D["pa"], D["pv"], source=D["hi"], scope="shared", readers=[a, b])
    c.begin(a, "t1")
    c.stage(a, "copy", D["se"], D["sa"], D["pv"], derived_from=["$src"], scope="shared", readers=[a, b, x])
    c.commit(a)
    c.perm("copy")
    c.gone(D["se"], D["sa"], D["pv"], reason="permission_laundering")


@scenario("main", F, "shared-to-public")
def l_public(c, D):
    """A team-shared record feeds a public post: shared parent, public child
    (permission_laundering)."""
    a = D["a"]
    c.seed("src", a, D["pe"], D["pa"], D["pv"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "post", D["se"], D["sa"], "update: " + D["pv"], derived_from=["$src"], scope="public")
    c.commit(a)
    c.perm("post")
    c.gone(D["se"], D["sa"], "update: " + D["pv"], reason="permission_laundering")


@scenario("main", F, "unreadable-parent")
def l_unreadable(c, D):
    """{x} cites {a}'s private record as a parent; staging requires being able to read every
    declared parent, and one it may not read is refused like one that does not exist
    (undefined_object, so the error does not reveal it), writing nothing."""
    x = D["x"]
    private_seed(c, D)
    c.begin(x, "t1")
    c.stage(x, "steal", D["se"], D["sa"], "copied", derived_from=["$secret"], scope="public",
            expect_error="42704")
    c.perm_err("steal", "42704")


@scenario("main", F, "summary-of-private")
def l_summary(c, D):
    """A shared summary built from two private beliefs of {a}: the summary kind is no
    exemption (permission_laundering)."""
    a = D["a"]
    private_seed(c, D)
    c.seed("secret2", a, D["pe"], "notes", "internal only", source=D["hi"], scope="private", readers=[])
    c.begin(a, "t1")
    c.stage(a, "sum", D["se"], D["sa"], "summary of %s" % D["pe"], kind="summary",
            derived_from=["$secret", "$secret2"], scope="shared", readers=[D["team"]])
    c.commit(a)
    c.perm("sum")
    c.gone(D["se"], D["sa"], "summary of %s" % D["pe"], reason="permission_laundering")


@scenario("main", F, "two-hop")
def l_two_hop(c, D):
    """Private record, then a private derived belief (fine), then a shared child of that
    belief: the hop through a private intermediate does not launder."""
    a = D["a"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.stage(a, "mid", D["pe"], "digest", "digest of " + D["pa"], derived_from=["$secret"])
    c.stage(a, "out", D["se"], D["sa"], "digest of " + D["pa"], derived_from=["$mid"],
            scope="shared", readers=[D["team"]])
    c.commit(a)
    c.ok(D["pe"], "digest", "digest of " + D["pa"])
    c.perm("out")
    c.gone(D["se"], D["sa"], "digest of " + D["pa"], reason="permission_laundering")


@scenario("main", F, "team-private-copy")
def l_team_copy(c, D):
    """A private record readable by {team} copied as a public shared_copy: scope widens from
    private to public (permission_laundering)."""
    b = D["b"]
    private_seed(c, D, readers=[D["team"]])
    c.begin(b, "t1")
    c.stage(b, "copy", D["se"], D["sa"], D["pv"], kind="shared_copy", derived_from=["$secret"], scope="public")
    c.commit(b)
    c.perm("copy")
    c.gone(D["se"], D["sa"], D["pv"], reason="permission_laundering")


@scenario("main", F, "mixed-parents")
def l_mixed(c, D):
    """A public child of one public and one private parent: one narrower parent is enough
    (permission_laundering)."""
    a = D["a"]
    private_seed(c, D)
    c.seed("pub", a, D["e"], D["at2"], D["v2"], source=D["hi"], scope="public")
    c.begin(a, "t1")
    c.stage(a, "post", D["se"], D["sa"], {"public": D["v2"], "private": D["pv"]},
            derived_from=["$pub", "$secret"], scope="public")
    c.commit(a)
    c.perm("post")
    c.gone(D["se"], D["sa"], {"public": D["v2"], "private": D["pv"]}, reason="permission_laundering")


@scenario("main", F, "foreign-overwrite")
def l_overwrite(c, D):
    """{b} tries to overwrite {x}'s public record with a higher-authority value, but the
    record's writers are [{x}] only (write_not_permitted); revoking {x}'s record instead is a
    harness operation, refused to {b} (insufficient_privilege)."""
    b, x = D["b"], D["x"]
    c.seed("owned", x, D["se"], D["sa"], "original text", source=D["lo"], confidence=0.9,
           scope="public", writers=[x])
    c.begin(b, "t1")
    c.stage(b, "over", D["se"], D["sa"], "overwritten text", source=D["hi"], scope="public")
    c.commit(b)
    c.revoke("owned", agent=b, label="takedown", expect_error="42501")
    c.ok(D["se"], D["sa"], "original text")
    c.perm_err("takedown")
    c.perm("over", "write_not_permitted")
    c.gone(D["se"], D["sa"], "overwritten text", reason="write_not_permitted")


@scenario("main", F, "laundered-index")
def l_index(c, D):
    """A public index entry over {a}'s private record is quarantined
    (permission_laundering), and an external-tier action citing it is refused."""
    a = D["a"]
    private_seed(c, D)
    c.seed("plan", a, D["e"], D["at"], D["v"], source=D["hi"], tier="external_action")
    c.begin(a, "t1")
    c.stage(a, "idx", D["se"], "index", {"key": D["pa"], "ref": D["pe"]}, kind="index_entry",
            derived_from=["$secret"], scope="public")
    c.commit(a)
    c.begin(a, "t2", tier="external_action")
    c.act(a, "exec", D["irr"], ["plan", "idx"])
    c.perm("idx")
    c.forbid("exec", "input_not_visible")


@scenario("main", F, "private-to-private", "control")
def lc_private(c, D):
    """Control: a private child of a private parent commits and is actionable by its owner."""
    a = D["a"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.stage(a, "own", D["pe"], "digest", "digest of " + D["pa"], derived_from=["$secret"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["own"])
    c.ok(D["pe"], "digest", "digest of " + D["pa"])
    c.require("exec")


@scenario("main", F, "narrowed-readers", "control")
def lc_narrow(c, D):
    """Control: a shared child readable by fewer roles than its parent commits."""
    a, b = D["a"], D["b"]
    c.seed("src", a, D["pe"], D["pa"], D["pv"], source=D["hi"], scope="shared", readers=[a, b])
    c.begin(a, "t1")
    c.stage(a, "copy", D["se"], D["sa"], D["pv"], derived_from=["$src"], scope="shared", readers=[a])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["copy"])
    c.ok(D["se"], D["sa"], D["pv"])
    c.require("exec")


@scenario("main", F, "public-to-public", "control")
def lc_public(c, D):
    """Control: {x}, outside the team, republishes public information publicly."""
    x = D["x"]
    c.seed("pub", x, D["e"], D["at2"], D["v2"], source=D["hi"], scope="public")
    c.begin(x, "t1")
    c.stage(x, "post", D["se"], D["sa"], "%s: %s" % (D["at2"], D["v2"]), derived_from=["$pub"], scope="public")
    c.commit(x)
    c.act(x, "exec", D["irr"], ["post"])
    c.ok(D["se"], D["sa"], "%s: %s" % (D["at2"], D["v2"]))
    c.require("exec")


@scenario("main", F, "same-team", "control")
def lc_team(c, D):
    """Control: a team-shared child of a team-shared parent commits, and {b}, a team member,
    reads it and acts on it."""
    a, b = D["a"], D["b"]
    c.seed("src", a, D["pe"], D["pa"], D["pv"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "note", D["se"], D["sa"], "team note", derived_from=["$src"], scope="shared", readers=[D["team"]])
    c.commit(a)
    c.begin(b, "t2")
    c.read(b, "see", D["se"], D["sa"])
    c.act(b, "exec", D["irr"], ["note"])
    c.ok(D["se"], D["sa"], "team note")
    c.reads("see", sees=["team note"])
    c.require("exec")


@scenario("main", F, "permitted-writer", "control")
def lc_writer(c, D):
    """Control: {x} owns a public record and lists {b} among its writers; {b}'s higher-authority
    correction supersedes it."""
    b, x = D["b"], D["x"]
    c.seed("owned", x, D["se"], D["sa"], "original text", source=D["lo"], confidence=0.9,
           scope="public", writers=[x, b])
    c.begin(b, "t1")
    c.stage(b, "fix", D["se"], D["sa"], "corrected text", source=D["hi"], scope="public")
    c.commit(b)
    c.act(b, "exec", D["irr"], ["fix"])
    c.ok(D["se"], D["sa"], "corrected text")
    c.gone(D["se"], D["sa"], "original text", state="superseded")
    c.require("exec")


# ============================================================ cascading rollback

F = "cascading_rollback"


def root_and_chain(c, D, kinds, agent=None):
    """{a} commits a root on {e}.{at} and a chain of children of the given kinds (labels n1..)."""
    a = agent or D["a"]
    c.begin(a, "t1")
    c.stage(a, "root", D["e"], D["at"], D["bad"], source=D["mid"], scope="shared", readers=[D["team"]])
    prev = "root"
    for i, k in enumerate(kinds, 1):
        c.stage(a, "n%d" % i, D["e"], "derived_%d" % i, "step %d from %s" % (i, D["bad"]), kind=k,
                derived_from=["$" + prev], scope="shared", readers=[D["team"]])
        prev = "n%d" % i
    c.commit(a)


def expect_chain(c, D, kinds):
    for i, k in enumerate(kinds, 1):
        if k == "belief":
            c.retract("n%d" % i, state="revoked", reason="revoked_parent", action="revoked", rows=1)
        else:
            c.retract("n%d" % i, state="quarantined", reason="invalidated", action="quarantined",
                      registered=True, rows=1)


@scenario("main", F, "belief-chain")
def r_chain(c, D):
    """Revoking a root walks a chain of two derived beliefs: both are revoked with
    revoked_parent, each logged once; revoking the root a second time writes nothing."""
    root_and_chain(c, D, ["belief", "belief"])
    c.revoke("root", note="source retracted")
    c.revoke("root", note="retracted again")
    c.retract("root", state="revoked", reason="revoked", action="revoked", rows=1)
    expect_chain(c, D, ["belief", "belief"])
    c.gone(D["e"], D["at"], D["bad"], state="revoked")


@scenario("main", F, "summary-quarantined")
def r_summary(c, D):
    """A summary derived from two roots: revoking the first quarantines it (invalidated) and
    registers it to be rebuilt; revoking the second leaves it quarantined and registered
    with no new log row."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "root", D["e"], D["at"], D["bad"], source=D["mid"])
    c.stage(a, "root2", D["e"], D["at2"], D["v2"], source=D["mid"])
    c.stage(a, "n1", D["e"], "summary", "%s and %s" % (D["bad"], D["v2"]), kind="summary",
            derived_from=["$root", "$root2"])
    c.commit(a)
    c.revoke("root")
    c.revoke("root2")
    c.retract("root", action="revoked", rows=1)
    c.retract("root2", action="revoked", rows=1)
    c.retract("n1", state="quarantined", reason="invalidated", action="quarantined", registered=True, rows=1)


@scenario("main", F, "compensation")
def r_compensate(c, D):
    """A reversible {rev} executed on a later-revoked belief gets a compensation obligation
    naming {comp}."""
    a = D["a"]
    root_and_chain(c, D, ["belief"])
    c.act(a, "notify", D["rev"], ["n1"])
    c.revoke("root")
    c.require("notify")
    c.retract("notify", state="revoked", action="compensated", compensator=D["comp"])
    expect_chain(c, D, ["belief"])


@scenario("main", F, "leak-logged")
def r_leak(c, D):
    """An irreversible {irr} executed on a later-revoked belief cannot be compensated; the
    cascade logs it as leaked."""
    a = D["a"]
    root_and_chain(c, D, ["belief"])
    c.act(a, "exec", D["irr"], ["n1"])
    c.revoke("root")
    c.require("exec")
    c.retract("exec", state="revoked", action="leaked")
    expect_chain(c, D, ["belief"])


@scenario("main", F, "foreign-tentative")
def r_foreign(c, D):
    """{b} has a tentative belief derived from the root in its open transaction when the root
    is revoked: the cascade revokes it, so {b}'s commit cannot admit it."""
    b = D["b"]
    root_and_chain(c, D, [])
    c.begin(b, "t2")
    c.stage(b, "child", D["e"], "plan", "act on " + str(D["bad"]), derived_from=["$root"])
    c.revoke("root")
    c.commit(b, "t2")
    c.retract("child", state="revoked", reason="revoked_parent")
    c.gone(D["e"], "plan", "act on " + str(D["bad"]), state="revoked")


@scenario("main", F, "abort-cascade")
def r_abort(c, D):
    """{a} aborts a transaction whose shared draft {b} had already built on: the draft is
    revoked (aborted) and {b}'s descendant with it (revoked_parent)."""
    a, b = D["a"], D["b"]
    c.begin(a, "t1")
    c.stage(a, "draft", D["e"], D["at"], D["bad"], source=D["mid"], scope="shared", readers=[D["team"]])
    c.begin(b, "t2")
    c.stage(b, "child", D["e"], "plan", "act on " + str(D["bad"]), derived_from=["$draft"])
    c.abort(a, "t1")
    c.retract("draft", state="revoked", reason="aborted", action="revoked")
    c.retract("child", state="revoked", reason="revoked_parent", action="revoked")


@scenario("main", F, "registry-blocks")
def r_registry(c, D):
    """A summary quarantined by a cascade sits in the revocation registry; a new belief that
    cites it as parent fails revoked_parent."""
    b = D["b"]
    root_and_chain(c, D, ["summary"])
    c.revoke("root")
    c.begin(b, "t2")
    c.stage(b, "reuse", D["e"], "decision", "based on summary", derived_from=["$n1"])
    c.commit(b)
    expect_chain(c, D, ["summary"])
    c.gone(D["e"], "decision", "based on summary", reason="revoked_parent")


@scenario("main", F, "diamond")
def r_diamond(c, D):
    """Root, two children, and a grandchild derived from both: every node is repaired, and
    the grandchild is logged once."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "root", D["e"], D["at"], D["bad"], source=D["mid"])
    c.stage(a, "l", D["e"], "left", "L", derived_from=["$root"])
    c.stage(a, "r", D["e"], "right", "R", derived_from=["$root"])
    c.stage(a, "g", D["e"], "joined", "LR", derived_from=["$l", "$r"])
    c.commit(a)
    c.revoke("root")
    for n in ("l", "r", "g"):
        c.retract(n, state="revoked", reason="revoked_parent", action="revoked", rows=1)
    c.gone(D["e"], "joined", "LR", state="revoked")


@scenario("main", F, "act-after-cascade")
def r_act_after(c, D):
    """After the cascade, {b} still holds the id of a revoked descendant and cites it for
    {irr}: refused (revoked_parent: a revoked input is refused at every tier and level,
    SPEC §16 "Act inputs")."""
    b = D["b"]
    root_and_chain(c, D, ["belief", "belief"])
    c.revoke("root")
    c.begin(b, "t2")
    c.act(b, "exec", D["irr"], ["n2"])
    c.forbid("exec", "revoked_parent")
    expect_chain(c, D, ["belief", "belief"])


@scenario("main", F, "mixed-views")
def r_views(c, D):
    """A root with a profile, an index entry and a belief as direct children: the two views
    are quarantined and registered, the belief is revoked."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "root", D["e"], D["at"], D["bad"], source=D["mid"])
    c.stage(a, "prof", D["e"], "profile", {"key": D["at"]}, kind="profile", derived_from=["$root"])
    c.stage(a, "idx", D["e"], "index", {"term": D["at"]}, kind="index_entry", derived_from=["$root"])
    c.stage(a, "bel", D["e"], "flag", True, derived_from=["$root"])
    c.commit(a)
    c.revoke("root")
    c.retract("prof", state="quarantined", reason="invalidated", action="quarantined", registered=True)
    c.retract("idx", state="quarantined", reason="invalidated", action="quarantined", registered=True)
    c.retract("bel", state="revoked", reason="revoked_parent", action="revoked")


@scenario("main", F, "sibling-untouched", "control")
def rc_sibling(c, D):
    """Control: revoking one root leaves a belief derived from another root active and
    actionable."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "root1", D["e"], D["at"], D["bad"], source=D["mid"])
    c.stage(a, "root2", D["e"], D["at2"], D["v2"], source=D["mid"])
    c.stage(a, "c1", D["e"], "derived_1", "from root1", derived_from=["$root1"])
    c.stage(a, "c2", D["e"], "derived_2", "from root2", derived_from=["$root2"])
    c.commit(a)
    c.revoke("root1")
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["c2"])
    c.ok(D["e"], "derived_2", "from root2")
    c.ok(D["e"], D["at2"], D["v2"])
    c.retract("c1", state="revoked")
    c.require("exec")


@scenario("main", F, "leaf-only", "control")
def rc_leaf(c, D):
    """Control: revoking a leaf repairs nothing upstream; its parent stays active."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "root", D["e"], D["at"], D["v"], source=D["mid"])
    c.stage(a, "leaf", D["e"], "note", "temporary", derived_from=["$root"])
    c.commit(a)
    c.revoke("leaf", agent=a)
    c.act(a, "exec", D["irr"], ["root"], tx="t1")
    c.ok(D["e"], D["at"], D["v"])
    c.retract("leaf", state="revoked", reason="revoked", action="revoked")
    c.require("exec")


@scenario("main", F, "rebuild", "control")
def rc_rebuild(c, D):
    """Control: after a summary is quarantined, a rebuilt summary derived from a new, valid
    root commits and is actionable."""
    a = D["a"]
    root_and_chain(c, D, ["summary"])
    c.revoke("root")
    c.begin(a, "t2")
    c.stage(a, "root2", D["e"], D["at"], D["v"], source=D["mid"])
    c.stage(a, "sum2", D["e"], "summary_v2", "rebuilt from %s" % D["v"], kind="summary", derived_from=["$root2"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["sum2"])
    c.ok(D["e"], "summary_v2", "rebuilt from %s" % D["v"])
    c.ok(D["e"], D["at"], D["v"])
    c.require("exec")


@scenario("main", F, "same-entity-other-slot", "control")
def rc_other_slot(c, D):
    """Control: revoking {e}.{at} leaves an independent record on {e}.{at2} alone."""
    a = D["a"]
    c.seed("keep", a, D["e"], D["at2"], D["v2"], source=D["hi"])
    root_and_chain(c, D, ["belief"])
    c.revoke("root")
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["keep"])
    c.ok(D["e"], D["at2"], D["v2"])
    c.require("exec")
    expect_chain(c, D, ["belief"])


@scenario("main", F, "abort-own-only", "control")
def rc_abort_own(c, D):
    """Control: {a} aborts its own draft; {b}'s independently committed record survives and
    {b}'s action on it is allowed."""
    a, b = D["a"], D["b"]
    c.begin(b, "t2")
    c.stage(b, "mine", D["e"], D["at2"], D["v2"], source=D["mid"])
    c.commit(b)
    c.begin(a, "t1")
    c.stage(a, "draft", D["e"], D["at"], D["bad"], source=D["mid"])
    c.abort(a, "t1")
    c.act(b, "exec", D["irr"], ["mine"], tx="t2")
    c.ok(D["e"], D["at2"], D["v2"])
    c.require("exec")
    c.retract("draft", state="revoked", reason="aborted")



# ============================================================ hardened: source scope

F = "source_scope"


def transcribe(c, D, agent, label, value, scope="shared", readers="team", **kw):
    """Stage a record whose content came from a read, without declaring that parent."""
    if readers == "team":
        readers = [D["team"]]
    c.stage(agent, label, D["se"], D["sa"], value, scope=scope, readers=readers, **kw)


@scenario("hardened", F, "private-into-shared")
def ss_private_shared(c, D):
    """{a} reads its private {pa} through memtx.read, types it into a team-shared note
    without declaring the parent, commits, and calls {irr} on the note: the read set makes
    the private record an implicit parent (permission_laundering) and the action is refused."""
    a = D["a"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    transcribe(c, D, a, "note", "FYI: " + D["pv"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["note"])
    c.reads("peek", sees=[D["pv"]])
    c.perm("note")
    c.forbid("exec", "input_not_visible")
    c.gone(D["se"], D["sa"], "FYI: " + D["pv"], reason="permission_laundering")


@scenario("hardened", F, "private-into-public-summary")
def ss_public_summary(c, D):
    """{a} reads a private record and publishes a public summary of it with no declared
    parent; the read set catches it, and the summary's reversible publication is refused."""
    a = D["a"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"])
    transcribe(c, D, a, "sum", "summary: " + D["pv"], scope="public", readers=None, kind="summary")
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "publish", D["rev"], ["sum"])
    c.perm("sum")
    c.forbid("publish", "input_not_visible")


@scenario("hardened", F, "widen-audience")
def ss_widen(c, D):
    """A record shared with {a} alone is read and transcribed into a note shared with the
    whole team: the read parent's readers do not cover the note's (permission_laundering)."""
    a = D["a"]
    c.seed("src", a, D["pe"], D["pa"], D["pv"], source=D["hi"], scope="shared", readers=[a])
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    transcribe(c, D, a, "note", D["pv"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["note"])
    c.perm("note")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "team-private-to-index")
def ss_team_index(c, D):
    """{b} reads a private record that {team} may read and writes a public index entry
    from it: private content into a public view (permission_laundering)."""
    b = D["b"]
    private_seed(c, D, readers=[D["team"]])
    c.begin(b, "t1")
    c.read(b, "peek", D["pe"], D["pa"])
    transcribe(c, D, b, "idx", {"term": D["pv"]}, scope="public", readers=None, kind="index_entry")
    c.commit(b)
    c.begin(b, "t2")
    c.act(b, "exec", D["irr"], ["idx"])
    c.perm("idx")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "declared-decoy")
def ss_decoy(c, D):
    """{a} reads a public record and a private one, then declares only the public one as
    parent of a shared note carrying both: the undeclared private read still counts."""
    a = D["a"]
    private_seed(c, D)
    c.seed("pub", a, D["e"], D["at2"], D["v2"], source=D["hi"], scope="public")
    c.begin(a, "t1")
    c.read(a, "p1", D["e"], D["at2"])
    c.read(a, "p2", D["pe"], D["pa"])
    transcribe(c, D, a, "note", {"public": D["v2"], "detail": D["pv"]}, derived_from=["$pub"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["note"])
    c.perm("note")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "reversible-broadcast")
def ss_reversible(c, D):
    """Transcription of a private record into a team note followed by a reversible {rev}:
    reversibility does not excuse an invisible input."""
    a = D["a"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    transcribe(c, D, a, "note", "forwarding: " + D["pv"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "send", D["rev"], ["note"])
    c.perm("note")
    c.forbid("send", "input_not_visible")


@scenario("hardened", F, "external-tier")
def ss_external(c, D):
    """At the external_action tier {a} reads a private record, writes a shared note from it
    and cites the note for {irr}; the note never becomes action_safe."""
    a = D["a"]
    private_seed(c, D, tier="external_action")
    c.seed("plan", a, D["e"], D["at"], D["v"], source=D["hi"], tier="external_action")
    c.begin(a, "t1", tier="external_action")
    c.read(a, "peek", D["pe"], D["pa"])
    transcribe(c, D, a, "note", "for the partner: " + D["pv"])
    c.commit(a)
    c.begin(a, "t2", tier="external_action")
    c.act(a, "exec", D["irr"], ["plan", "note"])
    c.reads("peek", sees=[D["pv"]])
    c.perm("note")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "colleague-acts")
def ss_colleague(c, D):
    """{a} transcribes its private record into a shared_copy for {b}; {b} then acts on the
    copy in its own transaction and is refused, because the copy was quarantined."""
    a, b = D["a"], D["b"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    transcribe(c, D, a, "copy", D["pv"], kind="shared_copy")
    c.commit(a)
    c.begin(b, "t2")
    c.read(b, "look", D["se"], D["sa"])
    c.act(b, "exec", D["irr"], ["copy"])
    c.perm("copy")
    c.reads("look", count=0)
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "split-write")
def ss_split(c, D):
    """After reading a private record {a} writes a private digest (fine) and a team note
    (laundering) in one transaction: one commits, the other is quarantined."""
    a = D["a"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    c.stage(a, "digest", D["pe"], "digest", "digest of " + D["pa"])
    transcribe(c, D, a, "note", "digest of " + D["pa"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["note"])
    c.ok(D["pe"], "digest", "digest of " + D["pa"])
    c.perm("note")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "outsider-reader")
def ss_outsider(c, D):
    """A team-shared record is read and transcribed into a note that also names {x} (outside
    the team) as reader: the audience widens (permission_laundering)."""
    a, x = D["a"], D["x"]
    c.seed("src", a, D["pe"], D["pa"], D["pv"], source=D["hi"])
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    transcribe(c, D, a, "note", "see: " + D["pv"], readers=[D["team"], x])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["note"])
    c.perm("note")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "private-stays-private", "control")
def ssc_private(c, D):
    """Control: reading a private record and writing a private note from it commits and is
    actionable (a blanket refusal of transcription fails this)."""
    a = D["a"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    c.stage(a, "note", D["pe"], "reminder", "check " + D["pa"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["note"])
    c.ok(D["pe"], "reminder", "check " + D["pa"])
    c.require("exec")


@scenario("hardened", F, "team-to-team", "control")
def ssc_team(c, D):
    """Control: a team-shared record transcribed into a note for the same team commits."""
    a = D["a"]
    c.seed("src", a, D["pe"], D["pa"], D["pv"], source=D["hi"])
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    transcribe(c, D, a, "note", "team copy: " + D["pv"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["note"])
    c.ok(D["se"], D["sa"], "team copy: " + D["pv"])
    c.require("exec")


@scenario("hardened", F, "public-to-public", "control")
def ssc_public(c, D):
    """Control: {x} reads public information and republishes it publicly."""
    x = D["x"]
    c.seed("pub", x, D["e"], D["at2"], D["v2"], source=D["hi"], scope="public")
    c.begin(x, "t1")
    c.read(x, "peek", D["e"], D["at2"])
    transcribe(c, D, x, "post", "%s is %s" % (D["at2"], D["v2"]), scope="public", readers=None)
    c.commit(x)
    c.act(x, "exec", D["irr"], ["post"])
    c.ok(D["se"], D["sa"], "%s is %s" % (D["at2"], D["v2"]))
    c.require("exec")


@scenario("hardened", F, "fresh-transaction", "control")
def ssc_fresh(c, D):
    """Control: the read set belongs to one transaction; after reading a private record in
    t1, {a} writes a team note from public information in a fresh t2, which commits."""
    a = D["a"]
    private_seed(c, D)
    c.seed("pub", a, D["e"], D["at2"], D["v2"], source=D["hi"], scope="public")
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    c.commit(a)
    c.begin(a, "t2")
    c.read(a, "pub_read", D["e"], D["at2"])
    transcribe(c, D, a, "note", "%s: %s" % (D["at2"], D["v2"]))
    c.commit(a)
    c.act(a, "exec", D["irr"], ["note"])
    c.ok(D["se"], D["sa"], "%s: %s" % (D["at2"], D["v2"]))
    c.require("exec")


@scenario("hardened", F, "narrower-audience", "control")
def ssc_narrow(c, D):
    """Control: a record shared with {a}, {b} and {x} transcribed into a note for the team
    ({a}, {b}) only: the audience narrows, which is allowed."""
    a, b, x = D["a"], D["b"], D["x"]
    c.seed("src", a, D["pe"], D["pa"], D["pv"], source=D["hi"], scope="shared", readers=[a, b, x])
    c.begin(a, "t1")
    c.read(a, "peek", D["pe"], D["pa"])
    transcribe(c, D, a, "note", "note: " + D["pv"], readers=[a, b])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["note"])
    c.ok(D["se"], D["sa"], "note: " + D["pv"])
    c.require("exec")



# ============================================================ hardened: temporal scope

F = "temporal_scope"


def first_attempt(c, D, src="mid", rival_src="mid", rival_agent="b", rival_obs=T1, value=None):
    """{a} fetches a tool result at T0 and derives {e}.{at} from it in t1; {b} commits a fresher
    observation after t1 began; t1's derived write is correctly stale_late_write."""
    a, b = D["a"], D[rival_agent]
    L = lookup(D)
    value = D["v"] if value is None else value
    c.begin(a, "t1")
    c.stage(a, "result", L, "response", {"field": D["at"], "value": value}, source=D[src],
            observed_at=T0, scope="shared", readers=[D["team"]])
    c.stage(a, "first", D["e"], D["at"], value, source=D[src], derived_from=["$result"])
    c.begin(b, "tb")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D[rival_src], observed_at=rival_obs,
            writers=[D["team"]], scope="shared", readers=[D["team"]])
    c.commit(b, "tb")
    c.commit(a, "t1")
    c.gone(D["e"], D["at"], value, reason="stale_late_write")


@scenario("hardened", F, "retry-same-result")
def ts_retry(c, D):
    """After its write is aborted as stale, {a} retries in a fresh transaction, re-deriving
    {e}.{at} = {v} from the same 08:00 tool result; the retry inherits observed_at 08:00, older
    than the rival's 10:00, so it is stale too, and {irr} on it is refused."""
    a = D["a"]
    first_attempt(c, D)
    c.begin(a, "t2")
    c.stage(a, "retry", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$result"])
    c.commit(a)
    c.begin(a, "t3")
    c.act(a, "exec", D["irr"], ["retry"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "retry-higher-authority")
def ts_retry_hi(c, D):
    """The retry cites {hi} (above the rival's {mid}); provenance, not authority, decides:
    the re-derived value is as old as its tool result and stays stale."""
    a = D["a"]
    first_attempt(c, D, src="hi")
    c.begin(a, "t2")
    c.stage(a, "retry", D["e"], D["at"], D["v"], source=D["hi"], derived_from=["$result"])
    c.commit(a)
    c.begin(a, "t3")
    c.act(a, "exec", D["irr"], ["retry"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "retry-with-summary")
def ts_summary(c, D):
    """The retry and a summary derived from it: the retry is stale (inherited observed_at)
    and the summary fails with inactive_parent."""
    a = D["a"]
    first_attempt(c, D)
    c.begin(a, "t2")
    c.stage(a, "retry", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$result"])
    c.stage(a, "sum", D["e"], "summary", "%s confirmed at %s" % (D["at"], D["v"]), kind="summary",
            derived_from=["$retry"])
    c.commit(a)
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry")
    c.gone(D["e"], "summary", "%s confirmed at %s" % (D["at"], D["v"]))


@scenario("hardened", F, "retry-beside-fresh-write")
def ts_beside(c, D):
    """{a} retries alongside an unrelated write ({at2}); the unrelated write commits, the
    retry is stale, and {irr} citing both is refused."""
    a = D["a"]
    first_attempt(c, D)
    c.begin(a, "t2")
    c.stage(a, "retry", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$result"])
    c.stage(a, "other", D["e"], D["at2"], D["v2"], source=D["mid"])
    c.commit(a)
    c.begin(a, "t3")
    c.act(a, "exec", D["irr"], ["retry", "other"])
    c.ok(D["e"], D["at2"], D["v2"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "retry-much-later")
def ts_later(c, D):
    """The retry happens two days later on the logical clock; the wall-clock age of the
    transaction is irrelevant, the tool result is still 08:00 on 10 March and loses to 10:00."""
    a = D["a"]
    first_attempt(c, D)
    c.begin(a, "t2", now="2026-03-12 09:00:00+00")
    c.stage(a, "retry", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$result"])
    c.commit(a)
    c.begin(a, "t3")
    c.act(a, "exec", D["irr"], ["retry"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "second-retry")
def ts_second(c, D):
    """Two successive retries from the same old result, each in a fresh transaction; both are
    stale, and the rival survives both."""
    a = D["a"]
    first_attempt(c, D)
    for i in (2, 3):
        c.begin(a, "t%d" % i)
        c.stage(a, "retry%d" % i, D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$result"])
        c.commit(a)
    c.begin(a, "t4")
    c.act(a, "exec", D["irr"], ["retry3"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry3")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "two-hop-inheritance")
def ts_two_hop(c, D):
    """The tool result is first parsed into a committed belief (which inherits 08:00); the
    retry derives from the parsed belief, not the result, and still inherits 08:00."""
    a, b = D["a"], D["b"]
    L = lookup(D)
    c.begin(a, "t1")
    c.stage(a, "result", L, "response", {"field": D["at"], "value": D["v"]}, source=D["mid"], observed_at=T0)
    c.stage(a, "parsed", L, "parsed_" + D["at"], D["v"], source=D["mid"], derived_from=["$result"])
    c.stage(a, "first", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$parsed"])
    c.begin(b, "tb")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D["mid"], observed_at=T1, writers=[D["team"]])
    c.commit(b, "tb")
    c.commit(a, "t1")
    c.begin(a, "t2")
    c.stage(a, "retry", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$parsed"])
    c.commit(a)
    c.begin(a, "t3")
    c.act(a, "exec", D["irr"], ["retry"])
    c.ok(L, "parsed_" + D["at"], D["v"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="first")
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "colleague-retry")
def ts_colleague(c, D):
    """{b}, not the original writer, picks up the shared 08:00 tool result and retries the
    write; provenance follows the content, not the agent."""
    b = D["b"]
    first_attempt(c, D, rival_agent="x")
    c.c["teams"][D["team"]].append(D["x"])
    c.begin(b, "t2")
    c.stage(b, "retry", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$result"])
    c.commit(b)
    c.begin(b, "t3")
    c.act(b, "exec", D["irr"], ["retry"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "low-authority-newer")
def ts_low_newer(c, D):
    """The newer observation comes from {lo} (authority 0.3, confidence 1.0); the retry from
    {mid} would win on authority, but it is older: stale."""
    a = D["a"]
    first_attempt(c, D, rival_src="lo")
    c.begin(a, "t2")
    c.stage(a, "retry", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$result"])
    c.commit(a)
    c.begin(a, "t3")
    c.act(a, "exec", D["irr"], ["retry"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "reversible-after-retry")
def ts_reversible(c, D):
    """The stale retry is followed by a reversible {rev}; reversibility does not make the
    quarantined input visible."""
    a = D["a"]
    first_attempt(c, D)
    c.begin(a, "t2")
    c.stage(a, "retry", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$result"])
    c.commit(a)
    c.begin(a, "t3")
    c.act(a, "notify", D["rev"], ["retry"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], reason="stale_late_write", record="retry")
    c.forbid("notify", "input_not_visible")


@scenario("hardened", F, "refetch", "control")
def tsc_refetch(c, D):
    """Control: after the stale abort, {a} re-fetches (observed 11:30) and derives {bad} from
    the new result; the fresher value supersedes the rival and {irr} is allowed. A rule that
    refused every retry would fail here."""
    a = D["a"]
    L = lookup(D)
    first_attempt(c, D)
    c.begin(a, "t2")
    c.stage(a, "result2", L, "response_2", {"field": D["at"], "value": D["bad"]}, source=D["mid"], observed_at=T2)
    c.stage(a, "retry", D["e"], D["at"], D["bad"], source=D["mid"], derived_from=["$result2"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["retry"])
    c.ok(D["e"], D["at"], D["bad"])
    c.gone(D["e"], D["at"], D["alt"], state="superseded")
    c.require("exec")


@scenario("hardened", F, "old-but-uncontested", "control")
def tsc_uncontested(c, D):
    """Control: a value derived from an old (08:00) tool result on a slot nobody else wrote
    commits: age alone is not staleness."""
    a = D["a"]
    L = lookup(D)
    c.begin(a, "t1")
    c.stage(a, "result", L, "response", {"field": D["at"], "value": D["v"]}, source=D["mid"], observed_at=T0)
    c.stage(a, "val", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$result"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["val"])
    c.ok(D["e"], D["at"], D["v"])
    c.require("exec")


@scenario("hardened", F, "older-rival", "control")
def tsc_older_rival(c, D):
    """Control: the committed rival was observed at 08:00, the candidate at 10:00 from the same
    source; the newer observation supersedes."""
    a, b = D["a"], D["b"]
    c.begin(b, "tb")
    c.stage(b, "old", D["e"], D["at"], D["alt"], source=D["mid"], observed_at=T0, writers=[D["team"]])
    c.commit(b)
    c.begin(a, "t1")
    c.stage(a, "new", D["e"], D["at"], D["v"], source=D["mid"], observed_at=T1)
    c.commit(a)
    c.act(a, "exec", D["irr"], ["new"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["alt"], state="superseded")
    c.require("exec")


@scenario("hardened", F, "retry-agrees", "control")
def tsc_agrees(c, D):
    """Control: the retry re-derives a value equal to the fresher rival's; the same value
    corroborates and commits, and the action is allowed."""
    a = D["a"]
    first_attempt(c, D, value=D["bad"])
    c.c["expect"]["aborted"] = []
    c.begin(a, "t2")
    c.stage(a, "retry", D["e"], D["at"], D["alt"], source=D["mid"], derived_from=["$result"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["retry"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")
    c.require("exec")


@scenario("hardened", F, "untimed-rival", "control")
def tsc_untimed(c, D):
    """Control: the rival carries no observed_at, so observation order is unknown and the
    retry is judged on authority: from {hi} it supersedes the {mid} rival."""
    a = D["a"]
    first_attempt(c, D, src="hi", rival_obs=None)
    c.c["expect"]["aborted"] = []
    c.begin(a, "t2")
    c.stage(a, "retry", D["e"], D["at"], D["v"], source=D["hi"], derived_from=["$result"])
    c.commit(a)
    c.act(a, "exec", D["irr"], ["retry"])
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["alt"], state="superseded")
    c.require("exec")



# ============================================================ hardened: chained families

F = "stale_late_write"


def inverted(c, D):
    """{a} (citing {hi}, 0.95) opens t1; {b} commits {alt} from {lo} (0.3) after it."""
    a, b = D["a"], D["b"]
    c.seed("orig", b, D["e"], D["at"], D["v"], source=D["lo"], confidence=0.9, writers=[D["team"]])
    c.begin(a, "t1")
    c.begin(b, "tb")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D["lo"], confidence=0.9, writers=[D["team"]])
    c.commit(b, "tb")


@scenario("hardened", F, "inverted-authority")
def h_inv(c, D):
    """Stale rewrite under inverted authority: {a}'s old-snapshot write from {hi} (0.95) meets
    {b}'s newer write from {lo} (0.3); authority would favour {a}, but staleness is decided
    first (stale_late_write) and the low-authority fresh value stays."""
    a = D["a"]
    inverted(c, D)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["hi"], tx="$t1")
    c.commit(a, "t1")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")
    c.gone(D["e"], D["at"], D["v"], state="superseded")


@scenario("hardened", F, "inverted-with-view")
def h_inv_view(c, D):
    """Inverted-authority stale rewrite plus a profile derived from it in the same
    transaction: the profile fails inactive_parent."""
    a = D["a"]
    inverted(c, D)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["hi"], tx="$t1")
    c.stage(a, "prof", D["e"], "profile", {"at": D["bad"]}, kind="profile", derived_from=["$late"], tx="$t1")
    c.commit(a, "t1")
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")
    c.gone(D["e"], "profile", {"at": D["bad"]}, reason="inactive_parent")


@scenario("hardened", F, "inverted-then-act")
def h_inv_act(c, D):
    """After the inverted-authority stale write is quarantined, {a} acts on it at the
    external_action tier in a fresh transaction: refused."""
    a = D["a"]
    c.seed("plan", a, D["e"], D["at2"], D["v2"], source=D["hi"], tier="external_action")
    inverted(c, D)
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["hi"], tx="$t1")
    c.commit(a, "t1")
    c.begin(a, "t2", tier="external_action")
    c.act(a, "exec", D["irr"], ["late", "plan"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")
    c.forbid("exec", "input_not_visible")


@scenario("hardened", F, "inverted-observation")
def h_inv_obs(c, D):
    """{b}'s low-authority rival was committed before {a} began but observed later; {a}'s
    {hi} value observed earlier is stale, even though its snapshot is current."""
    a, b = D["a"], D["b"]
    c.begin(b, "tb")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D["lo"], confidence=0.9, observed_at=T1)
    c.commit(b)
    c.begin(a, "t1")
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["hi"], observed_at=T0)
    c.commit(a)
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")


@scenario("hardened", F, "inverted-partial")
def h_inv_partial(c, D):
    """The inverted-authority stale write shares its transaction with a legitimate write on
    {at2}; the legitimate one commits, the stale one does not, and an action on the
    legitimate one alone is allowed."""
    a = D["a"]
    inverted(c, D)
    c.stage(a, "ok2", D["e"], D["at2"], D["v2"], source=D["hi"], tx="$t1")
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["hi"], tx="$t1")
    c.commit(a, "t1")
    c.begin(a, "t2")
    c.act(a, "exec", D["irr"], ["ok2"])
    c.ok(D["e"], D["at2"], D["v2"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")
    c.require("exec")


F = "semantic_conflict"


def cascade_base(c, D):
    """{a} commits a root and a belief D on {e}.{at} = {v} derived from it."""
    a = D["a"]
    L = lookup(D)
    c.begin(a, "t1")
    c.stage(a, "root", L, "response", {"value": D["v"]}, source=D["mid"], scope="shared", readers=[D["team"]])
    c.stage(a, "d", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$root"],
            scope="shared", readers=[D["team"]], writers=[D["team"]])
    c.commit(a)


@scenario("hardened", F, "rival-lands-after-repair")
def h_cc_after(c, D):
    """{b} stages a rival {alt} from {peer} (equal authority, other source) while the root of
    {a}'s value is being revoked; once the cascade has revoked {v}, {b}'s commit meets no
    active rival and commits."""
    b = D["b"]
    cascade_base(c, D)
    c.begin(b, "tb")
    c.stage(b, "rival", D["e"], D["at"], D["alt"], source=D["peer"])
    c.revoke("root", note="tool result withdrawn")
    c.commit(b, "tb")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], state="revoked")
    c.retract("d", state="revoked", reason="revoked_parent")


@scenario("hardened", F, "review-then-repair")
def h_cc_review(c, D):
    """The rival commits first and is held for review against {v}; the cascade then revokes
    {v}; the harness accepts the held value, which commits with no active rival left."""
    b = D["b"]
    cascade_base(c, D)
    c.begin(b, "tb")
    c.stage(b, "rival", D["e"], D["at"], D["alt"], source=D["peer"])
    c.commit(b)
    c.revoke("root")
    c.resolve("rival", True)
    c.begin(b, "t3")
    c.act(b, "exec", D["irr"], ["rival"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], state="revoked")
    c.require("exec")


@scenario("hardened", F, "rival-built-on-repaired")
def h_cc_built_on(c, D):
    """{b}'s conflicting candidate is derived from the belief being repaired: the cascade
    revokes it while still tentative, so it cannot commit."""
    b = D["b"]
    cascade_base(c, D)
    c.begin(b, "tb")
    c.stage(b, "rival", D["e"], "adjusted_" + D["at"], {"from": D["v"]}, derived_from=["$d"])
    c.revoke("root")
    c.commit(b, "tb")
    c.retract("rival", state="revoked", reason="revoked_parent")
    c.retract("d", state="revoked", reason="revoked_parent")


@scenario("hardened", F, "loser-stays-quarantined")
def h_cc_loser(c, D):
    """{b}'s rival loses to {a}'s value on authority (lower_authority) just before the root is
    revoked; the cascade repairs {a}'s side but does not resurrect the quarantined rival."""
    b = D["b"]
    cascade_base(c, D)
    c.begin(b, "tb")
    c.stage(b, "rival", D["e"], D["at"], D["alt"], source=D["lo"], confidence=0.9)
    c.commit(b)
    c.revoke("root")
    c.gone(D["e"], D["at"], D["alt"], reason="lower_authority")
    c.gone(D["e"], D["at"], D["v"], state="revoked")


@scenario("hardened", F, "summary-rebuild-race")
def h_cc_summary(c, D):
    """A summary of {v} is quarantined by the cascade while {b} is rebuilding a summary that
    cites it; the rebuild is a tentative descendant and is revoked."""
    a, b = D["a"], D["b"]
    cascade_base(c, D)
    c.begin(a, "t2")
    c.stage(a, "sum", D["e"], "summary", "value %s" % D["v"], kind="summary", derived_from=["$d"],
            scope="shared", readers=[D["team"]])
    c.commit(a)
    c.begin(b, "tb")
    c.stage(b, "rebuild", D["e"], "summary_v2", "value %s, reviewed" % D["v"], kind="summary",
            derived_from=["$sum"])
    c.revoke("root")
    c.commit(b, "tb")
    c.retract("sum", state="quarantined", reason="invalidated", registered=True)
    c.retract("rebuild", state="revoked")


@scenario("hardened", F, "higher-rival-after-repair")
def h_cc_higher(c, D):
    """After the cascade, a higher-authority rival from {hi} lands on the repaired slot and
    commits; {b} acts on it."""
    b = D["b"]
    cascade_base(c, D)
    c.revoke("root")
    c.begin(b, "tb")
    c.stage(b, "rival", D["e"], D["at"], D["alt"], source=D["hi"])
    c.commit(b)
    c.act(b, "exec", D["irr"], ["rival"])
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], state="revoked")
    c.require("exec")


F = "tool_result_pollution"


@scenario("hardened", F, "window-own-act")
def h_pw_own(c, D):
    """Pollution feeding an irreversible action in one staging window: {a} stages a
    low-confidence result, a plan derived from it, and calls {irr} before committing —
    blocked in flight; after the commit quarantines both, the retry is refused as invisible."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.3)
    c.stage(a, "plan", D["e"], "plan", "execute with %s" % D["bad"], derived_from=["$polluted"])
    c.act(a, "early", D["irr"], ["plan"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "late", D["irr"], ["plan"])
    c.forbid("early", "in_flight_tentative")
    c.forbid("late", "input_not_visible")
    c.gone(D["e"], D["at"], D["bad"], reason="low_evidence")
    c.gone(D["e"], "plan", "execute with %s" % D["bad"], reason="inactive_parent")


@scenario("hardened", F, "window-peer-act")
def h_pw_peer(c, D):
    """While {a}'s polluted staging is open, {b} tries {irr} on committed input (blocked:
    in_flight_tentative); once the pollution is quarantined the same call is allowed."""
    a, b = D["a"], D["b"]
    c.seed("truth", b, D["e"], D["at2"], D["v2"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.2)
    c.begin(b, "tb")
    c.act(b, "early", D["irr"], ["truth"])
    c.commit(a, "t1")
    c.act(b, "late", D["irr"], ["truth"], tx="tb")
    c.forbid("early", "in_flight_tentative")
    c.require("late")
    c.gone(D["e"], D["at"], D["bad"], reason="low_evidence")


@scenario("hardened", F, "window-external")
def h_pw_external(c, D):
    """At the external_action tier, a polluted staging blocks {irr} in its window; after the
    commit quarantines it, an input-less call is refused (inputs_required)."""
    a = D["a"]
    c.seed("support", a, D["e"], D["at2"], D["v2"], source=D["hi"], tier="external_action")
    c.begin(a, "t1", tier="external_action")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.25)
    c.act(a, "early", D["irr"], ["support"])
    c.commit(a)
    c.begin(a, "t2", tier="external_action")
    c.act(a, "late", D["irr"], [])
    c.forbid("early", "in_flight_tentative")
    c.forbid("late", "inputs_required")
    c.gone(D["e"], D["at"], D["bad"], reason="low_evidence")


@scenario("hardened", F, "window-authority")
def h_pw_authority(c, D):
    """A polluted value with high claimed confidence but low authority: blocked in its window,
    then lower_authority at commit, then invisible as an input."""
    a = D["a"]
    c.seed("truth", a, D["e"], D["at"], D["v"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.95)
    c.act(a, "early", D["irr"], ["polluted"])
    c.commit(a)
    c.begin(a, "t2")
    c.act(a, "late", D["irr"], ["polluted"])
    c.forbid("early", "in_flight_tentative")
    c.forbid("late", "input_not_visible")
    c.ok(D["e"], D["at"], D["v"])
    c.gone(D["e"], D["at"], D["bad"], reason="lower_authority")


@scenario("hardened", F, "window-effect-key")
def h_pw_effect_key(c, D):
    """A call blocked in the pollution window does not use up its effect_key: the legitimate
    call with the same key afterwards executes, and a repeat of it records nothing new."""
    a, b = D["a"], D["b"]
    c.seed("truth", b, D["e"], D["at2"], D["v2"], source=D["hi"])
    c.begin(a, "t1")
    c.stage(a, "polluted", D["e"], D["at"], D["bad"], source=D["lo"], confidence=0.3)
    c.begin(b, "tb")
    c.act(b, "early", D["irr"], ["truth"], effect_key="pay-" + D["name"])
    c.abort(a, "t1")
    c.act(b, "late", D["irr"], ["truth"], tx="tb", effect_key="pay-" + D["name"])
    c.act(b, "again", D["irr"], ["truth"], tx="tb", effect_key="pay-" + D["name"])
    c.forbid("early", "in_flight_tentative")
    c.require("late")
    c.require("again")
    c.gone(D["e"], D["at"], D["bad"], reason="aborted")


F = "cascading_rollback"


@scenario("hardened", F, "deep-beliefs")
def h_deep_beliefs(c, D):
    """A five-node chain of beliefs: revoking the root revokes all four descendants with
    revoked_parent."""
    kinds = ["belief"] * 4
    root_and_chain(c, D, kinds)
    c.revoke("root")
    c.retract("root", state="revoked", reason="revoked")
    expect_chain(c, D, kinds)


@scenario("hardened", F, "deep-through-summary")
def h_deep_summary(c, D):
    """Root, belief, summary, belief, then a reversible {rev}: the walk continues past the
    quarantined summary, revokes the belief below it, and compensates the action."""
    a = D["a"]
    kinds = ["belief", "summary", "belief"]
    root_and_chain(c, D, kinds)
    c.act(a, "notify", D["rev"], ["n3"])
    c.revoke("root")
    expect_chain(c, D, kinds)
    c.require("notify")
    c.retract("notify", state="revoked", action="compensated", compensator=D["comp"])


@scenario("hardened", F, "deep-views-leak")
def h_deep_leak(c, D):
    """Root, belief, profile, index entry, then an irreversible {irr}: views quarantined and
    registered, the effect logged as leaked."""
    a = D["a"]
    kinds = ["belief", "profile", "index_entry"]
    root_and_chain(c, D, kinds)
    c.act(a, "exec", D["irr"], ["n3"])
    c.revoke("root")
    expect_chain(c, D, kinds)
    c.require("exec")
    c.retract("exec", state="revoked", action="leaked")


@scenario("hardened", F, "deep-open-tail")
def h_deep_tail(c, D):
    """A four-node committed chain whose fifth node is tentative in {b}'s open transaction:
    the cascade reaches into the open transaction and revokes it."""
    b = D["b"]
    kinds = ["belief", "belief", "belief"]
    root_and_chain(c, D, kinds)
    c.begin(b, "tb")
    c.stage(b, "tail", D["e"], "derived_4", "tail", derived_from=["$n3"])
    c.revoke("root")
    c.commit(b, "tb")
    expect_chain(c, D, kinds)
    c.retract("tail", state="revoked", reason="revoked_parent")


@scenario("hardened", F, "deep-diamond")
def h_deep_diamond(c, D):
    """Root with two branches joined below and a two-node tail (depth 4): every node repaired
    exactly once."""
    a = D["a"]
    c.begin(a, "t1")
    c.stage(a, "root", D["e"], D["at"], D["bad"], source=D["mid"])
    c.stage(a, "l", D["e"], "left", "L", derived_from=["$root"])
    c.stage(a, "r", D["e"], "right", "R", kind="summary", derived_from=["$root"])
    c.stage(a, "j", D["e"], "joined", "LR", derived_from=["$l", "$r"])
    c.stage(a, "t", D["e"], "tail", "T", derived_from=["$j"])
    c.commit(a)
    c.revoke("root")
    c.retract("l", state="revoked", reason="revoked_parent", action="revoked")
    c.retract("r", state="quarantined", reason="invalidated", registered=True)
    c.retract("j", state="revoked", reason="revoked_parent", action="revoked", rows=1)
    c.retract("t", state="revoked", reason="revoked_parent", action="revoked", rows=1)


@scenario("hardened", F, "deep-owner-revokes")
def h_deep_owner(c, D):
    """{a} revokes its own root (no harness needed for an owned record); {b}, who built two
    more levels on top, then cites the deepest node for {irr} and is refused (revoked_parent)."""
    a, b = D["a"], D["b"]
    root_and_chain(c, D, ["belief", "belief"])
    c.begin(b, "tb")
    c.stage(b, "b3", D["e"], "derived_3", "b3", derived_from=["$n2"], scope="shared", readers=[D["team"]])
    c.stage(b, "b4", D["e"], "derived_4", "b4", derived_from=["$b3"], scope="shared", readers=[D["team"]])
    c.commit(b)
    c.revoke("root", agent=a)
    c.begin(b, "tb2")
    c.act(b, "exec", D["irr"], ["b4"])
    c.forbid("exec", "revoked_parent")
    c.retract("b3", state="revoked", reason="revoked_parent")
    c.retract("b4", state="revoked", reason="revoked_parent")


@scenario("hardened", F, "superseded-descendant")
def h_deep_superseded(c, D):
    """Root, a belief derived from it, and a later value from {hi} that supersedes that belief;
    revoking the root revokes the superseded descendant too (revoked_parent) and leaves the
    superseding value, which does not descend from the root, active."""
    a, b = D["a"], D["b"]
    L = lookup(D)
    c.begin(a, "t1")
    c.stage(a, "root", L, "response", {"value": D["v"]}, source=D["mid"])
    c.stage(a, "d", D["e"], D["at"], D["v"], source=D["mid"], derived_from=["$root"],
            scope="shared", readers=[D["team"]], writers=[D["team"]])
    c.stage(a, "d2", D["e"], "note", "from " + str(D["v"]), derived_from=["$d"])
    c.commit(a)
    c.begin(b, "tb")
    c.stage(b, "newer", D["e"], D["at"], D["alt"], source=D["hi"])
    c.commit(b)
    c.revoke("root")
    c.ok(D["e"], D["at"], D["alt"])
    c.retract("d", state="revoked", reason="revoked_parent", action="revoked")
    c.retract("d2", state="revoked", reason="revoked_parent", action="revoked")


F = "dirty_tentative_read"


@scenario("hardened", F, "contested-then-stale")
def h_dirty_stale(c, D):
    """A causally stable read of {e}.{at} hides the committed value while {a}'s rival is in
    flight; the rival then fails stale_late_write, and a fresh causally stable read sees
    the committed value again."""
    a, b = D["a"], D["b"]
    c.seed("truth", b, D["e"], D["at"], D["v"], source=D["mid"])
    c.begin(a, "t1")
    c.stage(a, "rival", D["e"], D["at"], D["bad"], source=D["mid"], scope="shared", readers=[D["team"]])
    c.begin(b, "tb")
    c.stage(b, "upd", D["e"], D["at"], D["alt"], source=D["mid"])
    c.commit(b, "tb")
    c.begin(b, "r1", tier="high")
    c.read(b, "during", D["e"], D["at"])
    c.commit(a, "t1")
    c.begin(b, "r2", tier="high")
    c.read(b, "after", D["e"], D["at"])
    c.reads("during", count=0)
    c.reads("after", sees=[D["alt"]])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_late_write")


@scenario("hardened", F, "raw-chain-cascade")
def h_dirty_cascade(c, D):
    """{b} reads {a}'s draft at raw_read, waits for {a}'s commit, derives from it and commits;
    when {a}'s record is later revoked, {b}'s belief goes with it."""
    a, b = D["a"], D["b"]
    c.begin(a, "t1")
    c.stage(a, "draft", D["e"], D["at"], D["bad"], source=D["mid"], scope="shared", readers=[D["team"]])
    c.begin(b, "tb", isolation="raw_read")
    c.read(b, "peek", D["e"], D["at"])
    c.commit(a, "t1")
    c.stage(b, "child", D["e"], "plan", {"use": D["bad"]}, derived_from=["$draft"], tx="$tb")
    c.commit(b, "tb")
    c.revoke("draft")
    c.reads("peek", sees=[D["bad"]])
    c.retract("child", state="revoked", reason="revoked_parent")
    c.gone(D["e"], D["at"], D["bad"], state="revoked")


@scenario("hardened", F, "no-action-safe-support")
def h_dirty_support(c, D):
    """An external-tier agent whose only support is {a}'s uncommitted draft: first blocked
    in flight, then, after the draft is aborted, blocked for lack of action-safe support."""
    a, b = D["a"], D["b"]
    c.begin(a, "t1", tier="external_action")
    c.stage(a, "draft", D["e"], D["at"], D["v"], source=D["hi"], scope="shared", readers=[D["team"]])
    c.begin(b, "tb", tier="external_action")
    c.act(b, "early", D["irr"], ["draft"])
    c.abort(a, "t1")
    c.gate(b, "probe", D["irr"])
    c.act(b, "late", D["irr"], [])
    c.forbid("early", "in_flight_tentative")
    c.forbid("late", "no_action_safe_support")
    c.gone(D["e"], D["at"], D["v"], reason="aborted")


@scenario("hardened", F, "orphaned-derivation")
def h_dirty_orphan(c, D):
    """{a}'s belief was derived from a value that {x} has since superseded with a {hi} value:
    the belief is still committed, but a verified_read of {b} must hide it (an ancestor is
    no longer active) while a committed_read shows it, and {b}'s {irr} citing it is refused."""
    a, b, x = D["a"], D["b"], D["x"]
    c.seed("basis", a, D["e"], D["at"], D["v"], source=D["mid"], scope="public", writers=[x])
    c.seed("derived", a, D["e"], "plan", "use " + str(D["v"]), derived_from=["$basis"])
    c.begin(x, "tx")
    c.stage(x, "newer", D["e"], D["at"], D["alt"], source=D["hi"], scope="public")
    c.commit(x)
    c.begin(b, "low", tier="low")
    c.read(b, "loose", D["e"], "plan")
    c.begin(b, "mid")
    c.read(b, "strict", D["e"], "plan")
    c.act(b, "exec", D["irr"], ["derived"])
    c.reads("loose", sees=["use " + str(D["v"])])
    c.reads("strict", count=0)
    c.forbid("exec", "input_not_visible")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["v"], state="superseded")


F = "permission_laundering"


@scenario("hardened", F, "laundered-then-cascade")
def h_launder_cascade(c, D):
    """A public copy of a private record is quarantined for laundering; when the private
    source is later revoked, the quarantined copy is revoked by the cascade too."""
    a = D["a"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.stage(a, "copy", D["se"], D["sa"], D["pv"], kind="shared_copy", derived_from=["$secret"], scope="public")
    c.commit(a)
    c.revoke("secret", agent=a)
    c.perm("copy")
    c.retract("copy", state="revoked")


@scenario("hardened", F, "laundering-before-staleness")
def h_launder_stale(c, D):
    """A write that is both stale and laundering: check 3c runs before 3d, so the reason is
    permission_laundering."""
    a, b = D["a"], D["b"]
    private_seed(c, D)
    c.begin(a, "t1")
    c.begin(b, "tb")
    c.stage(b, "fresh", D["se"], D["sa"], "fresh note", source=D["mid"], scope="shared", readers=[D["team"]])
    c.commit(b, "tb")
    c.stage(a, "late", D["se"], D["sa"], "from secret: " + D["pv"], source=D["mid"], derived_from=["$secret"],
            scope="shared", readers=[D["team"]], tx="$t1")
    c.commit(a, "t1")
    c.perm("late")
    c.ok(D["se"], D["sa"], "fresh note")


@scenario("hardened", F, "dirty-laundering")
def h_launder_dirty(c, D):
    """{b} derives a public post from {a}'s uncommitted private draft it cannot read: the
    stage is refused outright, as for a parent that does not exist (undefined_object); {b} then tries to commit {a}'s
    transaction itself, which only its agent or a harness may do (insufficient_privilege);
    {a}'s draft commits, private."""
    a, b = D["a"], D["b"]
    c.begin(a, "t1")
    c.stage(a, "draft", D["pe"], D["pa"], D["pv"], source=D["hi"])
    c.begin(b, "tb")
    c.stage(b, "post", D["se"], D["sa"], "leak", derived_from=["$draft"], scope="public", expect_error="42704")
    c.ev("commit", b, "hijack", tx="$t1", expect_error="42501")
    c.commit(a, "t1")
    c.perm_err("post", "42704")
    c.perm_err("hijack")
    c.ok(D["pe"], D["pa"], D["pv"])


# ============================================================ proposals (SPEC §10)

F = "stale_late_write"


@scenario("hardened", F, "head-race")
def h_head_race(c, D):
    """{a} and {b} both saw {e}.{at} = {v} and propose a replacement expecting it as the head;
    {b} commits {alt} first, so {a}'s {bad} no longer follows the head it names and is
    quarantined stale_head, before any authority comparison (it cites {hi})."""
    a, b = D["a"], D["b"]
    c.seed("orig", b, D["e"], D["at"], D["v"], source=D["mid"])
    c.begin(a, "t1")
    c.begin(b, "t2")
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["hi"], expected_head="$orig", tx="$t1")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D["mid"], expected_head="$orig", tx="$t2")
    c.commit(b, "t2")
    c.commit(a, "t1")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_head", record="late")
    c.gone(D["e"], D["at"], D["v"], state="superseded")


@scenario("hardened", F, "absent-head")
def h_absent_head(c, D):
    """{a} creates {e}.{at} expecting it absent (expected head 0) while {b} creates it first with
    {alt}: typed absence no longer holds, so {a}'s {bad} is stale_head, and nothing it derives
    an irreversible {irr} call from is committed (the call is blocked)."""
    a, b = D["a"], D["b"]
    c.begin(a, "t1", tier="external_action")
    c.begin(b, "t2")
    c.stage(a, "late", D["e"], D["at"], D["bad"], source=D["mid"], expected_head=0, tx="$t1")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D["mid"], expected_head=0, tx="$t2")
    c.commit(b, "t2")
    c.commit(a, "t1")
    c.begin(a, "t3", tier="external_action")
    c.act(a, "exec", D["irr"], derived=["late"], tx="t3")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="stale_head", record="late")
    c.forbid("exec")


@scenario("hardened", F, "head-proved", "control")
def h_head_proved(c, D):
    """{a} opened its transaction before {b} committed {e}.{at} = {alt}, then looked the slot up
    and proposes {bad} expecting {b}'s record as the head: a matching head proves it saw the
    current value, so the old snapshot does not make the write stale and it commits."""
    a, b = D["a"], D["b"]
    c.seed("orig", b, D["e"], D["at"], D["v"], source=D["mid"], writers=[D["team"]])
    c.begin(a, "t1")
    c.begin(b, "t2")
    c.stage(b, "fresh", D["e"], D["at"], D["alt"], source=D["mid"], expected_head="$orig",
            scope="shared", readers=[D["team"]], writers=[D["team"]], tx="$t2")
    c.commit(b, "t2")
    c.stage(a, "next", D["e"], D["at"], D["bad"], source=D["mid"], expected_head="$fresh", tx="$t1")
    c.commit(a, "t1")
    c.ok(D["e"], D["at"], D["bad"])
    c.gone(D["e"], D["at"], D["alt"], state="superseded")


@scenario("hardened", F, "proposal-retry", "control")
def h_proposal_retry(c, D):
    """{a}'s reply to a committed proposal of {e}.{at} = {alt} is lost and it retries the same
    proposal id from a new transaction: the retry returns the original record and stages
    nothing, so the value is committed once and {a} acts on it."""
    a = D["a"]
    c.begin(a, "t1", tier="external_action")
    c.stage(a, "first", D["e"], D["at"], D["alt"], source=D["mid"], expected_head=0,
            proposal="prop-" + D["name"], tx="$t1")
    c.commit(a, "t1")
    c.begin(a, "t2", tier="external_action")
    c.stage(a, "again", D["e"], D["at"], D["alt"], source=D["mid"], expected_head=0,
            proposal="prop-" + D["name"], tx="$t2")
    c.commit(a, "t2")
    c.act(a, "exec", D["irr"], derived=["again"], tx="t2")
    c.ok(D["e"], D["at"], D["alt"])
    c.require("exec")


@scenario("hardened", F, "proposal-hijack")
def h_proposal_hijack(c, D):
    """{b} reuses {a}'s proposal id for another value {bad} of {e}.{at}: a proposal id belongs to
    its agent, so this is {b}'s own new proposal, judged like any write (its source ranks lower:
    lower_authority), and {a}'s proposal is untouched: {a}'s retry still returns its record, and
    {alt} stays the value."""
    a, b = D["a"], D["b"]
    c.begin(a, "t1")
    c.stage(a, "first", D["e"], D["at"], D["alt"], source=D["mid"], proposal="prop-" + D["name"], tx="$t1")
    c.commit(a, "t1")
    c.begin(b, "t2")
    c.stage(b, "steal", D["e"], D["at"], D["bad"], source=D["lo"], proposal="prop-" + D["name"], tx="$t2")
    c.commit(b, "t2")
    c.begin(a, "t3")
    c.stage(a, "again", D["e"], D["at"], D["alt"], source=D["mid"], proposal="prop-" + D["name"], tx="$t3")
    c.commit(a, "t3")
    c.ok(D["e"], D["at"], D["alt"])
    c.gone(D["e"], D["at"], D["bad"], reason="lower_authority", state="quarantined")


# ============================================================ output

SHORT = {
    "tool_result_pollution": "pollution", "stale_late_write": "stale", "dirty_tentative_read": "dirty",
    "semantic_conflict": "conflict", "permission_laundering": "laundering", "cascading_rollback": "cascade",
    "source_scope": "source", "temporal_scope": "temporal",
}


def build(suite):
    cases = []
    offsets = {}
    for family, short, cls, fn in SCENARIOS[suite]:
        i = offsets.get(family, 0)
        offsets[family] = i + 1
        fam_off = list(SHORT).index(family) * 2 + (5 if suite == "hardened" else 0)
        D = DOMAINS[(i + fam_off) % len(DOMAINS)]
        desc = " ".join(fn.__doc__.split()).format(**D)
        name = "%s-%s-%s" % (SHORT[family], short, D["name"])
        c = Case(D, name, family, desc, cls)
        fn(c, D)
        cases.append(c.c)
    return cases


def main():
    import sys
    sys.path.insert(0, HERE)
    import caselib
    for suite in ("main", "hardened"):
        out = os.path.join(HERE, "cases", suite)
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.makedirs(out)
        cases = build(suite)
        for case in cases:
            caselib.validate(json.loads(json.dumps(case)))
            with open(os.path.join(out, case["name"] + ".json"), "w") as f:
                json.dump(case, f, indent=2)
                f.write("\n")
        fams = {}
        for case in cases:
            fams.setdefault(case["family"], [0, 0])[case["class"] == "control"] += 1
        print("%s: %d cases %s" % (suite, len(cases), fams))


if __name__ == "__main__":
    main()
