/*
 * record.c — reading memtx records into C.
 *
 * RecParse turns a full memtx.records row (SELECT r.*) into a MemtxRec;
 * RecIdArray and RecFetchByIds check and load the records a call names
 * (parents of a stage, inputs of an act), so both refuse NULLs, huge arrays
 * and unknown ids the same way, and an id the caller may not read like an
 * unknown one.
 */
#include "record.h"
#include "visibility.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

int
MemtxLabelIndex(const char *const *names, int n, const char *label)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], label) == 0)
			return i;
	elog(ERROR, "unknown memtx label \"%s\"", label);
	return 0;
}

static char *
RecText(HeapTuple tuple, TupleDesc desc, const char *col)
{
	return SPI_getvalue(tuple, desc, SPI_fnumber(desc, col));
}

static Datum
RecDatum(HeapTuple tuple, TupleDesc desc, const char *col, bool *isnull)
{
	return SPI_getbinval(tuple, desc, SPI_fnumber(desc, col), isnull);
}

void
RecParse(HeapTuple tuple, TupleDesc desc, MemtxRec *rec)
{
	bool		isnull;
	Datum		d;

	rec->id = DatumGetInt64(RecDatum(tuple, desc, "id", &isnull));
	rec->tx_id = DatumGetInt64(RecDatum(tuple, desc, "tx_id", &isnull));
	rec->state = MemtxStateFromName(RecText(tuple, desc, "state"));
	rec->kind = MemtxLabelIndex(MemtxKindNames, 6, RecText(tuple, desc, "kind"));
	rec->scope = MemtxLabelIndex(MemtxScopeNames, 3, RecText(tuple, desc, "scope"));
	rec->namespace = RecText(tuple, desc, "namespace");
	rec->entity = RecText(tuple, desc, "entity");
	rec->attribute = RecText(tuple, desc, "attribute");
	rec->source = RecText(tuple, desc, "source");
	rec->authority = DatumGetFloat8(RecDatum(tuple, desc, "authority", &isnull));
	rec->confidence = DatumGetFloat8(RecDatum(tuple, desc, "confidence", &isnull));
	rec->owner = RecText(tuple, desc, "owner");
	d = RecDatum(tuple, desc, "readers", &isnull);
	rec->readers = isnull ? NULL : DatumGetArrayTypeP(d);
	d = RecDatum(tuple, desc, "writers", &isnull);
	rec->writers = isnull ? NULL : DatumGetArrayTypeP(d);
	d = RecDatum(tuple, desc, "observed_at", &isnull);
	rec->has_observed = !isnull;
	rec->observed_at = isnull ? 0 : DatumGetTimestampTz(d);
	rec->staged_xid = DatumGetFullTransactionId(RecDatum(tuple, desc, "staged_xid", &isnull));
	rec->staged_pos = DatumGetInt64(RecDatum(tuple, desc, "staged_pos", &isnull));
	rec->committed_xid = RecDatum(tuple, desc, "committed_xid", &isnull);
	rec->committed = !isnull;
	d = RecDatum(tuple, desc, "committed_seq", &isnull);
	rec->committed_seq = isnull ? 0 : DatumGetInt64(d);
}

Datum
RecIdsDatum(Datum *ids, int n)
{
	return PointerGetDatum(construct_array(ids, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static int
RecCompareIds(const void *a, const void *b)
{
	int64		x = DatumGetInt64(*(const Datum *) a);
	int64		y = DatumGetInt64(*(const Datum *) b);

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * Check an array of record ids (one dimension, no NULLs, at most
 * MEMTX_MAX_IDS) and return its distinct ids, sorted.
 */
ArrayType *
RecIdArray(ArrayType *arr, const char *name, int *count)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			m = 0;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", name)));
	deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &n);
	if (n > MEMTX_MAX_IDS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s has too many elements (%d, at most %d)", name, n, MEMTX_MAX_IDS)));
	for (int i = 0; i < n; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain nulls", name)));
	/* sort and dedupe */
	qsort(elems, n, sizeof(Datum), RecCompareIds);
	for (int i = 0; i < n; i++)
		if (m == 0 || DatumGetInt64(elems[m - 1]) != DatumGetInt64(elems[i]))
			elems[m++] = elems[i];
	*count = m;
	return DatumGetArrayTypeP(RecIdsDatum(elems, m));
}

/*
 * Load the records with ids (distinct and sorted, from RecIdArray), in id
 * order.  One that neither the caller nor "agent" (InvalidOid: nobody) may
 * read is refused exactly like one that does not exist (42704, naming it as
 * "what"): an error must not tell whether an unreadable record exists.
 */
MemtxRec *
RecFetchByIds(MemtxCall *call, Oid agent, ArrayType *ids, int n, const char *what)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID};
	Datum		values[1];
	Datum	   *elems;
	int			k;
	MemtxRec   *recs = palloc(sizeof(MemtxRec) * (n + 1));
	uint64		found;

	values[0] = PointerGetDatum(ids);
	MemtxExec(MemtxPlan(&plan,
						"SELECT r.* FROM memtx.records r WHERE r.id = ANY ($1) ORDER BY r.id",
						1, types),
			  values, NULL, 0);
	found = SPI_processed;
	for (uint64 j = 0; j < found && j < (uint64) n; j++)
		RecParse(SPI_tuptable->vals[j], SPI_tuptable->tupdesc, &recs[j]);
	deconstruct_array(ids, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, NULL, &k);
	for (int i = 0; i < k; i++)
		if ((uint64) i >= found || recs[i].id != DatumGetInt64(elems[i]) ||
			!(VisReadable(call->caller, &recs[i]) || VisReadable(agent, &recs[i])))
			RecNotFound(what, DatumGetInt64(elems[i]));
	return recs;
}

/* The one error for a record id that does not exist or may not be read. */
void
RecNotFound(const char *what, int64 id)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("%s %lld does not exist", what, (long long) id),
			 errdetail("Or the calling role may not read it.")));
}
