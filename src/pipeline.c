/*
 * pipeline.c — memtx.commit and memtx.resolve (SPEC §4).
 *
 * commit admits a transaction's staged records in staging order through four
 * ordered checks — evidence, validity, conflict (conflict.c), dependency
 * stability — and each record committed earlier in the run is an active
 * belief for the later ones.  Failing records are quarantined with a reason;
 * passing ones become committed (action_safe at the external_action tier).
 * A later record can observe an earlier one only as a rival on its slot or
 * as a parent, so a passing record whose slot no later record shares and
 * that has no children is promoted with all such records in one UPDATE at
 * the end of the run (PipelineDeferrable); the others at once, in order.
 * Either way the run's outcome is that of promoting each as it passes.
 *
 * Concurrency.  commit takes, in the order of locks.c, the transaction row
 * (a second commit, or a stage, waits and then sees the outcome), the
 * namespace lock shared (exclusive when a tool action derives from its
 * staging: a record quarantined here then repairs the tool actions derived
 * from it, as a cascade), then every slot it touches in one sorted pass (one
 * namespace-wide slot lock instead when they are many, see locks.c), so
 * two commits with overlapping slots serialize without deadlock and the
 * rivals each sees are final.  In READ COMMITTED each query sees what
 * committed before it, so the second of two racing commits adjudicates
 * against the first's result: the outcome is that of a serial order.  memtx
 * refuses to run under REPEATABLE READ or SERIALIZABLE (call.c), where a
 * transaction snapshot would hide the first commit from the second.
 *
 * Idempotence.  The outcome is stored on the records (verdict,
 * verdict_reason); a second commit returns it and runs nothing.
 */
#include "fault.h"
#include "catalog.h"
#include "clock.h"
#include "guc.h"
#include "lifecycle.h"
#include "permissions.h"
#include "cascade.h"
#include "conflict.h"
#include "events.h"
#include "fenceadmit.h"
#include "locks.h"
#include "pipeline.h"
#include "proposal.h"
#include "readset.h"
#include "receipt.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/rangetypes.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

/*
 * Take records ids[0..n) to committed (or action_safe) through validated, in
 * one UPDATE: validated is transient (SPEC §1), and the lifecycle trigger
 * lets these records through because the pipeline declares them.  Each
 * takes its own clock position, in the order of ids (staging order).  The
 * state is checked on the rows found by id, in a form no index matches: as
 * "state = 'tentative'" it let a plan made on an empty store read the whole
 * partial index of tentative records for every promotion, which made a
 * commit of n records that promotes them one by one (a chain) cost n²/2.
 */
static void
PipelinePromote(const int64 *ids, int n, bool action_safe, bool set_verdict)
{
	static SPIPlanPtr promote;
	static const Oid types[] = {INT8ARRAYOID, BOOLOID, BOOLOID};
	Datum		values[3];

	if (n == 0)
		return;
	values[0] = RecIdsDatumOf(ids, n);
	values[1] = BoolGetDatum(set_verdict);
	values[2] = BoolGetDatum(action_safe);
	MemtxPlan(&promote,
			  "UPDATE memtx.records SET "
			  "state = (CASE WHEN $3 THEN 'action_safe' ELSE 'committed' END)::memtx.state, reason = NULL, "
			  "committed_xid = pg_catalog.pg_current_xact_id(), committed_seq = n.pos, "
			  "settled_xid = coalesce(settled_xid, pg_catalog.pg_current_xact_id()), "
			  "settled_pos = coalesce(settled_pos, n.pos), "
			  "verdict = CASE WHEN $2 THEN (CASE WHEN $3 THEN 'action_safe' ELSE 'committed' END)::memtx.state ELSE verdict END, "
			  "verdict_reason = CASE WHEN $2 THEN NULL ELSE verdict_reason END "
			  "FROM (SELECT u.id, pg_catalog.nextval('memtx.clock') AS pos "
			  "      FROM unnest($1) WITH ORDINALITY AS u(id, ord)) n "
			  "WHERE memtx.records.id = n.id "
			  "  AND memtx.records.state IS NOT DISTINCT FROM 'tentative'::memtx.state",
			  3, types);
	LifecyclePassValidated(ids, n);
	PG_TRY();
	{
		MemtxExec(promote, values, NULL, 0);
	}
	PG_FINALLY();
	{
		LifecyclePassValidated(NULL, 0);
	}
	PG_END_TRY();
	if (SPI_processed != (uint64) n)
		elog(ERROR, "%d records to promote, " UINT64_FORMAT " were tentative", n, SPI_processed);
}

static void
PipelineQuarantine(int64 id, MemtxReason reason)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID, TEXTOID};
	Datum		values[2];

	values[0] = Int64GetDatum(id);
	values[1] = CStringGetTextDatum(MemtxReasonName(reason));
	MemtxExec(MemtxPlan(&plan,
						"UPDATE memtx.records SET state = 'quarantined', reason = $2, "
						"verdict = 'quarantined', verdict_reason = $2, "
						"settled_xid = pg_catalog.pg_current_xact_id(), "
						"settled_pos = pg_catalog.nextval('memtx.clock') "
						"WHERE id = $1",
						2, types),
			  values, NULL, 0);
}

/* Whether record id is still tentative. */
static bool
PipelineStillTentative(int64 id)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];

	values[0] = Int64GetDatum(id);
	MemtxExec(MemtxPlan(&plan,
						"SELECT state = 'tentative' FROM memtx.records WHERE id = $1",
						1, types),
			  values, NULL, 1);
	return SPI_processed > 0 && MemtxGetBool(0, 1);
}

/* The ids as an array literal, for a receipt's body. */
static char *
PipelineIdList(Datum *ids, int n)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i < n; i++)
		appendStringInfo(&buf, "%s" INT64_FORMAT, i > 0 ? "," : "", DatumGetInt64(ids[i]));
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/*
 * Rivals whose supersession waits for the end of a commit's run, to be
 * superseded there in one statement (PipelineAdmitAll).
 */
typedef struct PipelineRivals
{
	Datum	   *ids;
	int			n;
	int			cap;
} PipelineRivals;

static void
PipelineRivalsAdd(PipelineRivals *later, const Datum *ids, int n)
{
	if (later->n + n > later->cap)
	{
		later->cap = Max(later->cap * 2, later->n + n + 16);
		later->ids = later->ids == NULL ? palloc(sizeof(Datum) * later->cap)
			: repalloc(later->ids, sizeof(Datum) * later->cap);
	}
	memcpy(later->ids + later->n, ids, sizeof(Datum) * n);
	later->n += n;
}

/*
 * Run the four checks on one staged record; returns MR_NONE when it passes,
 * promoted unless defer (the caller promotes it later, with others).  Its
 * rivals are superseded at once, or added to later when that is given (the
 * caller supersedes them before it promotes).  *checks is how many checks
 * it passed, *superseded the ids it superseded.
 */
static MemtxReason
PipelineAdmit(MemtxTxn *t, MemtxRec *rec, bool valid_now, bool provenance, bool defer,
			  ConflictMemo *memo, PipelineRivals *later, int32 *checks, char **superseded)
{
	ConflictResult cr;

	*checks = 0;
	*superseded = "{}";
	/* 1. evidence */
	if (!(rec->confidence >= memtx_confidence_threshold ||
		  rec->authority >= memtx_authority_bypass))
		return MR_LOW_EVIDENCE;
	/* 2. validity */
	*checks = 1;
	if (!valid_now)
		return MR_OUTSIDE_VALIDITY;
	/* 3. conflict */
	*checks = 2;
	ConflictCheck(t, rec, provenance, memo, &cr);
	if (cr.nrivals > 0)
		t->verifier_calls++;
	if (cr.reason != MR_NONE)
		return cr.reason;
	/* 4. dependency stability */
	*checks = 3;
	if (cr.facts.unstable)
		return MR_UNSTABLE_DEPENDENCY;

	*checks = 4;
	*superseded = PipelineIdList(cr.supersede, cr.nsupersede);
	if (later != NULL)
		PipelineRivalsAdd(later, cr.supersede, cr.nsupersede);
	else
		ConflictSupersede(cr.supersede, cr.nsupersede);
	if (!defer)
		PipelinePromote(&rec->id, 1, t->tier == MT_EXTERNAL_ACTION, true);
	return MR_NONE;
}

/*
 * The stored outcome of transaction t, into the SRF's tuplestore; counts
 * the records and those that passed.
 */
static void
PipelineEmitOutcome(MemtxTxn *t, ReturnSetInfo *rsinfo, int64 *nstaged, int64 *npassed)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];

	values[0] = Int64GetDatum(t->id);
	MemtxExec(MemtxPlan(&plan,
						"SELECT id, verdict, verdict_reason, memtx.is_active(verdict) "
						"FROM memtx.records "
						"WHERE tx_id = $1 AND kind <> 'tool_action' AND verdict IS NOT NULL "
						"ORDER BY staged_pos",
						1, types),
			  values, NULL, 0);
	*nstaged = (int64) SPI_processed;
	*npassed = 0;
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		Datum		out[3];
		bool		nulls[3] = {false, false, false};

		for (int c = 1; c <= 3; c++)
			out[c - 1] = MemtxGet(i, c, &nulls[c - 1]);
		if (MemtxGetBool(i, 4))
			(*npassed)++;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
	}
}

/*
 * The staged records of open transaction t, in staging order, with whether
 * each is valid now, has provenance (see ConflictCheck) and has children;
 * locks the slots they touch.  Returns their number.
 */
static uint64
PipelineLoadStaged(MemtxTxn *t, MemtxRec **recs, bool **valid_now, bool **provenance,
				   bool **has_children)
{
	static SPIPlanPtr staged;
	static const Oid types[] = {INT8OID, TIMESTAMPTZOID, BOOLOID};
	Datum		values[3];
	SPITupleTable *tuptable;
	uint64		n;

	values[0] = Int64GetDatum(t->id);
	values[1] = TimestampTzGetDatum(MemtxNow());
	values[2] = BoolGetDatum(memtx_flow_control == MF_READ_SET);
	MemtxExec(MemtxPlan(&staged,
						"SELECT r.*, r.valid @> $2 AS memtx_valid_now, "
						"       EXISTS (SELECT 1 FROM memtx.edges e WHERE e.child = r.id) "
						"       OR ($3 AND EXISTS (SELECT 1 FROM memtx.read_set s WHERE s.tx_id = $1)) "
						"       AS memtx_provenance, "
						"       EXISTS (SELECT 1 FROM memtx.edges e WHERE e.parent = r.id) "
						"       AS memtx_has_children "
						"FROM memtx.records r "
						"WHERE r.tx_id = $1 AND r.state = 'tentative' ORDER BY r.staged_pos",
						3, types),
			  values, NULL, 0);
	tuptable = SPI_tuptable;
	n = SPI_processed;
	*recs = RecDecodeAll(tuptable, n);
	*valid_now = palloc(sizeof(bool) * (n + 1));
	*provenance = palloc(sizeof(bool) * (n + 1));
	*has_children = palloc(sizeof(bool) * (n + 1));
	if (n > 0)
	{
		char	  **ents = palloc(sizeof(char *) * n);
		char	  **atts = palloc(sizeof(char *) * n);
		int			validcol = SPI_fnumber(tuptable->tupdesc, "memtx_valid_now");
		int			provcol = SPI_fnumber(tuptable->tupdesc, "memtx_provenance");
		int			childcol = SPI_fnumber(tuptable->tupdesc, "memtx_has_children");

		for (uint64 i = 0; i < n; i++)
		{
			bool		isnull;

			(*valid_now)[i] = DatumGetBool(SPI_getbinval(tuptable->vals[i], tuptable->tupdesc,
														 validcol, &isnull));
			(*provenance)[i] = DatumGetBool(SPI_getbinval(tuptable->vals[i], tuptable->tupdesc,
														  provcol, &isnull));
			(*has_children)[i] = DatumGetBool(SPI_getbinval(tuptable->vals[i], tuptable->tupdesc,
															childcol, &isnull));
			ents[i] = (*recs)[i].entity;
			atts[i] = (*recs)[i].attribute;
		}
		LockSlots(t->namespace, ents, atts, (int) n);
	}
	return n;
}

/* A staged record's slot and its place in the run, to sort by slot. */
typedef struct PipelineSlotRef
{
	const char *entity;
	const char *attribute;
	uint64		pos;
} PipelineSlotRef;

static int
PipelineCompareSlots(const void *a, const void *b)
{
	const PipelineSlotRef *x = a;
	const PipelineSlotRef *y = b;
	int			c = strcmp(x->entity, y->entity);

	if (c == 0)
		c = strcmp(x->attribute, y->attribute);
	if (c == 0)
		c = (x->pos > y->pos) - (x->pos < y->pos);
	return c;
}

/*
 * Which of recs[0..n) (staging order, one namespace) may be promoted after
 * the run rather than when they pass: those that no later record of the run
 * can observe.  A later record sees an earlier one as a rival on its slot
 * (step 3d) and as a parent (3a–3c, 4); so a record that is the last of the
 * run on its slot and has no children can wait, and the run promotes all
 * such records in one statement at its end.  None waits unless allowed (a
 * run that may repair tool actions).  When allowed, also fetches into memo
 * the rivals of the first record of each slot (ConflictPrefetchRivals).
 */
static bool *
PipelineDeferrable(MemtxRec *recs, const bool *has_children, uint64 n, bool allowed,
				   ConflictMemo *memo)
{
	bool	   *defer = palloc0(sizeof(bool) * (n + 1));
	PipelineSlotRef *refs;
	int64	   *firsts;
	int			nfirsts = 0;

	if (!allowed || n < 2)
		return defer;			/* none, or one record: nothing to gain */
	refs = palloc(sizeof(PipelineSlotRef) * n);
	firsts = palloc(sizeof(int64) * n);
	for (uint64 i = 0; i < n; i++)
	{
		refs[i].entity = recs[i].entity;
		refs[i].attribute = recs[i].attribute;
		refs[i].pos = i;
	}
	qsort(refs, n, sizeof(PipelineSlotRef), PipelineCompareSlots);
	/*
	 * Sorted by slot, then place: the last of each slot's group is its last
	 * record, the first its first, whose rivals nothing earlier in the run
	 * can change: those are fetched for all of them at once.
	 */
	for (uint64 k = 0; k < n; k++)
	{
		bool		last = k + 1 == n ||
			strcmp(refs[k + 1].entity, refs[k].entity) != 0 ||
			strcmp(refs[k + 1].attribute, refs[k].attribute) != 0;
		bool		first = k == 0 ||
			strcmp(refs[k - 1].entity, refs[k].entity) != 0 ||
			strcmp(refs[k - 1].attribute, refs[k].attribute) != 0;

		defer[refs[k].pos] = last && !has_children[refs[k].pos];
		if (first)
			firsts[nfirsts++] = recs[refs[k].pos].id;
	}
	ConflictPrefetchRivals(memo, firsts, nfirsts);
	return defer;
}

/*
 * Admit recs[0..n) of t in order, quarantining those that fail (and, with
 * repair_actions, repairing the tool actions derived from them).
 */
static void
PipelineAdmitAll(MemtxTxn *t, MemtxRec *recs, bool *valid_now, bool *provenance,
				 bool *has_children, uint64 n, bool repair_actions)
{
	ConflictMemo *memo = ConflictMemoCreate();
	int64	   *settled = palloc(sizeof(int64) * (n + 1));
	int32	   *checks = palloc(sizeof(int32) * (n + 1));
	char	  **superseded = palloc(sizeof(char *) * (n + 1));
	/* a run that may repair actions promotes each record at once */
	bool	   *defer = PipelineDeferrable(recs, has_children, n, !repair_actions, memo);
	int64	   *deferred = palloc(sizeof(int64) * (n + 1));
	int			nsettled = 0;
	int			ndeferred = 0;
	PipelineRivals later = {NULL, 0, 0};
	bool		rivals_wait = true;

	/*
	 * A deferred record's rivals are on its slot, which no later record of
	 * the run has, so only a later record's parents and read set could see
	 * them (checks 3a-3c and 4): when no record of the run has provenance,
	 * the rivals of all deferred records are superseded in one statement,
	 * just before their promotion, instead of one statement per record.
	 */
	for (uint64 i = 0; i < n && rivals_wait; i++)
		rivals_wait = !provenance[i];

	for (uint64 i = 0; i < n; i++)
	{
		MemtxReason reason;

		/* a repair below an earlier quarantine may have revoked it */
		if (repair_actions && !PipelineStillTentative(recs[i].id))
			continue;
		reason = PipelineAdmit(t, &recs[i], valid_now[i], provenance[i], defer[i], memo,
							   defer[i] && rivals_wait ? &later : NULL,
							   &checks[nsettled], &superseded[nsettled]);
		settled[nsettled++] = recs[i].id;
		if (reason == MR_NONE)
		{
			if (defer[i])
				deferred[ndeferred++] = recs[i].id;
			continue;
		}
		PipelineQuarantine(recs[i].id, reason);
		if (repair_actions)
			CascadeRepairActions(t->namespace, recs[i].id, reason);
		if (reason == MR_NEEDS_REVIEW)
			MemtxNotify("review", t->id, recs[i].id, MemtxReasonName(reason), 0);
	}
	ConflictSupersede(later.ids, later.n);
	PipelinePromote(deferred, ndeferred, t->tier == MT_EXTERNAL_ACTION, true);
	FaultPoint("commit:admitted");
	/* the receipts of this call's settlements, in staging order */
	ReceiptCommits(t->namespace, settled, checks, superseded, nsettled, true);
	FaultPoint("commit:receipts");
}

/*
 * Commit open transaction t (loaded and locked for the call): admit its
 * staged records, end it, and put the outcome into rsinfo's tuplestore.
 * memtx.commit (memtx.propose admits its one record before writing it:
 * PipelineAdmitPending).
 */
static void
PipelineCommit(MemtxTxn *t, ReturnSetInfo *rsinfo)
{
	uint64		n;
	int64		nstaged;
	int64		npassed;
	MemtxTxStatus status;
	MemtxRec   *recs;
	bool	   *valid_now;
	bool	   *provenance;
	bool	   *has_children;
	bool		repair_actions;

	Assert(t->status == MX_OPEN);

	/*
	 * With the transaction row locked (no stage or commit of it can run) and
	 * the namespace lock held (no cascade can run), the staged set is final.
	 * When a tool action (its own or, under a raw_read pin, another
	 * transaction's) derives from its staging, a quarantine may have actions
	 * to repair, which is a cascade: the lock is then exclusive — unless the
	 * staging they derive from is this SQL transaction's own, which no other
	 * can see yet (CascadeStagingPrivate).
	 */
	repair_actions = CascadeStagingHasActions(t->id);
	LockNamespace(t->namespace, repair_actions && !CascadeStagingPrivate(t->id));
	/* reads of SQL transactions that rolled back count (readset.c) */
	ReadSetRecover(t->id);
	n = PipelineLoadStaged(t, &recs, &valid_now, &provenance, &has_children);
	FaultPoint("commit:loaded");
	PipelineAdmitAll(t, recs, valid_now, provenance, has_children, n, repair_actions);

	PipelineEmitOutcome(t, rsinfo, &nstaged, &npassed);
	status = npassed == nstaged ? MX_COMMITTED :
		(npassed == 0 ? MX_ABORTED : MX_PARTIALLY_COMMITTED);
	TxnEnd(t, status, MR_NONE);
	FaultPoint("commit:ended");
	MemtxNotify("commit", t->id, 0, MemtxTxStatusNames[status], nstaged);
}

/*
 * memtx.propose's record, pending (not yet in the store, SPEC §21), of
 * fresh transaction t: lock its slot and run the four checks on it as
 * PipelineCommit would on the only record of t's run — superseding its
 * rivals when it passes — and say what its row is to be.  A run of one
 * record promotes nothing later, and a fresh transaction has no tool
 * actions below its staging, so nothing is repaired.
 */
void
PipelineAdmitPending(MemtxTxn *t, MemtxRec *rec, PipelineVerdict *v)
{
	TypeCacheEntry *range = lookup_type_cache(TSTZRANGEOID, TYPECACHE_RANGE_INFO);
	bool		valid_now;
	bool		provenance;

	Assert(rec->pending);
	LockSlots(t->namespace, &rec->entity, &rec->attribute, 1);
	FaultPoint("commit:loaded");
	valid_now = rec->valid == (Datum) 0 ||
		range_contains_elem_internal(range, DatumGetRangeTypeP(rec->valid),
									 TimestampTzGetDatum(MemtxNow()));
	/* a fresh transaction has read nothing */
	provenance = ArrayGetNItems(ARR_NDIM(rec->parents), ARR_DIMS(rec->parents)) > 0;
	v->reason = PipelineAdmit(t, rec, valid_now, provenance, true, ConflictMemoCreate(), NULL,
							  &v->checks, &v->superseded);
	if (v->reason != MR_NONE)
		v->state = MS_QUARANTINED;
	else
		v->state = t->tier == MT_EXTERNAL_ACTION ? MS_ACTION_SAFE : MS_COMMITTED;
}

/*
 * After memtx.propose wrote record id of t settled (v) and t's row closed:
 * what PipelineAdmitAll and PipelineCommit do after the admission — the
 * receipt, the outcome row (led by t's id), the events.
 */
void
PipelineSettledPending(MemtxTxn *t, int64 id, const PipelineVerdict *v, ReturnSetInfo *rsinfo)
{
	Datum		out[4];
	bool		nulls[4] = {false, false, false, false};
	int32		checks = v->checks;
	char	   *superseded = v->superseded;

	if (v->reason == MR_NEEDS_REVIEW)
		MemtxNotify("review", t->id, id, MemtxReasonName(v->reason), 0);
	FaultPoint("commit:admitted");
	ReceiptCommits(t->namespace, &id, &checks, &superseded, 1, true);
	FaultPoint("commit:receipts");
	out[0] = Int64GetDatum(t->id);
	out[1] = Int64GetDatum(id);
	out[2] = DirectFunctionCall2(enum_in, CStringGetDatum(MemtxStateNames[v->state]),
								 ObjectIdGetDatum(TupleDescAttr(rsinfo->setDesc, 2)->atttypid));
	if (v->reason != MR_NONE)
		out[3] = CStringGetTextDatum(MemtxReasonName(v->reason));
	else
		nulls[3] = true;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
	FaultPoint("commit:ended");
	MemtxNotify("commit", t->id, 0, MemtxTxStatusNames[t->status], 1);
}

/*
 * memtx.commit(tx) → SETOF (record_id, state, reason)
 */
PG_FUNCTION_INFO_V1(memtx_commit);
Datum
memtx_commit(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	MemtxTxn   *t;

	MemtxRequireArg(fcinfo, 0, "transaction id");
	InitMaterializedSRF(fcinfo, 0);

	MemtxCallBegin(&call);
	t = TxnLoad(&call, PG_GETARG_INT64(0), TXN_NEED_ANY);
	if (t->status != MX_OPEN)
	{
		int64		nstaged;
		int64		npassed;

		PipelineEmitOutcome(t, rsinfo, &nstaged, &npassed);
	}
	else
		PipelineCommit(t, rsinfo);
	MemtxCallEnd(&call);
	return (Datum) 0;
}

/*
 * Load record id for resolve, with the tier of its transaction, and lock it
 * and its slot (the namespace exclusive when rejecting: a cascade); refuse
 * unless it awaits review.
 */
static void
PipelineLoadReview(int64 id, bool accept, MemtxRec *rec, MemtxTier *tier)
{
	static SPIPlanPtr load;
	static SPIPlanPtr state;
	static const Oid types[] = {INT8OID};
	Datum		values[1];
	bool		isnull;
	char	   *reason;

	values[0] = Int64GetDatum(id);
	MemtxExec(MemtxPlan(&load,
						"SELECT r.*, t.tier AS memtx_tier FROM memtx.records r "
						"JOIN memtx.transactions t ON t.id = r.tx_id WHERE r.id = $1",
						1, types),
			  values, NULL, 1);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("record %lld does not exist", (long long) id)));
	RecParse(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, rec);
	*tier = (MemtxTier) CatalogEnumIndex(ME_TIER,
										 SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
													   SPI_fnumber(SPI_tuptable->tupdesc, "memtx_tier"),
													   &isnull));

	LockNamespace(rec->namespace, !accept);
	LockSlots(rec->namespace, &rec->entity, &rec->attribute, 1);

	/* re-read under the locks */
	MemtxExec(MemtxPlan(&state,
						"SELECT state, reason FROM memtx.records WHERE id = $1 FOR UPDATE",
						1, types),
			  values, NULL, 1);
	reason = MemtxGetText(0, 2);
	if (CatalogEnumIndex(ME_STATE, MemtxGet(0, 1, &isnull)) != MS_QUARANTINED ||
		reason == NULL || MemtxReasonFromName(reason) != MR_NEEDS_REVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("record %lld is not awaiting review", (long long) id),
				 errdetail("Only a record quarantined with reason needs_review can be resolved.")));
}

/*
 * Accept record id (awaiting review, locked): unless an ancestor is no
 * longer active, or the head it expected is no longer the head set (SPEC
 * §10), supersede its active rivals and commit it (to action_safe when
 * action_safe).
 */
static void
PipelineAccept(MemtxRec *rec, bool action_safe)
{
	int64		id = rec->id;
	static SPIPlanPtr ancestors;
	static SPIPlanPtr reopen;
	static const Oid types[] = {INT8OID};
	Datum		values[1];
	Datum	   *ids;
	int			n;
	int32		checks = 4;
	char	   *superseded;

	values[0] = Int64GetDatum(id);
	MemtxExec(MemtxPlan(&ancestors,
						"SELECT 1 FROM memtx.ancestors($1) anc(id) JOIN memtx.records a ON a.id = anc.id "
						"WHERE NOT memtx.is_active(a.state) OR " MEMTX_IS_RETRACTED("a") " LIMIT 1",
						1, types),
			  values, NULL, 1);
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("record %lld cannot be accepted: an ancestor is no longer active", (long long) id),
				 errhint("Reject it, or stage it again from active records.")));
	if (rec->expected_head >= 0 && !ProposalHeadMatches(rec))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("record %lld cannot be accepted: the head it expected is no longer the head",
						(long long) id),
				 errhint("Reject it, or stage it again against the current head.")));

	ConflictFetchRivals(id);
	n = (int) SPI_processed;
	ids = palloc(sizeof(Datum) * (n + 1));
	for (int i = 0; i < n; i++)
		ids[i] = Int64GetDatum(MemtxGetInt64(i, 1));
	ConflictSupersede(ids, n);
	MemtxExec(MemtxPlan(&reopen,
						"UPDATE memtx.records SET state = 'tentative' WHERE id = $1",
						1, types),
			  values, NULL, 0);
	PipelinePromote(&id, 1, action_safe, false);
	superseded = PipelineIdList(ids, n);
	ReceiptCommits(rec->namespace, &id, &checks, &superseded, 1, false);
}

/*
 * memtx.resolve(record, accept) → memtx.state
 *
 * Settles a record quarantined with needs_review.  Accepting commits it
 * (action_safe at the external_action tier) and supersedes every active
 * rival; rejecting revokes it with cascade.
 */
PG_FUNCTION_INFO_V1(memtx_resolve);
Datum
memtx_resolve(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	int64		id;
	bool		accept;
	MemtxRec	rec;
	MemtxTier	tier;
	MemtxState	result;

	MemtxRequireArg(fcinfo, 0, "record id");
	MemtxRequireArg(fcinfo, 1, "accept");
	id = PG_GETARG_INT64(0);
	accept = PG_GETARG_BOOL(1);

	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "resolve a review");
	if (accept)
		FenceAdmitRecord(id);
	PipelineLoadReview(id, accept, &rec, &tier);

	if (!accept)
	{
		CascadeRun(rec.namespace, &id, 1, MR_REVOKED, "review rejected", NULL,
				   CASCADE_RECEIPT_PER_ROOT, 0);
		FaultPoint("resolve:rejected");
		MemtxNotify("resolved", rec.tx_id, id, MemtxStateNames[MS_REVOKED], 0);
		MemtxCallEnd(&call);
		PG_RETURN_DATUM(MemtxStateDatum(fcinfo, MS_REVOKED));
	}

	PipelineAccept(&rec, tier == MT_EXTERNAL_ACTION);
	FaultPoint("resolve:accepted");
	result = tier == MT_EXTERNAL_ACTION ? MS_ACTION_SAFE : MS_COMMITTED;
	MemtxNotify("resolved", rec.tx_id, id, MemtxStateNames[result], 0);
	MemtxCallEnd(&call);
	PG_RETURN_DATUM(MemtxStateDatum(fcinfo, result));
}
