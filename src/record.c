/*
 * record.c — reading memtx records into C.
 *
 * RecDecode turns a full memtx.records row (SELECT r.*) into a MemtxRec,
 * in binary: the column positions are resolved once per result (RecLayout),
 * enum columns become C enums through their pg_enum OIDs (catalog.c) and
 * text columns are detoasted, never run through an output function;
 * RecIdArray and RecFetchByIds check and load the records a call names
 * (parents of a stage, inputs of an act), so both refuse NULLs, huge arrays
 * and unknown ids the same way, and an id the caller may not read like an
 * unknown one.
 */
#include "record.h"
#include "catalog.h"
#include "permissions.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

/* Readable by role: owner (or a member of it), a member of a reader, or public. */
bool
VisReadable(Oid role, MemtxRec *rec)
{
	if (rec->scope == MSC_PUBLIC)
		return true;
	if (!OidIsValid(role))
		return false;
	return MemtxRoleIsMember(role, rec->owner) || MemtxRoleInAny(role, rec->readers);
}

/* The attnum of column col in desc; every column RecDecode reads must be there. */
static AttrNumber
RecColumn(TupleDesc desc, const char *col)
{
	int			att = SPI_fnumber(desc, col);

	if (att <= 0)
		elog(ERROR, "memtx record row has no column \"%s\"", col);
	return (AttrNumber) att;
}

void
RecLayoutInit(RecLayout *layout, TupleDesc desc)
{
	layout->desc = desc;
	layout->id = RecColumn(desc, "id");
	layout->tx_id = RecColumn(desc, "tx_id");
	layout->state = RecColumn(desc, "state");
	layout->kind = RecColumn(desc, "kind");
	layout->scope = RecColumn(desc, "scope");
	layout->namespace = RecColumn(desc, "namespace");
	layout->entity = RecColumn(desc, "entity");
	layout->attribute = RecColumn(desc, "attribute");
	layout->source = RecColumn(desc, "source");
	layout->authority = RecColumn(desc, "authority");
	layout->confidence = RecColumn(desc, "confidence");
	layout->owner = RecColumn(desc, "owner");
	layout->readers = RecColumn(desc, "readers");
	layout->writers = RecColumn(desc, "writers");
	layout->observed_at = RecColumn(desc, "observed_at");
	layout->staged_xid = RecColumn(desc, "staged_xid");
	layout->staged_pos = RecColumn(desc, "staged_pos");
	layout->committed_xid = RecColumn(desc, "committed_xid");
	layout->committed_seq = RecColumn(desc, "committed_seq");
	layout->expected_head = RecColumn(desc, "expected_head");
}

/* A text column as a C string, NULL when null. */
static char *
RecText(HeapTuple tuple, TupleDesc desc, AttrNumber att)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, att, desc, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

void
RecDecode(const RecLayout *layout, HeapTuple tuple, MemtxRec *rec)
{
	TupleDesc	desc = layout->desc;
	bool		isnull;
	Datum		d;

	rec->pending = false;
	rec->id = DatumGetInt64(heap_getattr(tuple, layout->id, desc, &isnull));
	rec->tx_id = DatumGetInt64(heap_getattr(tuple, layout->tx_id, desc, &isnull));
	rec->state = (MemtxState) CatalogEnumIndex(ME_STATE,
											   heap_getattr(tuple, layout->state, desc, &isnull));
	rec->kind = (MemtxKind) CatalogEnumIndex(ME_KIND,
											 heap_getattr(tuple, layout->kind, desc, &isnull));
	rec->scope = (MemtxScope) CatalogEnumIndex(ME_SCOPE,
											   heap_getattr(tuple, layout->scope, desc, &isnull));
	rec->namespace = RecText(tuple, desc, layout->namespace);
	rec->entity = RecText(tuple, desc, layout->entity);
	rec->attribute = RecText(tuple, desc, layout->attribute);
	rec->source = RecText(tuple, desc, layout->source);
	rec->authority = DatumGetFloat8(heap_getattr(tuple, layout->authority, desc, &isnull));
	rec->confidence = DatumGetFloat8(heap_getattr(tuple, layout->confidence, desc, &isnull));
	rec->owner = RecText(tuple, desc, layout->owner);
	d = heap_getattr(tuple, layout->readers, desc, &isnull);
	rec->readers = isnull ? NULL : DatumGetArrayTypeP(d);
	d = heap_getattr(tuple, layout->writers, desc, &isnull);
	rec->writers = isnull ? NULL : DatumGetArrayTypeP(d);
	d = heap_getattr(tuple, layout->observed_at, desc, &isnull);
	rec->has_observed = !isnull;
	rec->observed_at = isnull ? 0 : DatumGetTimestampTz(d);
	rec->staged_xid = DatumGetFullTransactionId(heap_getattr(tuple, layout->staged_xid, desc, &isnull));
	rec->staged_pos = DatumGetInt64(heap_getattr(tuple, layout->staged_pos, desc, &isnull));
	rec->committed_xid = heap_getattr(tuple, layout->committed_xid, desc, &isnull);
	rec->committed = !isnull;
	d = heap_getattr(tuple, layout->committed_seq, desc, &isnull);
	rec->committed_seq = isnull ? 0 : DatumGetInt64(d);
	d = heap_getattr(tuple, layout->expected_head, desc, &isnull);
	rec->expected_head = isnull ? -1 : DatumGetInt64(d);
}

/* Rows 0..n of tt, decoded with one layout; room for n + 1 records. */
MemtxRec *
RecDecodeAll(SPITupleTable *tt, uint64 n)
{
	MemtxRec   *recs = palloc(sizeof(MemtxRec) * (n + 1));
	RecLayout	layout;

	if (n == 0)
		return recs;
	RecLayoutInit(&layout, tt->tupdesc);
	for (uint64 i = 0; i < n; i++)
		RecDecode(&layout, tt->vals[i], &recs[i]);
	return recs;
}

/* Decode one row (a caller that loops over a result keeps a RecLayout). */
void
RecParse(HeapTuple tuple, TupleDesc desc, MemtxRec *rec)
{
	RecLayout	layout;

	RecLayoutInit(&layout, desc);
	RecDecode(&layout, tuple, rec);
}

Datum
RecIdsDatum(Datum *ids, int n)
{
	return PointerGetDatum(construct_array(ids, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* RecIdsDatum of C integers */
Datum
RecIdsDatumOf(const int64 *ids, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * (n + 1));

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(ids[i]);
	return RecIdsDatum(d, n);
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
 * "what"): an error must not tell whether an unreadable record exists.  So
 * is one of another namespace than ns: no memtx operation spans two
 * namespaces (SPEC §3), and a router (§20), which runs the call on ns's
 * node, finds no such record there.
 */
MemtxRec *
RecFetchByIds(MemtxCall *call, Oid agent, ArrayType *ids, int n, const char *what,
			  const char *ns)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID};
	Datum		values[1];
	Datum	   *elems;
	int			k;
	MemtxRec   *recs;
	uint64		found;

	values[0] = PointerGetDatum(ids);
	MemtxExec(MemtxPlan(&plan,
						"SELECT r.* FROM memtx.records r WHERE r.id = ANY ($1) ORDER BY r.id",
						1, types),
			  values, NULL, 0);
	found = Min(SPI_processed, (uint64) n);
	recs = RecDecodeAll(SPI_tuptable, found);
	deconstruct_array(ids, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, NULL, &k);
	for (int i = 0; i < k; i++)
		if ((uint64) i >= found || recs[i].id != DatumGetInt64(elems[i]) ||
			!(VisReadable(call->caller, &recs[i]) || VisReadable(agent, &recs[i])))
			RecNotFound(what, DatumGetInt64(elems[i]));
		else if (strcmp(recs[i].namespace, ns) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("%s %lld does not exist", what, (long long) recs[i].id),
					 errdetail("Not in the transaction's namespace: no memtx operation spans two namespaces.")));
	return recs;
}

/*
 * Record id for a call that its owner or a harness may make (revoke, embed;
 * verb names it in the error): 42704 when it does not exist or the caller
 * may not read it, 42501 when the caller may read it but does not own it.
 */
void
RecFetchOwned(MemtxCall *call, int64 id, const char *verb, MemtxRec *rec)
{
	static SPIPlanPtr load;
	static const Oid types[] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};

	MemtxExec(MemtxPlan(&load, "SELECT r.* FROM memtx.records r WHERE r.id = $1", 1, types),
			  values, NULL, 1);
	if (SPI_processed == 0)
		RecNotFound("record", id);
	RecParse(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, rec);
	if (MemtxIsHarness(call->caller))
		return;
	/* a record the caller may not read answers as one that does not exist */
	if (!VisReadable(call->caller, rec))
		RecNotFound("record", id);
	if (!MemtxRoleIsMember(call->caller, rec->owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to %s record %lld", verb, (long long) id),
				 errdetail("Only its owner or a harness may %s it.", verb)));
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
