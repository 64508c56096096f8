/*
 * stage.c — memtx.stage (SPEC §4).
 *
 * Staging writes one tentative record and its derived-from edges.  Parents
 * must exist when the child is staged, lie in the same namespace and be
 * readable by the caller, so edges always point to older records, the DAG
 * cannot cycle, and no principal derives from what it cannot see; a parent
 * the caller may not read is refused exactly like a missing one, and no
 * error names another namespace.  A source registered with claimants may be
 * claimed only by their members (or a harness), and an observation time is
 * finite and not later than memtx.now(), so no record can claim freshness it
 * does not have.  A record
 * staged without observed_at inherits its parents' latest: provenance follows
 * content, so a retry re-deriving from an old tool result stays as old as it.
 *
 * Everything is validated before anything is written; an error leaves
 * nothing behind.  Staging takes the namespace lock shared, so a cascade
 * (exclusive) either sees the new edges or runs before them.
 *
 * An expected head is checked for existence here and judged at commit; a
 * proposal id that is already bound makes the call a retry, which returns the
 * original record and writes nothing, or an error (proposal.c).  Both
 * arguments are read only when the caller's signature has them.
 *
 * A transaction stages at most memtx.max_staged records (54000 beyond).  The
 * count is read once per SQL transaction and then kept by the backend: stage
 * holds the transaction's row FOR UPDATE until the SQL transaction ends, so
 * no one else stages into it meanwhile, and any abort of a (sub)transaction
 * forgets the count, since what it staged is gone.  A burst of stages in one
 * SQL transaction therefore counts once, not once per record.
 *
 * memtx.stage_many stages a JSON array of records through the same path,
 * StageRecord, one element at a time after checking every element's
 * arguments; the essay on memtx.stage_many opens its section below.
 */
#include "fault.h"
#include "catalog.h"
#include "clock.h"
#include "guc.h"
#include "permissions.h"
#include "pipeline.h"
#include "proposal.h"
#include "locks.h"
#include "stage.h"
#include "visibility.h"

#include "access/detoast.h"
#include "access/xact.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rangetypes.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#define MEMTX_MAX_VALUE_BYTES (1024 * 1024)

/* The transaction whose staged records this backend has counted (0: none). */
static int64 StageCountTx = 0;
static int64 StageCountN = 0;

/* The record memtx.restore is copying (0: a plain stage); see StageRestoring. */
static int64 StageRestoredFrom = 0;

/*
 * Make the stage calls until the next StageRestoring(0) record restored_from
 * (SPEC §13): memtx.restore sets it around the one stage it makes and clears
 * it, on error too.  No SQL argument sets it, so no agent can claim it.
 */
void
StageRestoring(int64 record)
{
	StageRestoredFrom = record;
}
static bool StageCountCallbacks = false;

static void
StageForgetCount(XactEvent event, void *arg)
{
	StageCountTx = 0;
}

static void
StageForgetCountSub(SubXactEvent event, SubTransactionId sub, SubTransactionId parent, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		StageCountTx = 0;
}

/* Refuse one record more than memtx.max_staged; the caller holds t's row lock. */
static void
StageCheckCount(MemtxTxn *t)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];

	if (!StageCountCallbacks)
	{
		RegisterXactCallback(StageForgetCount, NULL);
		RegisterSubXactCallback(StageForgetCountSub, NULL);
		StageCountCallbacks = true;
	}
	if (StageCountTx != t->id)
	{
		values[0] = Int64GetDatum(t->id);
		MemtxExec(MemtxPlan(&plan,
							"SELECT count(*) FROM memtx.records "
							"WHERE tx_id = $1 AND kind <> 'tool_action'",
							1, types),
				  values, NULL, 1);
		StageCountN = MemtxGetInt64(0, 1);
		StageCountTx = t->id;
	}
	if (StageCountN >= memtx_max_staged)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("transaction %lld cannot stage more than %d records",
						(long long) t->id, memtx_max_staged),
				 errdetail("memtx.max_staged limits the records one transaction stages."),
				 errhint("Commit it and stage the rest in another transaction.")));
}

/*
 * Check the declared parents: they exist, are readable by the caller and
 * share the namespace (one that is not, or does not, is refused like one
 * that does not exist: 42704).  Returns the latest observed_at among them.
 */
static bool
StageCheckParents(MemtxCall *call, MemtxTxn *t, ArrayType *parents, int nparents,
				  TimestampTz *latest)
{
	bool		have = false;
	MemtxRec   *recs;

	if (nparents == 0)
		return false;
	recs = RecFetchByIds(call, InvalidOid, parents, nparents, "parent record", t->namespace);
	for (int i = 0; i < nparents; i++)
	{
		MemtxRec	rec = recs[i];

		if (rec.has_observed && (!have || rec.observed_at > *latest))
		{
			*latest = rec.observed_at;
			have = true;
		}
	}
	return have;
}

/*
 * The authority of source (registered, else memtx.default_authority), after
 * checking that the caller may claim it: a source registered with claimants
 * is for their members and the harness only.
 */
static double
StageSourceAuthority(MemtxCall *call, text *source)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID};
	Datum		values[1];
	bool		isnull;
	Datum		claimants;
	double		authority;

	values[0] = PointerGetDatum(source);
	MemtxExec(MemtxPlan(&plan,
						"SELECT authority, claimants FROM memtx.sources WHERE name = $1",
						1, types),
			  values, NULL, 1);
	if (SPI_processed == 0)
		return memtx_default_authority;
	authority = MemtxGetFloat8(0, 1);
	claimants = MemtxGet(0, 2, &isnull);
	if (!isnull && !MemtxRoleInAny(call->caller, DatumGetArrayTypeP(claimants)) &&
		!MemtxIsHarness(call->caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to stage with source \"%s\"", text_to_cstring(source)),
				 errdetail("Role \"%s\" is not among the source's claimants.", call->caller_name)));
	return authority;
}

/*
 * An observation time must be finite and not in the future of memtx.now():
 * a later one would win every observed_at comparison of its slot (§4 3d)
 * until that time, and infinity forever.
 */
static void
StageCheckObserved(TimestampTz observed)
{
	TimestampTz now = MemtxNow();

	if (TIMESTAMP_NOT_FINITE(observed))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_FIELD_OVERFLOW),
				 errmsg("observed_at must be finite")));
	if (observed > now)
	{
		/* timestamptz_to_str returns a static buffer: copy each in turn */
		char	   *observed_text = pstrdup(timestamptz_to_str(observed));
		char	   *now_text = pstrdup(timestamptz_to_str(now));

		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_FIELD_OVERFLOW),
				 errmsg("observed_at must not be later than memtx.now()"),
				 errdetail("observed_at is %s; memtx.now() is %s.", observed_text, now_text)));
	}
}

/* memtx.stage's arguments, checked. */
typedef struct StageArgs
{
	MemtxKind	kind;
	MemtxScope	scope;
	double		confidence;
	ArrayType  *parents;		/* distinct, sorted (RecIdArray) */
	int			nparents;
	ArrayType  *readers;
	ArrayType  *writers;
	bool		has_head;
	int64		expected_head;	/* -1 when !has_head */
	char	   *proposal;		/* NULL: none */
} StageArgs;

/* Check memtx.stage's arguments, before anything is read or locked. */
static void
StageCheckArgs(FunctionCallInfo fcinfo, StageArgs *a)
{
	char	   *entity;

	MemtxRequireArg(fcinfo, 0, "transaction id");
	MemtxRequireArg(fcinfo, 1, "entity");
	MemtxRequireArg(fcinfo, 2, "attribute");
	MemtxRequireArg(fcinfo, 3, "value");
	MemtxRequireArg(fcinfo, 4, "kind");
	MemtxRequireArg(fcinfo, 6, "confidence");
	MemtxRequireArg(fcinfo, 7, "derived_from");
	MemtxRequireArg(fcinfo, 8, "scope");
	MemtxCheckText(PG_GETARG_TEXT_PP(1), "entity", 1024);
	MemtxCheckText(PG_GETARG_TEXT_PP(2), "attribute", 1024);
	entity = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (strncmp(entity, "tool:", 5) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("entity \"%s\" is reserved for tool actions", entity),
				 errhint("Tool actions are recorded by memtx.act.")));
	if (toast_raw_datum_size(PG_GETARG_DATUM(3)) > MEMTX_MAX_VALUE_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("value is too large (%zu bytes, at most %d)",
						toast_raw_datum_size(PG_GETARG_DATUM(3)), MEMTX_MAX_VALUE_BYTES)));
	a->kind = (MemtxKind) CatalogEnumIndex(ME_KIND, PG_GETARG_DATUM(4));
	if (a->kind == MK_TOOL_ACTION)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("records of kind tool_action cannot be staged"),
				 errhint("Tool actions are recorded by memtx.act.")));
	if (!PG_ARGISNULL(5))
		MemtxCheckText(PG_GETARG_TEXT_PP(5), "source", 256);
	a->confidence = PG_GETARG_FLOAT8(6);
	MemtxCheckUnit(a->confidence, "confidence");
	a->parents = RecIdArray(PG_GETARG_ARRAYTYPE_P(7), "derived_from", &a->nparents);
	a->scope = (MemtxScope) CatalogEnumIndex(ME_SCOPE, PG_GETARG_DATUM(8));
	a->readers = PG_ARGISNULL(9) ? construct_empty_array(TEXTOID) : PG_GETARG_ARRAYTYPE_P(9);
	a->writers = PG_ARGISNULL(10) ? construct_empty_array(TEXTOID) : PG_GETARG_ARRAYTYPE_P(10);
	MemtxCheckRoleNames(a->readers, "readers");
	MemtxCheckRoleNames(a->writers, "writers");
	if (!PG_ARGISNULL(11) && RangeIsEmpty(PG_GETARG_RANGE_P(11)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("validity range must not be empty")));
	if (!PG_ARGISNULL(12))
		StageCheckObserved(PG_GETARG_TIMESTAMPTZ(12));
	a->has_head = PG_NARGS() > 13 && !PG_ARGISNULL(13);
	a->expected_head = a->has_head ? PG_GETARG_INT64(13) : -1;
	a->proposal = NULL;
	if (PG_NARGS() > 14 && !PG_ARGISNULL(14))
	{
		MemtxCheckText(PG_GETARG_TEXT_PP(14), "proposal", 1024);
		a->proposal = text_to_cstring(PG_GETARG_TEXT_PP(14));
	}
}

/* The content a retry of this call must repeat (SPEC §10). */
static void
StageContent(FunctionCallInfo fcinfo, StageArgs *a, bool has_observed, TimestampTz observed,
			 ProposalContent *c)
{
	c->entity = PG_GETARG_DATUM(1);
	c->attribute = PG_GETARG_DATUM(2);
	c->value = PG_GETARG_DATUM(3);
	c->kind = a->kind;
	c->source_null = PG_ARGISNULL(5);
	c->source = c->source_null ? (Datum) 0 : PG_GETARG_DATUM(5);
	c->confidence = a->confidence;
	c->scope = a->scope;
	c->readers = a->readers;
	c->writers = a->writers;
	c->valid_null = PG_ARGISNULL(11);
	c->valid = c->valid_null ? (Datum) 0 : PG_GETARG_DATUM(11);
	c->has_observed = has_observed;
	c->observed_at = observed;
	c->expected_head = a->expected_head;
	c->parents = a->parents;
}

/*
 * Write the tentative record of a stage call into t and its derived-from
 * edges; returns its id.  observed is NULL when the record has no
 * observation time.
 */
static int64
StageInsert(FunctionCallInfo fcinfo, MemtxCall *call, MemtxTxn *t, StageArgs *a,
			double authority, TimestampTz *observed, const PipelineVerdict *settled)
{
	static SPIPlanPtr insert;
	static SPIPlanPtr insert_settled;
	static SPIPlanPtr positions;
	static SPIPlanPtr edges;
	static const Oid insert_types[] = {
		INT8OID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, FLOAT8OID,
		FLOAT8OID, TEXTOID, TEXTARRAYOID, TEXTARRAYOID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID,
		INT8OID, TEXTOID, INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID
	};
	static const Oid edge_types[] = {INT8OID, INT8ARRAYOID, TEXTOID};
	Datum		values[23];
	char		nulls[23];
	int64		id;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(t->id);
	values[1] = CStringGetTextDatum(t->namespace);
	values[2] = PG_GETARG_DATUM(1);
	values[3] = PG_GETARG_DATUM(2);
	values[4] = PG_GETARG_DATUM(3);
	values[5] = CStringGetTextDatum(MemtxKindNames[a->kind]);
	values[6] = PG_ARGISNULL(5) ? (Datum) 0 : PG_GETARG_DATUM(5);
	nulls[6] = PG_ARGISNULL(5) ? 'n' : ' ';
	values[7] = Float8GetDatum(authority);
	values[8] = Float8GetDatum(a->confidence);
	values[9] = CStringGetTextDatum(call->caller_name);
	values[10] = PointerGetDatum(a->readers);
	values[11] = PointerGetDatum(a->writers);
	values[12] = CStringGetTextDatum(MemtxScopeNames[a->scope]);
	values[13] = PG_ARGISNULL(11) ? (Datum) 0 : PG_GETARG_DATUM(11);
	nulls[13] = PG_ARGISNULL(11) ? 'n' : ' ';
	values[14] = observed ? TimestampTzGetDatum(*observed) : (Datum) 0;
	nulls[14] = observed ? ' ' : 'n';
	values[15] = Int64GetDatum(a->expected_head);
	nulls[15] = a->has_head ? ' ' : 'n';
	values[16] = a->proposal ? CStringGetTextDatum(a->proposal) : (Datum) 0;
	nulls[16] = a->proposal ? ' ' : 'n';
	values[17] = Int64GetDatum(StageRestoredFrom);
	nulls[17] = StageRestoredFrom != 0 ? ' ' : 'n';
	/* a proposal id is the transaction's agent's (SPEC §17) */
	values[18] = a->proposal ? CStringGetTextDatum(t->agent) : (Datum) 0;
	nulls[18] = a->proposal ? ' ' : 'n';
#define STAGE_INSERT \
	"INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, kind, " \
	"source, authority, confidence, owner, readers, writers, scope, valid, " \
	"observed_at, expected_head, proposal, restored_from, proposer, state, staged_xid, staged_pos"
#define STAGE_VALUES \
	"VALUES ($1, $2, $3, $4, $5, $6::memtx.kind, $7, $8, $9, $10, $11, $12, " \
	"$13::memtx.scope, coalesce($14, '(,)'::pg_catalog.tstzrange), $15, $16, $17, $18, $19, "
	if (settled == NULL)
		MemtxExec(MemtxPlan(&insert,
							STAGE_INSERT ") " STAGE_VALUES
							"'tentative', pg_catalog.pg_current_xact_id(), pg_catalog.nextval('memtx.clock')) "
							"RETURNING id",
							19, insert_types),
				  values, nulls, 0);
	else
	{
		/*
		 * memtx.propose's record, admitted already (SPEC §21): written in
		 * the state its commit gives it, with what the promotion or the
		 * quarantine would have set.  Its staging and settlement positions
		 * are drawn now, after any supersession, in that order; the history
		 * trigger keeps its first row at its staging position.
		 */
		MemtxExec(MemtxPlan(&positions,
							"SELECT pg_catalog.nextval('memtx.clock'), pg_catalog.nextval('memtx.clock')",
							0, NULL),
				  NULL, NULL, 1);
		values[21] = Int64GetDatum(MemtxGetInt64(0, 1));
		values[22] = Int64GetDatum(MemtxGetInt64(0, 2));
		nulls[21] = nulls[22] = ' ';
		values[19] = CStringGetTextDatum(MemtxStateNames[settled->state]);
		nulls[19] = ' ';
		values[20] = settled->reason != MR_NONE
			? CStringGetTextDatum(MemtxReasonName(settled->reason)) : (Datum) 0;
		nulls[20] = settled->reason != MR_NONE ? ' ' : 'n';
		MemtxExec(MemtxPlan(&insert_settled,
							STAGE_INSERT ", reason, verdict, verdict_reason, settled_xid, settled_pos, "
							"committed_xid, committed_seq) " STAGE_VALUES
							"$20::memtx.state, pg_catalog.pg_current_xact_id(), $22, "
							"$21, $20::memtx.state, $21, pg_catalog.pg_current_xact_id(), $23, "
							/* committed positions only for an active record */
							"CASE WHEN memtx.is_active($20::memtx.state) THEN pg_catalog.pg_current_xact_id() END, "
							"CASE WHEN memtx.is_active($20::memtx.state) THEN $23 END) "
							"RETURNING id",
							23, insert_types),
				  values, nulls, 0);
	}
#undef STAGE_INSERT
#undef STAGE_VALUES
	id = MemtxGetInt64(0, 1);
	FaultPoint("stage:inserted");

	if (a->nparents > 0)
	{
		values[0] = Int64GetDatum(id);
		values[1] = PointerGetDatum(a->parents);
		values[2] = CStringGetTextDatum(t->namespace);
		MemtxExec(MemtxPlan(&edges,
							"INSERT INTO memtx.edges (child, parent, namespace) SELECT $1, unnest($2), $3",
							3, edge_types),
				  values, NULL, 0);
		FaultPoint("stage:edges");
	}
	return id;
}

/*
 * memtx.propose's record, before it is written (SPEC §21): admit it as
 * the only record of fresh transaction t (PipelineAdmitPending), then write
 * t's row closed with the outcome, so the record can be written settled.
 */
static void
StageAdmitPending(FunctionCallInfo fcinfo, MemtxCall *call, MemtxTxn *t, StageArgs *a,
				  double authority, bool has_observed, TimestampTz observed,
				  StagePending *pending)
{
	MemtxRec	rec;

	memset(&rec, 0, sizeof(rec));
	rec.pending = true;
	rec.tx_id = t->id;			/* rec.id stays 0: no row yet */
	rec.state = MS_TENTATIVE;
	rec.kind = a->kind;
	rec.scope = a->scope;
	rec.namespace = t->namespace;
	rec.entity = text_to_cstring(PG_GETARG_TEXT_PP(1));
	rec.attribute = text_to_cstring(PG_GETARG_TEXT_PP(2));
	rec.source = PG_ARGISNULL(5) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(5));
	rec.authority = authority;
	rec.confidence = a->confidence;
	rec.owner = call->caller_name;
	rec.readers = a->readers;
	rec.writers = a->writers;
	rec.has_observed = has_observed;
	rec.observed_at = observed;
	rec.expected_head = a->has_head ? a->expected_head : -1;
	rec.value = PG_GETARG_DATUM(3);
	rec.valid = PG_ARGISNULL(11) ? (Datum) 0 : PG_GETARG_DATUM(11);
	rec.parents = a->parents;
	PipelineAdmitPending(t, &rec, &pending->verdict);
	TxnInsertClosed(t, pending->epoch,
					pending->verdict.reason == MR_NONE ? MX_COMMITTED : MX_ABORTED);
}

/*
 * Stage one record into t, whose row and namespace lock the caller holds,
 * from the arguments of a stage call (checked by StageCheckArgs); returns its
 * id, or the original record's when the call retries a bound proposal
 * (*retried then true, when retried is not NULL).
 */
static int64
StageRecord(FunctionCallInfo fcinfo, MemtxCall *call, MemtxTxn *t, StageArgs *a, bool *retried,
			StagePending *pending)
{
	double		authority;
	TimestampTz observed = 0;
	bool		has_observed;
	int64		id;

	has_observed = StageCheckParents(call, t, a->parents, a->nparents, &observed);
	if (!PG_ARGISNULL(12))
	{
		observed = PG_GETARG_TIMESTAMPTZ(12);
		has_observed = true;
	}

	authority = PG_ARGISNULL(5)
		? memtx_default_authority
		: StageSourceAuthority(call, PG_GETARG_TEXT_PP(5));
	if (a->has_head)
		ProposalCheckHead(t, PG_GETARG_TEXT_PP(1), PG_GETARG_TEXT_PP(2), a->expected_head);
	if (a->proposal)
	{
		ProposalContent c;
		int64		original;

		StageContent(fcinfo, a, has_observed, observed, &c);
		original = ProposalFindRetry(call, t, a->proposal, &c);
		if (retried)
			*retried = original != 0;
		if (original != 0)
			return original;
	}
	if (pending)
	{
		/* t is fresh: it has staged nothing (no count to read) */
		StageCountTx = t->id;
		StageCountN = 0;
	}
	StageCheckCount(t);

	if (pending)
		StageAdmitPending(fcinfo, call, t, a, authority, has_observed, observed, pending);
	id = StageInsert(fcinfo, call, t, a, authority, has_observed ? &observed : NULL,
					 pending ? &pending->verdict : NULL);
	StageCountN++;
	return id;
}

/*
 * memtx.stage(tx, entity, attribute, value, kind, source, confidence,
 *             derived_from, scope, readers, writers, valid, observed_at
 *             [, expected_head, proposal]) → bigint
 */
PG_FUNCTION_INFO_V1(memtx_stage);
Datum
memtx_stage(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	MemtxTxn   *t;
	StageArgs	a;
	int64		id;

	StageCheckArgs(fcinfo, &a);

	MemtxCallBegin(&call);
	t = TxnLoad(&call, PG_GETARG_INT64(0), TXN_NEED_OPEN);
	LockNamespace(t->namespace, false);
	id = StageRecord(fcinfo, &call, t, &a, NULL, NULL);
	MemtxCallEnd(&call);
	PG_RETURN_INT64(id);
}

/*
 * memtx.stage's work inside another call (memtx.propose): fcinfo holds
 * stage's arguments, t is loaded and locked for call.  Checks the arguments,
 * takes the namespace lock shared and stages; returns the record's id, or
 * the original's when the call retries a bound proposal (*retried).
 */
int64
StageCall(FunctionCallInfo fcinfo, MemtxCall *call, MemtxTxn *t, bool *retried,
		  StagePending *pending)
{
	StageArgs	a;

	*retried = false;
	StageCheckArgs(fcinfo, &a);
	LockNamespace(t->namespace, false);
	return StageRecord(fcinfo, call, t, &a, retried, pending);
}

/*
 * memtx.stage_many — one stage call per element of a JSON array.
 *
 * Each element is an object whose keys are memtx.stage's argument names
 * (every one but tx), read from the catalog together with their types and
 * defaults, so a key means what the argument means and an absent key takes
 * the argument's default.  Values convert as jsonb_populate_record converts
 * them (a JSON string or number through the type's input function, a JSON
 * array for an array argument, JSON null as SQL NULL), except value, which
 * is the JSON value itself (null included).  The arguments of every element
 * are checked before anything is read; then the transaction is loaded and
 * locked once, the proposal ids of the batch are locked in one sorted pass
 * (escalated above a bound, locks.c: a batch holds no more locks than one
 * commit), and each element is staged in order through StageRecord, the one
 * stage path.  An error names its element in the detail and, like any error,
 * leaves nothing: the batch is all or nothing.
 */

/* memtx.stage's signature: argument names, types and evaluated defaults. */
typedef struct StageSignature
{
	int			nargs;
	Oid		   *types;
	char	  **names;
	Datum	   *defaults;
	bool	   *default_nulls;	/* no default, or a NULL one */
} StageSignature;

static void
StageLoadSignature(StageSignature *sig)
{
	Oid			fn = LookupFuncName(list_make2(makeString("memtx"), makeString("stage")),
									-1, NULL, false);
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	char		modes_unused = 0;
	char	   *modes = &modes_unused;
	Datum		d;
	bool		isnull;
	List	   *defaults = NIL;
	ListCell   *lc;
	int			first;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", fn);
	sig->nargs = get_func_arg_info(tup, &sig->types, &sig->names, &modes);
	sig->defaults = palloc0(sizeof(Datum) * sig->nargs);
	sig->default_nulls = palloc(sizeof(bool) * sig->nargs);
	memset(sig->default_nulls, true, sizeof(bool) * sig->nargs);
	d = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_proargdefaults, &isnull);
	if (!isnull)
		defaults = castNode(List, stringToNode(TextDatumGetCString(d)));
	ReleaseSysCache(tup);
	first = sig->nargs - list_length(defaults);
	foreach(lc, defaults)
	{
		Expr	   *e = (Expr *) lfirst(lc);
		Const	   *c = castNode(Const, evaluate_expr(e, exprType((Node *) e),
													  exprTypmod((Node *) e),
													  exprCollation((Node *) e)));
		int			argno = first + foreach_current_index(lc);

		sig->defaults[argno] = c->constvalue;
		sig->default_nulls[argno] = c->constisnull;
	}
}

/* A JSON scalar as a value of type, through the type's input function. */
static Datum
StageManyScalar(Oid type, JsonbValue *v)
{
	char	   *s;
	Oid			typinput;
	Oid			typioparam;

	switch (v->type)
	{
		case jbvString:
			s = pnstrdup(v->val.string.val, v->val.string.len);
			break;
		case jbvNumeric:
			s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
			break;
		case jbvBool:
			s = v->val.boolean ? "true" : "false";
			break;
		default:
			elog(ERROR, "unexpected jsonb value type %d", (int) v->type);
	}
	getTypeInputInfo(type, &typinput, &typioparam);
	return OidInputFunctionCall(typinput, s, typioparam, -1);
}

/* The value of key argno of an element, as an argument of its type. */
static Datum
StageManyArg(StageSignature *sig, int argno, JsonbValue *v, bool *isnull)
{
	Oid			type = sig->types[argno];
	Oid			elemtype = get_element_type(type);
	JsonbContainer *c;
	int			n;
	Datum	   *elems;
	bool	   *nulls;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			dims[1];
	int			lbs[1] = {1};

	*isnull = false;
	if (type == JSONBOID)
		return JsonbPGetDatum(JsonbValueToJsonb(v));
	if (v->type == jbvNull)
	{
		*isnull = true;
		return (Datum) 0;
	}
	if (v->type != jbvBinary)
		return StageManyScalar(type, v);
	c = v->val.binary.data;
	if (elemtype == InvalidOid || !JsonContainerIsArray(c))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key \"%s\" takes a JSON %s", sig->names[argno],
						elemtype == InvalidOid ? "scalar" : "array, a string or null")));
	n = JsonContainerSize(c);
	if (n == 0)
		return PointerGetDatum(construct_empty_array(elemtype));
	elems = palloc(sizeof(Datum) * n);
	nulls = palloc(sizeof(bool) * n);
	for (int i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(c, i);

		nulls[i] = e->type == jbvNull;
		if (e->type == jbvBinary)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the elements of key \"%s\" must be JSON scalars", sig->names[argno])));
		elems[i] = nulls[i] ? (Datum) 0 : StageManyScalar(elemtype, e);
	}
	dims[0] = n;
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, elemtype,
											  typlen, typbyval, typalign));
}

/*
 * The arguments of a stage call made of one element of records (a jsonb
 * container or scalar): its keys over stage's defaults.
 */
static FunctionCallInfo
StageManyCall(StageSignature *sig, Datum tx, JsonbValue *elem)
{
	FunctionCallInfo fc = palloc0(SizeForFunctionCallInfo(sig->nargs));
	JsonbIterator *it;
	JsonbIteratorToken tok;
	JsonbValue	v;
	char	   *key = NULL;

	if (elem->type != jbvBinary || !JsonContainerIsObject(elem->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("an element of records is not a JSON object"),
				 errhint("Each element is an object whose keys are memtx.stage's argument names.")));
	InitFunctionCallInfoData(*fc, NULL, sig->nargs, InvalidOid, NULL, NULL);
	fc->args[0].value = tx;
	fc->args[0].isnull = false;
	for (int i = 1; i < sig->nargs; i++)
	{
		fc->args[i].value = sig->defaults[i];
		fc->args[i].isnull = sig->default_nulls[i];
	}
	it = JsonbIteratorInit(elem->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		int			argno = 0;

		if (tok == WJB_KEY)
		{
			key = pnstrdup(v.val.string.val, v.val.string.len);
			continue;
		}
		if (tok != WJB_VALUE)
			continue;
		for (int i = 1; i < sig->nargs && argno == 0; i++)
			if (strcmp(sig->names[i], key) == 0)
				argno = i;
		if (argno == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown key \"%s\" in an element of records", key),
					 errhint("The keys are memtx.stage's argument names, except tx.")));
		fc->args[argno].value = StageManyArg(sig, argno, &v, &fc->args[argno].isnull);
	}
	return fc;
}

/* Rethrow the error being handled with its element of records named first in the detail. */
static void
StageManyRethrow(MemoryContext cxt, int i)
{
	ErrorData  *e;

	MemoryContextSwitchTo(cxt);
	e = CopyErrorData();
	FlushErrorState();
	e->detail = e->detail
		? psprintf("In records[%d]. %s", i, e->detail)
		: psprintf("In records[%d].", i);
	ReThrowError(e);
}

/* Element i of records as a checked stage call (*fc, *a). */
static void
StageManyCheck(MemoryContext cxt, int i, StageSignature *sig, Datum tx, Jsonb *records,
			   FunctionCallInfo *fc, StageArgs *a)
{
	PG_TRY();
	{
		*fc = StageManyCall(sig, tx, getIthJsonbValueFromContainer(&records->root, i));
		StageCheckArgs(*fc, a);
	}
	PG_CATCH();
	{
		StageManyRethrow(cxt, i);
	}
	PG_END_TRY();
}

/*
 * Stage element i of records; returns the record id.  Each element runs in
 * an SPI connection of its own, so its memory goes with it.
 */
static int64
StageManyStage(MemoryContext cxt, int i, FunctionCallInfo fc, MemtxCall *call, MemtxTxn *t,
			   StageArgs *a)
{
	volatile int64 id = 0;

	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		id = StageRecord(fc, call, t, a, NULL, NULL);
		SPI_finish();
	}
	PG_CATCH();
	{
		StageManyRethrow(cxt, i);
	}
	PG_END_TRY();
	return id;
}

/*
 * Whether element a of a batch can be written with the others in one
 * INSERT (StageManySetwise): nothing of its checks reads a record, so
 * writing the earlier elements first could not change them — no parents
 * (one could be an element written just before it), no expected head, no
 * proposal id (a second use of one id in a batch is a retry of the first).
 */
static bool
StageManyPlain(const StageArgs *a)
{
	return a->nparents == 0 && !a->has_head && a->proposal == NULL && StageRestoredFrom == 0;
}

/* An array of n datums of type, with nulls (nulls NULL: none). */
static Datum
StageManyArray(Datum *elems, bool *nulls, int n, Oid type)
{
	int16		len;
	bool		byval;
	char		align;
	int			dims[1] = {n};
	int			lbs[1] = {1};

	get_typlenbyvalalign(type, &len, &byval, &align);
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, type, len, byval, align));
}

/*
 * Stage every element of a batch of plain elements (StageManyPlain) into t,
 * whose row and namespace lock the caller holds: each element's checks in
 * order, as StageRecord runs them (an error names its element), then all
 * of them in one INSERT, in element order — the ids, staging positions and
 * history rows of one StageRecord per element, with one statement's cost
 * (one executor start, one history trigger run).  Puts the ids into rsinfo.
 */
static void
StageManySetwise(MemoryContext cxt, int n, FunctionCallInfo *calls, MemtxCall *call, MemtxTxn *t,
				 StageArgs *args, ReturnSetInfo *rsinfo)
{
	static SPIPlanPtr insert;
	static const Oid types[] = {
		INT8OID, TEXTOID, TEXTOID, TEXTARRAYOID, TEXTARRAYOID, JSONBARRAYOID, TEXTARRAYOID,
		TEXTARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
		TSTZRANGEARRAYOID, TIMESTAMPTZARRAYOID
	};
	Datum		values[15];
	Datum	   *col[12];
	bool	   *colnull[12];
	Oid			out_func;
	bool		varlena;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	for (int c = 0; c < 12; c++)
	{
		col[c] = palloc(sizeof(Datum) * n);
		colnull[c] = palloc0(sizeof(bool) * n);
	}
	getTypeOutputInfo(TEXTARRAYOID, &out_func, &varlena);
	for (int i = 0; i < n; i++)
	{
		FunctionCallInfo fcinfo = calls[i];
		StageArgs  *a = &args[i];

		PG_TRY();
		{
			TimestampTz observed = 0;
			bool		has_observed = StageCheckParents(call, t, a->parents, a->nparents, &observed);

			if (!PG_ARGISNULL(12))
			{
				observed = PG_GETARG_TIMESTAMPTZ(12);
				has_observed = true;
			}
			col[5][i] = Float8GetDatum(PG_ARGISNULL(5)
									   ? memtx_default_authority
									   : StageSourceAuthority(call, PG_GETARG_TEXT_PP(5)));
			StageCheckCount(t);
			StageCountN++;		/* written below, or the statement fails */
			col[0][i] = PG_GETARG_DATUM(1);
			col[1][i] = PG_GETARG_DATUM(2);
			col[2][i] = PG_GETARG_DATUM(3);
			col[3][i] = CStringGetTextDatum(MemtxKindNames[a->kind]);
			col[4][i] = PG_ARGISNULL(5) ? (Datum) 0 : PG_GETARG_DATUM(5);
			colnull[4][i] = PG_ARGISNULL(5);
			col[6][i] = Float8GetDatum(a->confidence);
			col[7][i] = CStringGetTextDatum(OidOutputFunctionCall(out_func, PointerGetDatum(a->readers)));
			col[8][i] = CStringGetTextDatum(OidOutputFunctionCall(out_func, PointerGetDatum(a->writers)));
			col[9][i] = CStringGetTextDatum(MemtxScopeNames[a->scope]);
			col[10][i] = PG_ARGISNULL(11) ? (Datum) 0 : PG_GETARG_DATUM(11);
			colnull[10][i] = PG_ARGISNULL(11);
			col[11][i] = has_observed ? TimestampTzGetDatum(observed) : (Datum) 0;
			colnull[11][i] = !has_observed;
		}
		PG_CATCH();
		{
			StageManyRethrow(cxt, i);
		}
		PG_END_TRY();
	}
	values[0] = Int64GetDatum(t->id);
	values[1] = CStringGetTextDatum(t->namespace);
	values[2] = CStringGetTextDatum(call->caller_name);
	values[3] = StageManyArray(col[0], NULL, n, TEXTOID);
	values[4] = StageManyArray(col[1], NULL, n, TEXTOID);
	values[5] = StageManyArray(col[2], NULL, n, JSONBOID);
	values[6] = StageManyArray(col[3], NULL, n, TEXTOID);
	values[7] = StageManyArray(col[4], colnull[4], n, TEXTOID);
	values[8] = StageManyArray(col[5], NULL, n, FLOAT8OID);
	values[9] = StageManyArray(col[6], NULL, n, FLOAT8OID);
	values[10] = StageManyArray(col[7], NULL, n, TEXTOID);
	values[11] = StageManyArray(col[8], NULL, n, TEXTOID);
	values[12] = StageManyArray(col[9], NULL, n, TEXTOID);
	values[13] = StageManyArray(col[10], colnull[10], n, TSTZRANGEOID);
	values[14] = StageManyArray(col[11], colnull[11], n, TIMESTAMPTZOID);
	/*
	 * The rows in element order: a volatile output (the clock) is computed
	 * after the sort, and the id's default as each row is inserted, so ids
	 * and staging positions follow the elements, and RETURNING lists the
	 * rows as they were inserted.
	 */
	MemtxExec(MemtxPlan(&insert,
						"INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, kind, "
						"source, authority, confidence, owner, readers, writers, scope, valid, "
						"observed_at, state, staged_xid, staged_pos) "
						"SELECT $1, $2, u.entity, u.attribute, u.value, u.kind::memtx.kind, u.source, "
						"u.authority, u.confidence, $3, u.readers::text[], u.writers::text[], "
						"u.scope::memtx.scope, coalesce(u.valid, '(,)'::pg_catalog.tstzrange), u.observed, "
						"'tentative', pg_catalog.pg_current_xact_id(), pg_catalog.nextval('memtx.clock') "
						"FROM unnest($4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) WITH ORDINALITY "
						"  AS u(entity, attribute, value, kind, source, authority, confidence, readers, "
						"       writers, scope, valid, observed, ord) "
						"ORDER BY u.ord "
						"RETURNING id",
						15, types),
			  values, NULL, 0);
	if (SPI_processed != (uint64) n)
		elog(ERROR, "%d records to stage, " UINT64_FORMAT " written", n, SPI_processed);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		Datum		id = Int64GetDatum(MemtxGetInt64(i, 1));
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &id, &isnull);
	}
	SPI_finish();
}

/* memtx.stage_many(tx, records jsonb) → SETOF bigint, the ids in element order */
PG_FUNCTION_INFO_V1(memtx_stage_many);
Datum
memtx_stage_many(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext cxt = CurrentMemoryContext;
	MemtxCall	call;
	MemtxTxn   *t;
	StageSignature sig;
	Jsonb	   *records;
	int			n;
	FunctionCallInfo *calls;
	StageArgs  *args;
	char	  **proposals;
	int			nproposals = 0;
	bool		plain = true;

	MemtxRequireArg(fcinfo, 0, "transaction id");
	MemtxRequireArg(fcinfo, 1, "records");
	records = PG_GETARG_JSONB_P(1);
	if (!JB_ROOT_IS_ARRAY(records) || JB_ROOT_IS_SCALAR(records))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("records must be a JSON array"),
				 errhint("Each element is an object whose keys are memtx.stage's argument names.")));
	n = JB_ROOT_COUNT(records);
	if (n > memtx_max_staged)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("records has %d elements, more than memtx.max_staged (%d)", n, memtx_max_staged),
				 errdetail("memtx.max_staged limits the records one transaction stages."),
				 errhint("Stage the rest in another transaction.")));
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	MemtxCallBegin(&call);
	StageLoadSignature(&sig);
	calls = palloc(sizeof(FunctionCallInfo) * n);
	args = palloc(sizeof(StageArgs) * n);
	proposals = palloc(sizeof(char *) * n);
	for (int i = 0; i < n; i++)
	{
		StageManyCheck(cxt, i, &sig, PG_GETARG_DATUM(0), records, &calls[i], &args[i]);
		if (args[i].proposal)
			proposals[nproposals++] = args[i].proposal;
	}

	t = TxnLoad(&call, PG_GETARG_INT64(0), TXN_NEED_OPEN);
	LockNamespace(t->namespace, false);
	LockProposals(t->namespace, t->agent, proposals, nproposals);
	for (int i = 0; i < n && plain; i++)
		plain = StageManyPlain(&args[i]);
	if (plain && n > 1)
	{
		StageManySetwise(cxt, n, calls, &call, t, args, rsinfo);
		MemtxCallEnd(&call);
		return (Datum) 0;
	}
	for (int i = 0; i < n; i++)
	{
		Datum		id = Int64GetDatum(StageManyStage(cxt, i, calls[i], &call, t, &args[i]));
		bool		isnull = false;

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &id, &isnull);
	}
	MemtxCallEnd(&call);
	return (Datum) 0;
}
