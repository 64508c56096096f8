/*
 * gate.c — the action gate: memtx.gate and memtx.act (SPEC §5).
 *
 * Reversible tools pass.  An irreversible tool is blocked while any tentative
 * record of the namespace is in flight (in_flight_tentative; the caller's own
 * staging included) — a probe of the partial index on tentative records,
 * proportional to what is in flight and independent of store size — and, at
 * the external_action tier, when no action_safe record is visible to the
 * transaction (no_action_safe_support).  act then checks the declared inputs
 * (revoked_parent, input_not_visible, input_not_action_safe, inputs_required).
 *
 * What the gate saw is logged with each call: its PostgreSQL snapshot, xid
 * and clock position.  A record was in flight for the gate exactly when its
 * staging is visible in that snapshot and its settling is not, which lets
 * memtx.check_invariants recompute I1 from the records alone.  Because the
 * check reads the snapshot it logs, a stage that commits concurrently is
 * either seen (and blocks) or lies after the gate in every respect.
 *
 * Inputs.  Before visibility, act refuses (revoked_parent) a readable
 * input with a revoked or registry-listed transitive ancestor, itself
 * included, whatever the tier and level: a raw_read pin shows revoked
 * records, and a tentative input derived from one would otherwise let an
 * action hang below a retraction that nothing repairs.  An action derived
 * from a tentative record that later leaves tentative other than by
 * committing is repaired by the cascade (abort, expiry, revoke) or by the
 * commit that quarantines the record (cascade.c) — also when the record
 * belongs to another transaction (a raw_read pin sees it): act locks that
 * transaction's row FOR SHARE first, so its commit waits for the act and
 * then repairs the action, or the act waits for the commit and decides on
 * the settled record.
 *
 * effect_key makes an effect at-most-once per namespace: act serializes on
 * an advisory lock for (namespace, key), and once a call with the key was
 * allowed every repeat returns that decision and records nothing — it looks
 * the key up with the latest snapshot, so it sees a decision committed
 * while it waited for the key's lock.  The key binds the tool, the agent (of
 * the memtx transaction) and the canonical args (jsonb text) of the call
 * that used it up: a repeat that differs in any of them is an error (23505),
 * never another call's decision.  Blocked calls do not use the key up.
 */
#include "dag.h"
#include "catalog.h"
#include "guc.h"
#include "fault.h"
#include "locks.h"
#include "receipt.h"
#include "visibility.h"
#include "visscan.h"

#include "access/htup_details.h"
#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "access/xact.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"
#include "utils/xid8.h"

typedef struct GateView
{
	bool		allowed;
	MemtxReason reason;
	Datum		blockers;		/* int8[] */
	Datum		snapshot;
	Datum		xid;
	int64		pos;
} GateView;

static Datum
GateEmptyIds(void)
{
	return PointerGetDatum(construct_empty_array(INT8OID));
}

/* Whether tool is reversible; unregistered tools are not. */
static bool
GateReversible(const char *tool)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID};
	Datum		values[1];

	values[0] = CStringGetTextDatum(tool);
	MemtxExec(MemtxPlan(&plan, "SELECT reversible FROM memtx.tools WHERE name = $1", 1, types),
			  values, NULL, 1);
	return SPI_processed > 0 && MemtxGetBool(0, 1);
}

/* The largest batch of action_safe records GateActionSafeSupport judges at once. */
#define GATE_MAX_BATCH 1024

/* The first visible action_safe record ends GateActionSafeSupport's scan. */
static bool
GateSupportFound(MemtxRec *rec, HeapTuple tuple, TupleDesc desc, void *arg)
{
	return true;
}

/*
 * Whether any action_safe record of t's namespace is visible to t.  The
 * namespace's action_safe records are read newest first through their
 * partial index by VisScan, in batches that grow from one (the newest is
 * usually visible), each judged in one visibility pass (VisVisibleMany: one
 * ancestry statement per batch, not per record); reading stops at the
 * first batch with a visible record.
 */
static bool
GateActionSafeSupport(MemtxTxn *t)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID};
	Datum		values[1];
	Portal		portal;

	values[0] = CStringGetTextDatum(t->namespace);
	portal = SPI_cursor_open(NULL,
							 MemtxPlan(&plan,
									   "SELECT r.* FROM memtx.records r WHERE r.namespace = $1 "
									   "AND r.state = 'action_safe' ORDER BY r.id DESC",
									   1, types),
							 values, NULL, false);
	if (portal == NULL)
		elog(ERROR, "SPI_cursor_open failed: %s", SPI_result_code_string(SPI_result));
	return VisScan(t, portal, 1, GATE_MAX_BATCH, GateSupportFound, NULL);
}

/*
 * The gate's two conditions for a tool, given the records in flight in t's
 * namespace (int8[]; not looked at for a reversible tool, which passes with
 * no blockers).
 */
static void
GateDecide(MemtxTxn *t, bool reversible, Datum in_flight, GateView *g)
{
	ArrayType  *blockers;

	g->allowed = true;
	g->reason = MR_NONE;
	g->blockers = in_flight;
	if (reversible)
	{
		g->blockers = GateEmptyIds();
		return;
	}
	blockers = DatumGetArrayTypeP(g->blockers);
	if (ArrayGetNItems(ARR_NDIM(blockers), ARR_DIMS(blockers)) > 0)
	{
		g->allowed = false;
		g->reason = MR_IN_FLIGHT_TENTATIVE;
		return;
	}
	if (t->tier == MT_EXTERNAL_ACTION && !GateActionSafeSupport(t))
	{
		g->allowed = false;
		g->reason = MR_NO_ACTION_SAFE_SUPPORT;
	}
}

/*
 * act's view of the gate: the records in flight, with the snapshot, xid and
 * clock position of the probe (assigning an xid: the call writes).
 */
static void
GateCheckLogged(MemtxTxn *t, bool reversible, GateView *g)
{
	static SPIPlanPtr probe;
	static const Oid types[] = {TEXTOID};
	Datum		values[1];
	bool		isnull;

	memset(g, 0, sizeof(*g));
	g->reason = MR_NONE;
	values[0] = CStringGetTextDatum(t->namespace);
	MemtxExec(MemtxPlan(&probe,
						"SELECT ARRAY(SELECT id FROM memtx.records WHERE namespace = $1 "
						"             AND state = 'tentative' ORDER BY id), "
						"pg_catalog.pg_current_snapshot(), pg_catalog.pg_current_xact_id(), "
						"pg_catalog.nextval('memtx.clock')",
						1, types),
			  values, NULL, 1);
	g->snapshot = MemtxGet(0, 2, &isnull);
	g->xid = MemtxGet(0, 3, &isnull);
	g->pos = MemtxGetInt64(0, 4);
	GateDecide(t, reversible, MemtxGet(0, 1, &isnull), g);
}

/* A reason as a text datum, or a null for MR_NONE. */
static void
GateReasonOut(MemtxReason reason, Datum *value, bool *isnull)
{
	*isnull = reason == MR_NONE;
	*value = *isnull ? (Datum) 0 : CStringGetTextDatum(MemtxReasonName(reason));
}

static void
GateCheckTool(FunctionCallInfo fcinfo, int argno)
{
	MemtxRequireArg(fcinfo, argno, "tool");
	MemtxCheckText(PG_GETARG_TEXT_PP(argno), "tool", 256);
}

/*
 * memtx.gate(tx, tool) → (allowed, reason, blockers)
 *
 * A probe: it records nothing.
 */
PG_FUNCTION_INFO_V1(memtx_gate);
Datum
memtx_gate(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr probe;
	static const Oid types[] = {INT8OID, INT4OID, FLOAT8OID, TEXTOID};
	MemtxCall	call;
	MemtxTxn   *t;
	GateView	g;
	TupleDesc	desc;
	Datum		values[4];
	Datum		out[3];
	bool		nulls[3] = {false, false, false};
	char	   *tool;
	int64		id;
	SPITupleTable *tt;
	uint64		n;
	bool		reversible;
	bool		isnull;
	Datum		in_flight;

	MemtxRequireArg(fcinfo, 0, "transaction id");
	GateCheckTool(fcinfo, 1);
	id = PG_GETARG_INT64(0);
	tool = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "memtx.gate must return a composite type");

	MemtxCallBegin(&call);

	/*
	 * One statement loads the transaction, looks the tool up and lists what
	 * is in flight in the transaction's namespace (nothing for a reversible
	 * tool): a gate polled in a loop costs one index probe per table.
	 */
	TxnFetchParams(id, values);
	values[3] = CStringGetTextDatum(tool);
	MemtxExec(MemtxPlan(&probe,
						"SELECT " TXN_FIELDS ", coalesce(tl.reversible, false), "
						"       CASE WHEN tl.reversible THEN NULL ELSE"
						"         ARRAY(SELECT r.id FROM memtx.records r WHERE r.namespace = x.namespace"
						"               AND r.state = 'tentative' ORDER BY r.id) END "
						"FROM memtx.transactions x "
						"LEFT JOIN memtx.tools tl ON tl.name = $4 "
						"WHERE x.id = $1",
						4, types),
			  values, NULL, 1);
	tt = SPI_tuptable;
	n = SPI_processed;
	t = TxnLoadFromProbe(&call, id, tt, n);
	SPI_tuptable = tt;
	reversible = MemtxGetBool(0, TXN_NFIELDS + 1);
	in_flight = MemtxGet(0, TXN_NFIELDS + 2, &isnull);
	GateDecide(t, reversible, in_flight, &g);
	out[0] = BoolGetDatum(g.allowed);
	out[2] = SPI_datumTransfer(g.blockers, false, -1);
	MemtxCallEnd(&call);

	GateReasonOut(g.reason, &out[1], &nulls[1]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), out, nulls)));
}

/*
 * The inputs among recs that t's agent can read (in t's namespace) and that
 * have a revoked or registry-listed transitive ancestor, themselves included;
 * their ids go to offenders, in id order.  Inputs it cannot read are left to
 * the visibility rule, so the reason tells nothing about them.
 */
static int
GateRevokedInputs(MemtxTxn *t, MemtxRec *recs, int n, Datum *offenders)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID};
	Datum	   *readable = palloc(sizeof(Datum) * n);
	Datum		values[1];
	int			nreadable = 0;
	int			nbad = 0;
	Dag		   *dag;

	for (int i = 0; i < n; i++)
		if (strcmp(recs[i].namespace, t->namespace) == 0 && VisReadable(t->agent_oid, &recs[i]))
			readable[nreadable++] = Int64GetDatum(recs[i].id);
	if (nreadable == 0)
		return 0;
	/* the inputs and their ancestors, once, each retracted one a seed */
	values[0] = RecIdsDatum(readable, nreadable);
	MemtxExec(MemtxPlan(&plan,
						"WITH u(id) AS (SELECT i.id FROM unnest($1) i(id) "
						"               UNION SELECT a.id FROM memtx.ancestors_of($1) a(id)) "
						DAG_RETRACTED_SEEDS,
						1, types),
			  values, NULL, 0);
	dag = DagLoad(SPI_tuptable, SPI_processed, 1, 2, 3);
	/* readable is in id order (the inputs are) */
	for (int i = 0; i < nreadable; i++)
	{
		int64		id = DatumGetInt64(readable[i]);

		if (DagSeed(dag, id) != DAG_NONE || DagReach(dag, id) != DAG_NONE)
			offenders[nbad++] = readable[i];
	}
	return nbad;
}

/*
 * Check act's declared inputs (distinct, sorted, from RecIdArray); returns a
 * reason or MR_NONE, the offending ids in *bad.  Unknown ids, ids neither
 * the caller nor the agent may read and ids of another namespace are errors.
 * In order: revoked_parent (at every tier and level, SPEC §16), then
 * input_not_visible, then input_not_action_safe.
 */
static MemtxReason
GateInputs(MemtxCall *call, MemtxTxn *t, ArrayType *inputs, int n, Datum *bad)
{
	MemtxRec   *recs;
	Datum	   *offenders;
	int			nbad = 0;
	MemtxReason reason = MR_NONE;

	*bad = GateEmptyIds();
	if (n == 0)
		return MR_NONE;
	/* a harness acting for the agent may name what the agent reads */
	recs = RecFetchByIds(call, t->agent_oid, inputs, n, "input record", t->namespace);
	offenders = palloc(sizeof(Datum) * n);
	nbad = GateRevokedInputs(t, recs, n, offenders);
	if (nbad > 0)
		reason = MR_REVOKED_PARENT;
	else
	{
		for (int i = 0; i < n; i++)
			if (!VisVisible(t, &recs[i]))
				offenders[nbad++] = Int64GetDatum(recs[i].id);
		if (nbad > 0)
			reason = MR_INPUT_NOT_VISIBLE;
	}
	if (reason == MR_NONE && t->tier == MT_EXTERNAL_ACTION)
	{
		for (int i = 0; i < n; i++)
			if (recs[i].state != MS_ACTION_SAFE)
				offenders[nbad++] = Int64GetDatum(recs[i].id);
		if (nbad > 0)
			reason = MR_INPUT_NOT_ACTION_SAFE;
	}
	if (nbad > 0)
		*bad = RecIdsDatum(offenders, nbad);
	return reason;
}

/* act's argument checks, before anything is read or locked. */
static void
GateCheckActArgs(FunctionCallInfo fcinfo)
{
	MemtxRequireArg(fcinfo, 0, "transaction id");
	GateCheckTool(fcinfo, 1);
	MemtxRequireArg(fcinfo, 2, "args");
	MemtxRequireArg(fcinfo, 3, "derived_from");
	if (toast_raw_datum_size(PG_GETARG_DATUM(2)) > 1024 * 1024)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("args is too large (%zu bytes, at most %d)",
						toast_raw_datum_size(PG_GETARG_DATUM(2)), 1024 * 1024)));
	if (!PG_ARGISNULL(4))
		MemtxCheckText(PG_GETARG_TEXT_PP(4), "effect_key", 256);
}

/* memtx.act's result: allowed, reason, action_id, blockers, repeated. */
#define ACT_RESULT_COLUMNS 5

/*
 * The decision of the call that used up effect key "key" of t's namespace,
 * if one did: serializes on the key's lock, then fills out[]/nulls[] (act's
 * result) and returns true; false when the key is unused.  A key used by a
 * call that differs in tool, agent or args is an error, and so is any use of
 * a key whose action memtx.erase erased: its args are gone (JSON null), so
 * no call can be shown to be its repeat, not even one whose args are null.
 */
static bool
GateEffectKeyReplay(MemtxTxn *t, text *key, const char *tool, Datum args,
					Datum *out, bool *nulls)
{
	static SPIPlanPtr prior;
	static const Oid types[] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID};
	char	   *keystr = text_to_cstring(key);
	Datum		values[5];
	bool		isnull;

	LockEffectKey(t->namespace, keystr);
	values[0] = CStringGetTextDatum(t->namespace);
	values[1] = PointerGetDatum(key);
	values[2] = CStringGetTextDatum(tool);
	values[3] = CStringGetTextDatum(t->agent);
	values[4] = args;

	/*
	 * Look with the latest snapshot, not the statement's: the call that used
	 * the key may have committed while we waited for the key's lock, and its
	 * decision must be returned rather than the effect attempted a second
	 * time.
	 */
	CommandCounterIncrement();
	if (SPI_execute_snapshot(MemtxPlan(&prior,
									   "SELECT a.reason, a.action_id, a.blockers, "
									   "       a.tool = $3 AND x.agent = $4 AND a.args::text = $5::text "
									   "       AND r.erased_at IS NULL, r.erased_at IS NOT NULL "
									   "FROM memtx.action_log a JOIN memtx.transactions x ON x.id = a.tx_id "
									   "JOIN memtx.records r ON r.id = a.action_id "
									   "WHERE a.namespace = $1 AND a.effect_key = $2 AND a.allowed",
									   5, types),
							 values, NULL, GetLatestSnapshot(), InvalidSnapshot,
							 true, false, 1) < 0)
		elog(ERROR, "SPI_execute_snapshot failed");
	if (SPI_processed == 0)
		return false;
	if (MemtxGetBool(0, 5))
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("effect key \"%s\" is already used by a call that was erased", keystr),
				 errdetail("memtx.erase removed the arguments of that call, so no call can be matched to "
						   "it as a repeat; the key stays used up."),
				 errhint("Use a new effect key for a different effect.")));
	if (!MemtxGetBool(0, 4))
		ereport(ERROR,
				(errcode(ERRCODE_UNIQUE_VIOLATION),
				 errmsg("effect key \"%s\" is already used by another call", keystr),
				 errdetail("A key binds the tool, the agent and the arguments of the call that used it up; "
						   "this call differs in at least one of them."),
				 errhint("Use a new effect key for a different effect.")));
	out[0] = BoolGetDatum(true);
	out[1] = MemtxGet(0, 1, &nulls[1]);
	out[1] = nulls[1] ? (Datum) 0 : SPI_datumTransfer(out[1], false, -1);
	out[2] = MemtxGet(0, 2, &nulls[2]);
	out[3] = SPI_datumTransfer(MemtxGet(0, 3, &isnull), false, -1);
	return true;
}

/*
 * The gate's decision for act: the gate's reasons first, then the inputs'
 * (unknown or unreadable ids are errors either way); the blockers or
 * offending inputs go to *blockers.
 */
static MemtxReason
GateDecideAct(MemtxCall *call, MemtxTxn *t, bool reversible, ArrayType *inputs, int ninputs,
			  GateView *g, Datum *blockers)
{
	MemtxReason reason;
	Datum		ignored;

	GateCheckLogged(t, reversible, g);
	reason = g->reason;
	*blockers = g->blockers;
	if (reason != MR_NONE)
	{
		(void) GateInputs(call, t, inputs, ninputs, &ignored);
		return reason;
	}
	reason = GateInputs(call, t, inputs, ninputs, blockers);
	if (reason == MR_NONE && !reversible && t->tier == MT_EXTERNAL_ACTION && ninputs == 0)
		reason = MR_INPUTS_REQUIRED;
	return reason;
}

/*
 * The transactions other than tx with a tentative record among inputs or
 * their ancestors, sorted and distinct, into *owners; returns their number.
 * act locks their rows (TxnLoadSharing) before it decides: the commit that
 * may quarantine such a record then waits for the act and sees its action
 * (cascade.c, CascadeStagingHasActions), or the act waits for the commit
 * and decides on the settled record.  The read takes no lock; a record
 * never returns to tentative, so the set can only have shrunk since.
 */
static int
GateInputOwners(int64 tx, ArrayType *inputs, int ninputs, int64 **owners)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID, INT8OID};
	Datum		values[2];

	*owners = NULL;
	if (ninputs == 0)
		return 0;
	values[0] = PointerGetDatum(inputs);
	values[1] = Int64GetDatum(tx);
	MemtxExec(MemtxPlan(&plan,
						"WITH i(id) AS (SELECT unnest($1) "
						"  UNION SELECT a.id FROM memtx.ancestors_of($1) a(id)) "
						"SELECT DISTINCT x.tx_id FROM i CROSS JOIN LATERAL ("
						"  SELECT r.tx_id, r.state FROM memtx.records r WHERE r.id = i.id OFFSET 0) x "
						"WHERE x.state = 'tentative' AND x.tx_id <> $2 ORDER BY 1",
						2, types),
			  values, NULL, 0);
	if (SPI_processed == 0)
		return 0;
	*owners = palloc(sizeof(int64) * SPI_processed);
	for (uint64 i = 0; i < SPI_processed; i++)
		(*owners)[i] = MemtxGetInt64(i, 1);
	return (int) SPI_processed;
}

/* Record an allowed action of t (a committed tool_action record and its input edges); returns its id. */
static int64
GateRecordAction(MemtxCall *call, MemtxTxn *t, const char *tool, Datum args,
				 ArrayType *inputs, int ninputs)
{
	static SPIPlanPtr record;
	static SPIPlanPtr edges;
	static const Oid record_types[] = {INT8OID, TEXTOID, TEXTOID, JSONBOID, FLOAT8OID, TEXTOID};
	static const Oid edge_types[] = {INT8OID, INT8ARRAYOID, TEXTOID};
	Datum		values[6];
	char		entity[300];
	int64		action_id;

	snprintf(entity, sizeof(entity), "tool:%s", tool);
	values[0] = Int64GetDatum(t->id);
	values[1] = CStringGetTextDatum(t->namespace);
	values[2] = CStringGetTextDatum(entity);
	values[3] = args;
	values[4] = Float8GetDatum(memtx_default_authority);
	values[5] = CStringGetTextDatum(call->caller_name);
	MemtxExec(MemtxPlan(&record,
						"WITH n AS (SELECT pg_catalog.nextval('memtx.record_id_seq') AS id, "
						"                  pg_catalog.nextval('memtx.clock') AS pos) "
						"INSERT INTO memtx.records (id, tx_id, namespace, entity, attribute, value, "
						"kind, state, authority, confidence, owner, scope, staged_xid, staged_pos, "
						"settled_xid, settled_pos, committed_xid, committed_seq, verdict) "
						"SELECT n.id, $1, $2, $3, n.id::text, $4, 'tool_action', 'committed', $5, 1.0, $6, "
						"'private', pg_catalog.pg_current_xact_id(), n.pos, pg_catalog.pg_current_xact_id(), "
						"n.pos, pg_catalog.pg_current_xact_id(), n.pos, 'committed' FROM n RETURNING id",
						6, record_types),
			  values, NULL, 0);
	action_id = MemtxGetInt64(0, 1);
	if (ninputs > 0)
	{
		values[0] = Int64GetDatum(action_id);
		values[1] = PointerGetDatum(inputs);
		values[2] = CStringGetTextDatum(t->namespace);
		MemtxExec(MemtxPlan(&edges,
							"INSERT INTO memtx.edges (child, parent, namespace) "
							"SELECT DISTINCT $1, unnest($2), $3",
							3, edge_types),
				  values, NULL, 0);
	}
	return action_id;
}

/* Log act's decision with what the gate saw (g); action_id 0: none, key NULL: none. */
static void
GateLogAction(MemtxTxn *t, const char *tool, bool reversible, Datum args, ArrayType *inputs,
			  MemtxReason reason, Datum blockers, int64 action_id, text *key, GateView *g)
{
	static SPIPlanPtr log;
	static const Oid types[] = {
		INT8OID, TEXTOID, TEXTOID, BOOLOID, JSONBOID, INT8ARRAYOID, BOOLOID, TEXTOID,
		INT8ARRAYOID, INT8OID, TEXTOID, PG_SNAPSHOTOID, XID8OID, INT8OID
	};
	Datum		values[14];
	char		nulls[14];

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(t->id);
	values[1] = CStringGetTextDatum(t->namespace);
	values[2] = CStringGetTextDatum(tool);
	values[3] = BoolGetDatum(reversible);
	values[4] = args;
	values[5] = PointerGetDatum(inputs);
	values[6] = BoolGetDatum(reason == MR_NONE);
	values[7] = reason != MR_NONE ? CStringGetTextDatum(MemtxReasonName(reason)) : (Datum) 0;
	nulls[7] = reason != MR_NONE ? ' ' : 'n';
	values[8] = blockers;
	values[9] = Int64GetDatum(action_id);
	nulls[9] = action_id ? ' ' : 'n';
	values[10] = key ? PointerGetDatum(key) : (Datum) 0;
	nulls[10] = key ? ' ' : 'n';
	values[11] = g->snapshot;
	values[12] = g->xid;
	values[13] = Int64GetDatum(g->pos);
	MemtxExec(MemtxPlan(&log,
						"INSERT INTO memtx.action_log (tx_id, namespace, tool, reversible, args, inputs, "
						"allowed, reason, blockers, action_id, effect_key, gate_snapshot, gate_xid, gate_pos) "
						"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id",
						14, types),
			  values, nulls, 0);
	ReceiptAct(MemtxGetInt64(0, 1));
}

/*
 * memtx.act(tx, tool, args, derived_from, effect_key)
 *   → (allowed, reason, action_id, blockers, repeated)
 *
 * repeated (SPEC §17) is true when the call returned the stored decision of
 * the call that used up its effect key instead of deciding.
 */
PG_FUNCTION_INFO_V1(memtx_act);
Datum
memtx_act(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	MemtxTxn   *t;
	GateView	g;
	TupleDesc	desc;
	char	   *tool;
	Datum		args;
	text	   *key;
	ArrayType  *inputs;
	int			ninputs;
	int64	   *owners;
	int			nowners;
	bool		reversible;
	MemtxReason reason;
	Datum		blockers;
	int64		action_id = 0;
	Datum		out[ACT_RESULT_COLUMNS];
	bool		nulls[ACT_RESULT_COLUMNS] = {false, false, false, false, false};

	GateCheckActArgs(fcinfo);
	tool = text_to_cstring(PG_GETARG_TEXT_PP(1));
	args = PG_GETARG_DATUM(2);
	inputs = RecIdArray(PG_GETARG_ARRAYTYPE_P(3), "derived_from", &ninputs);
	key = PG_ARGISNULL(4) ? NULL : PG_GETARG_TEXT_PP(4);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE ||
		desc->natts != ACT_RESULT_COLUMNS)
		elog(ERROR, "memtx.act must return %d columns", ACT_RESULT_COLUMNS);

	MemtxCallBegin(&call);
	nowners = GateInputOwners(PG_GETARG_INT64(0), inputs, ninputs, &owners);
	t = TxnLoadSharing(&call, PG_GETARG_INT64(0), TXN_NEED_LIVE, owners, nowners);
	LockNamespace(t->namespace, false);

	if (key && GateEffectKeyReplay(t, key, tool, args, out, nulls))
	{
		out[4] = BoolGetDatum(true);
		MemtxCallEnd(&call);
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), out, nulls)));
	}

	reversible = GateReversible(tool);
	reason = GateDecideAct(&call, t, reversible, inputs, ninputs, &g, &blockers);
	if (reason == MR_NONE)
		action_id = GateRecordAction(&call, t, tool, args, inputs, ninputs);
	FaultPoint("act:decided");
	GateLogAction(t, tool, reversible, args, inputs, reason, blockers, action_id, key, &g);
	FaultPoint("act:logged");

	out[0] = BoolGetDatum(reason == MR_NONE);
	out[2] = Int64GetDatum(action_id);
	nulls[2] = action_id == 0;
	out[3] = SPI_datumTransfer(blockers, false, -1);
	out[4] = BoolGetDatum(false);
	MemtxCallEnd(&call);
	GateReasonOut(reason, &out[1], &nulls[1]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), out, nulls)));
}
