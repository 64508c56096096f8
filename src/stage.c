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
 */
#include "fault.h"
#include "proposal.h"
#include "locks.h"
#include "visibility.h"

#include "access/detoast.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/rangetypes.h"
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
 * Check the declared parents: they exist, are readable by the caller (one
 * that is not is refused like one that does not exist) and share the
 * namespace.  Returns the latest observed_at among them.
 */
static bool
StageCheckParents(MemtxCall *call, MemtxTxn *t, ArrayType *parents, int nparents,
				  TimestampTz *latest)
{
	bool		have = false;
	MemtxRec   *recs;

	if (nparents == 0)
		return false;
	recs = RecFetchByIds(call, InvalidOid, parents, nparents, "parent record");
	for (int i = 0; i < nparents; i++)
	{
		MemtxRec	rec = recs[i];

		if (strcmp(rec.namespace, t->namespace) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("parent record %lld is in another namespace", (long long) rec.id),
					 errdetail("No memtx operation spans two namespaces.")));
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
			double authority, TimestampTz *observed)
{
	static SPIPlanPtr insert;
	static SPIPlanPtr edges;
	static const Oid insert_types[] = {
		INT8OID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, FLOAT8OID,
		FLOAT8OID, TEXTOID, TEXTARRAYOID, TEXTARRAYOID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID,
		INT8OID, TEXTOID, INT8OID
	};
	static const Oid edge_types[] = {INT8OID, INT8ARRAYOID};
	Datum		values[18];
	char		nulls[18];
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
	MemtxExec(MemtxPlan(&insert,
						"INSERT INTO memtx.records (tx_id, namespace, entity, attribute, value, kind, "
						"source, authority, confidence, owner, readers, writers, scope, valid, "
						"observed_at, expected_head, proposal, restored_from, state, staged_xid, staged_pos) "
						"VALUES ($1, $2, $3, $4, $5, $6::memtx.kind, $7, $8, $9, $10, $11, $12, "
						"$13::memtx.scope, coalesce($14, '(,)'::pg_catalog.tstzrange), $15, $16, $17, $18, "
						"'tentative', pg_catalog.pg_current_xact_id(), pg_catalog.nextval('memtx.clock')) "
						"RETURNING id",
						18, insert_types),
			  values, nulls, 0);
	id = MemtxGetInt64(0, 1);
	FaultPoint("stage:inserted");

	if (a->nparents > 0)
	{
		values[0] = Int64GetDatum(id);
		values[1] = PointerGetDatum(a->parents);
		MemtxExec(MemtxPlan(&edges,
							"INSERT INTO memtx.edges (child, parent) SELECT $1, unnest($2)",
							2, edge_types),
				  values, NULL, 0);
		FaultPoint("stage:edges");
	}
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
	double		authority;
	TimestampTz observed = 0;
	bool		has_observed;
	int64		id;

	StageCheckArgs(fcinfo, &a);

	MemtxCallBegin(&call);
	t = TxnLoad(&call, PG_GETARG_INT64(0), TXN_NEED_OPEN);
	LockNamespace(t->namespace, false);

	has_observed = StageCheckParents(&call, t, a.parents, a.nparents, &observed);
	if (!PG_ARGISNULL(12))
	{
		observed = PG_GETARG_TIMESTAMPTZ(12);
		has_observed = true;
	}

	authority = PG_ARGISNULL(5)
		? memtx_default_authority
		: StageSourceAuthority(&call, PG_GETARG_TEXT_PP(5));
	if (a.has_head)
		ProposalCheckHead(t, PG_GETARG_TEXT_PP(1), PG_GETARG_TEXT_PP(2), a.expected_head);
	if (a.proposal)
	{
		ProposalContent c;
		int64		original;

		StageContent(fcinfo, &a, has_observed, observed, &c);
		original = ProposalFindRetry(&call, t, a.proposal, &c);
		if (original != 0)
		{
			MemtxCallEnd(&call);
			PG_RETURN_INT64(original);
		}
	}
	StageCheckCount(t);

	id = StageInsert(fcinfo, &call, t, &a, authority, has_observed ? &observed : NULL);
	StageCountN++;
	MemtxCallEnd(&call);
	PG_RETURN_INT64(id);
}
