/*
 * restore.c — memtx.restore (SPEC §13).
 *
 * A restore is a decision, not an observation: it stages in tx a new record
 * on the slot, copying the content of the record that was active there at a
 * past instant, and lets the normal pipeline judge it.  The copied record is
 * found with the one definition of "state at an instant" (memtx.state_at,
 * which read_as_of uses too), in tx's namespace, readable by tx's agent, not
 * erased, and valid at valid_at when given; exactly one must qualify, else
 * 22023.  The copy takes value, kind, source, confidence, scope, readers,
 * writers and valid; authority comes from the registry now, as for any
 * staging, and observed_at is not copied.
 *
 * The new record names the copied one in restored_from, with no derivation
 * edge (lineage is auxiliary; history is never rewritten), and expects the
 * slot's current head: the one active record overlapping the copied
 * validity, 0 when none does, 22023 when several do.  Commit then checks the
 * head exactly (SPEC §10): a restore that raced a newer write is quarantined
 * stale_head, not applied over it.
 *
 * Restore takes its namespace's lock shared (as the stage does, locks.c
 * level 2) before it reads the record to copy, so it never copies a value
 * an erasure in flight is removing: memtx.erase holds that lock exclusive
 * from before it lists the copies to erase until its SQL transaction ends.
 * A restore that waited reads the record erased and finds nothing to
 * restore; one that read first holds the lock until its own SQL transaction
 * ends, and the erasure, which waits for it, then finds the copy and erases
 * it too (SPEC §17; test/specs/erase_restore.spec).
 *
 * The staging itself is memtx.stage's, called with the caller's identity,
 * so every check of staging (the transaction's agent, its status, limits,
 * claimants of the source, scope) applies unchanged.  restored_from reaches
 * its INSERT through StageRestoring, set around that one call and cleared on
 * error too; no SQL argument can set it.
 */
#include "call.h"
#include "stage.h"
#include "locks.h"
#include "record.h"
#include "txn.h"
#include "visibility.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

/* memtx.stage's arguments, in its signature's order (SPEC §4, §10). */
enum
{
	RS_TX, RS_ENTITY, RS_ATTRIBUTE, RS_VALUE, RS_KIND, RS_SOURCE, RS_CONFIDENCE,
	RS_DERIVED_FROM, RS_SCOPE, RS_READERS, RS_WRITERS, RS_VALID, RS_OBSERVED_AT,
	RS_EXPECTED_HEAD, RS_PROPOSAL, RS_NARGS
};

/* The columns of the copied record that the stage call takes, by name. */
static const struct
{
	const char *column;
	int			arg;
}			RestoreCopied[] = {
	{"value", RS_VALUE}, {"kind", RS_KIND}, {"source", RS_SOURCE},
	{"confidence", RS_CONFIDENCE}, {"scope", RS_SCOPE}, {"readers", RS_READERS},
	{"writers", RS_WRITERS}, {"valid", RS_VALID}
};

/* The one error of a restore that has no single record to copy or head to expect. */
static void
RestoreNone(const char *what, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("no single %s", what),
			 errdetail("%s", why)));
}

/*
 * The record to copy, as a tuple in the caller's memory context (with its
 * descriptor in *desc): the one active on the slot at "at" that t's agent
 * may read, not erased, valid at valid_at when given.
 */
static HeapTuple
RestoreSource(MemtxTxn *t, text *entity, text *attribute, Datum at,
			  bool has_valid_at, Datum valid_at, TupleDesc *desc)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, TEXTOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID};
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	HeapTuple	found = NULL;

	values[0] = CStringGetTextDatum(t->namespace);
	values[1] = PointerGetDatum(entity);
	values[2] = PointerGetDatum(attribute);
	values[3] = at;
	values[4] = valid_at;
	nulls[4] = has_valid_at ? ' ' : 'n';
	MemtxExec(MemtxPlan(&plan,
						"SELECT r.* FROM memtx.records r "
						"CROSS JOIN LATERAL memtx.state_at(r.id, $4) h "
						"WHERE r.namespace = $1 AND r.entity = $2 AND r.attribute = $3 "
						"  AND memtx.is_active(h.state) AND r.erased_at IS NULL "
						"  AND ($5 IS NULL OR r.valid @> $5) "
						"ORDER BY r.id",
						5, types),
			  values, nulls, 0);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemtxRec	rec;

		RecParse(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, &rec);
		if (!OidIsValid(t->agent_oid) || !VisReadable(t->agent_oid, &rec))
			continue;
		if (found)
			RestoreNone("record to restore", "Several records were active on the slot at that instant; pass valid_at to choose one.");
		found = SPI_copytuple(SPI_tuptable->vals[i]);
	}
	if (!found)
		RestoreNone("record to restore", "No record readable by the transaction's agent was active on the slot at that instant (erased records are not restored).");
	*desc = SPI_tuptable->tupdesc;
	return found;
}

/*
 * The slot's current head over validity valid (memtx.head_set): the one
 * active record, 0 if none.
 */
static int64
RestoreHead(MemtxTxn *t, text *entity, text *attribute, Datum valid)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, TEXTOID, TEXTOID, TSTZRANGEOID};
	Datum		values[4];

	values[0] = CStringGetTextDatum(t->namespace);
	values[1] = PointerGetDatum(entity);
	values[2] = PointerGetDatum(attribute);
	values[3] = valid;
	MemtxExec(MemtxPlan(&plan,
						"SELECT h.id FROM memtx.head_set($1, $2, $3, $4) h ORDER BY h.id",
						4, types),
			  values, NULL, 2);
	if (SPI_processed > 1)
		RestoreNone("head to expect", "Several active records overlap the restored validity, so no single head can be expected.");
	return SPI_processed == 1 ? MemtxGetInt64(0, 1) : 0;
}

/*
 * memtx.restore(tx, entity, attribute, at, valid_at) → bigint
 */
PG_FUNCTION_INFO_V1(memtx_restore);
Datum
memtx_restore(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	MemtxTxn   *t;
	HeapTuple	src;
	TupleDesc	desc;
	int64		from;
	bool		isnull;
	volatile Datum result = (Datum) 0;

	LOCAL_FCINFO(stage, RS_NARGS);

	MemtxRequireArg(fcinfo, 0, "transaction id");
	MemtxRequireArg(fcinfo, 1, "entity");
	MemtxRequireArg(fcinfo, 2, "attribute");
	MemtxRequireArg(fcinfo, 3, "at");

	InitFunctionCallInfoData(*stage, fcinfo->flinfo, RS_NARGS, InvalidOid, NULL, NULL);
	for (int i = 0; i < RS_NARGS; i++)
	{
		stage->args[i].value = (Datum) 0;
		stage->args[i].isnull = true;
	}

	MemtxCallBegin(&call);
	t = TxnLoad(&call, PG_GETARG_INT64(0), TXN_NEED_OPEN);
	/* no erasure of the namespace in flight from here on (erase.c) */
	LockNamespace(t->namespace, false);
	src = RestoreSource(t, PG_GETARG_TEXT_PP(1), PG_GETARG_TEXT_PP(2), PG_GETARG_DATUM(3),
						!PG_ARGISNULL(4), PG_ARGISNULL(4) ? (Datum) 0 : PG_GETARG_DATUM(4), &desc);
	desc = CreateTupleDescCopy(desc);
	from = DatumGetInt64(heap_getattr(src, SPI_fnumber(desc, "id"), desc, &isnull));
	for (int i = 0; i < (int) lengthof(RestoreCopied); i++)
	{
		NullableDatum *arg = &stage->args[RestoreCopied[i].arg];

		arg->value = heap_getattr(src, SPI_fnumber(desc, RestoreCopied[i].column), desc, &arg->isnull);
	}
	stage->args[RS_EXPECTED_HEAD].value =
		Int64GetDatum(RestoreHead(t, PG_GETARG_TEXT_PP(1), PG_GETARG_TEXT_PP(2),
								  stage->args[RS_VALID].value));
	stage->args[RS_EXPECTED_HEAD].isnull = false;
	MemtxCallEnd(&call);

	stage->args[RS_TX] = fcinfo->args[0];
	stage->args[RS_ENTITY] = fcinfo->args[1];
	stage->args[RS_ATTRIBUTE] = fcinfo->args[2];
	stage->args[RS_DERIVED_FROM].value = PointerGetDatum(construct_empty_array(INT8OID));
	stage->args[RS_DERIVED_FROM].isnull = false;

	StageRestoring(from);
	PG_TRY();
	{
		result = memtx_stage(stage);
	}
	PG_FINALLY();
	{
		StageRestoring(0);
	}
	PG_END_TRY();
	PG_RETURN_DATUM(result);
}
