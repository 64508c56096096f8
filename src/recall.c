/*
 * recall.c — memtx.recall and memtx.lookup (SPEC §14), and memtx.search.
 *
 * memtx.recall is memtx.read by relevance: the same preconditions, the same
 * visibility, the same read set, only the candidates differ.  They come
 * from the GIN index records_recall_idx over memtx.recall_document(entity,
 * attribute, value), the one definition of the document, which the index
 * and the query below both call (a SQL-standard body is inlined, so the
 * planner matches the two).  The index holds every record whatever its
 * state, because raw_read exposes every state and a transaction sees its own
 * tentative records; visibility is decided afterwards by VisVisibleMany,
 * the code memtx.read uses, never re-stated here.
 *
 * The answer must be the best k of the matches visible to the transaction,
 * not the best k of all matches filtered afterwards (which would return
 * fewer than k, or none, whenever the top matches are invisible).  So the
 * matches are read through a cursor in rank order (rank descending, id
 * ascending: a total order, so the answer is deterministic) in batches that
 * grow (at least doubling, sized by the share of visible rows seen so far),
 * each batch is filtered in one visibility pass, and reading stops once k
 * visible rows are found.  Ranking needs every match in the
 * namespace (the sort sees them all); what the batches save is the parsing
 * and the visibility work on the matches below the k-th visible one.
 *
 * The full-text probe runs in a materialized CTE that holds only the match
 * condition, so the planner can answer it only through the GIN index; the
 * namespace and prefix filters apply to its result.  A namespace condition
 * inside it could tempt the planner into walking the slot index over a
 * whole namespace, which is a scan of the store by another name.
 *
 * Every row recall returns joins the read set exactly as memtx.read's do
 * (ReadSetJoin), so the flow-control rule of §4 3c covers recalled values.
 *
 * The query, the text cursor and the batched visible scan are shared
 * (recall.h): memtx.recall_similar (vector.c) reads its vector list
 * through VisScan too, and its hybrid form takes the text list from
 * RetrievalTextOpen, so both recalls have one definition of what a
 * transaction may see and of the text ranking.
 *
 * memtx.lookup needs no memtx transaction: the active records on a slot (or
 * an entity) that the calling role may read, in id order, read at whatever
 * snapshot the SQL statement has.  It writes nothing (no read set, no lease,
 * no xid, no sequence, no row lock), so it runs at any SQL isolation level
 * and on a hot standby, where memtx.read and memtx.recall refuse.  Tenancy
 * governs it as it governs transactions (SPEC §17): a namespace other than
 * "default" answers only its members and harnesses, with the same error
 * whether the namespace exists or not.
 *
 * valid_at (SPEC §18) keeps the records whose validity contains it: a store
 * with time-to-live writes valid = [now, now + ttl) and reads at now, so an
 * expired item disappears from lookup and recall without any retraction.
 */
#include "readset.h"
#include "permissions.h"
#include "recall.h"
#include "visibility.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/value.h"
#include "tsearch/ts_type.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/*
 * The largest query: its text in bytes, and the items (terms and operators)
 * of its parsed form.  An agent's question is a sentence or a paragraph; a
 * query of hundreds of thousands of terms would keep a backend busy for
 * minutes (the index scan compares every term with every other to merge
 * duplicates), so it is refused like any other over-long argument.
 */
#define RECALL_MAX_QUERY_BYTES 65536
#define RECALL_MAX_QUERY_ITEMS 2048

void
RetrievalCheckK(int32 k)
{
	if (k < 1 || k > RETRIEVAL_MAX_K)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("k must be between 1 and %d, got %d", RETRIEVAL_MAX_K, k)));
}

TSQuery
RetrievalQuery(Datum query)
{
	static Oid	english = InvalidOid;
	text	   *raw = DatumGetTextPP(query);
	TSQuery		parsed;

	if (VARSIZE_ANY_EXHDR(raw) > RECALL_MAX_QUERY_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("recall query is too long (%d bytes, at most %d)",
						(int) VARSIZE_ANY_EXHDR(raw), RECALL_MAX_QUERY_BYTES)));
	if (!OidIsValid(english))
		english = get_ts_config_oid(list_make2(makeString("pg_catalog"),
											   makeString("english")), false);
	parsed = DatumGetTSQuery(DirectFunctionCall2(websearch_to_tsquery_byid,
												 ObjectIdGetDatum(english),
												 PointerGetDatum(raw)));
	if (parsed->size > RECALL_MAX_QUERY_ITEMS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("recall query has too many terms (%d items, at most %d)",
						parsed->size, RECALL_MAX_QUERY_ITEMS),
				 errdetail("A parsed query's items are its terms and the operators between them.")));
	return parsed;
}

/*
 * The text of RetrievalTextOpen's query; states is the probe's state
 * condition: none for a transaction's recall, which may see any state
 * (records_recall_idx), the active states for memtx.search, whose probe goes
 * through records_recall_active_idx and so neither reads nor ranks the
 * versions a slot's updates superseded.
 */
#define RETRIEVAL_TEXT_SQL(states) \
	"WITH m AS MATERIALIZED (" \
	"  SELECT r.* FROM memtx.records r" \
	"   WHERE memtx.recall_document(r.entity, r.attribute, r.value) @@ $2" states ") " \
	"SELECT m.*, ts_rank(memtx.recall_document(m.entity, m.attribute, m.value), $2)" \
	"       AS recall_rank" \
	"  FROM m WHERE m.namespace = $1" \
	"   AND ($3 IS NULL OR starts_with(m.entity, $3))" \
	"   AND ($4 IS NULL OR m.valid @> $4)" \
	" ORDER BY recall_rank DESC, m.id"

Portal
RetrievalTextOpen(const char *ns, TSQuery query, Datum prefix, bool no_prefix,
				  Datum valid_at, bool no_valid_at, bool active_only)
{
	static SPIPlanPtr any_state;
	static SPIPlanPtr active;
	static const Oid types[] = {TEXTOID, TSQUERYOID, TEXTOID, TIMESTAMPTZOID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', no_prefix ? 'n' : ' ', no_valid_at ? 'n' : ' '};
	Portal		portal;

	values[0] = CStringGetTextDatum(ns);
	values[1] = PointerGetDatum(query);
	values[2] = prefix;
	values[3] = valid_at;
	portal = SPI_cursor_open(NULL,
							 active_only
							 ? MemtxPlan(&active, RETRIEVAL_TEXT_SQL(" AND memtx.is_active(r.state)"),
										 4, types)
							 : MemtxPlan(&any_state, RETRIEVAL_TEXT_SQL(""), 4, types),
							 values, nulls, false);
	if (portal == NULL)
		elog(ERROR, "SPI_cursor_open failed: %s", SPI_result_code_string(SPI_result));
	return portal;
}

/*
 * What memtx.recall and memtx.search keep of the visible matches: their rows
 * and (recall's, for the read set) their ids.
 */
typedef struct RecallOut
{
	ReturnSetInfo *rsinfo;
	Datum	   *returned;		/* NULL: the ids are not kept */
	int			nreturned;
	int			k;
} RecallOut;

static void
RecallOutInit(RecallOut *out, FunctionCallInfo fcinfo, int k, bool keep_ids)
{
	out->rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	out->returned = keep_ids ? palloc(sizeof(Datum) * k) : NULL;
	out->nreturned = 0;
	out->k = k;
}

static bool
RecallEmit(MemtxRec *rec, HeapTuple tuple, TupleDesc desc, void *arg)
{
	RecallOut  *out = (RecallOut *) arg;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	bool		isnull;

	values[0] = Int64GetDatum(rec->id);
	values[1] = CStringGetTextDatum(rec->entity);
	values[2] = CStringGetTextDatum(rec->attribute);
	values[3] = SPI_getbinval(tuple, desc, SPI_fnumber(desc, "value"), &isnull);
	values[4] = SPI_getbinval(tuple, desc, SPI_fnumber(desc, "recall_rank"), &isnull);
	tuplestore_putvalues(out->rsinfo->setResult, out->rsinfo->setDesc, values, nulls);
	if (out->returned != NULL)
		out->returned[out->nreturned] = Int64GetDatum(rec->id);
	return ++out->nreturned == out->k;
}

/*
 * memtx.recall(tx, query, k, entity_prefix, valid_at) →
 *     TABLE (record_id, entity, attribute, value, rank)
 *
 * The best k matches of query visible to tx (and valid at valid_at, when
 * given: SPEC §18), best first; they join tx's read set.
 */
PG_FUNCTION_INFO_V1(memtx_recall);
Datum
memtx_recall(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	MemtxTxn   *t;
	int32		k;
	TSQuery		query;
	RecallOut	out;

	MemtxRequireArg(fcinfo, 1, "query");
	MemtxRequireArg(fcinfo, 2, "k");
	k = PG_GETARG_INT32(2);
	RetrievalCheckK(k);
	t = VisReadBegin(fcinfo, &call, "memtx.recall");

	query = RetrievalQuery(PG_GETARG_DATUM(1));
	if (query->size == 0)
	{
		/* empty, or stop words only: matches nothing */
		MemtxCallEnd(&call);
		return (Datum) 0;
	}

	RecallOutInit(&out, fcinfo, k, true);
	VisScan(t, RetrievalTextOpen(t->namespace, query, PG_GETARG_DATUM(3), PG_ARGISNULL(3),
								 PG_GETARG_DATUM(4), PG_ARGISNULL(4), false),
			k, RECALL_MAX_BATCH, RecallEmit, &out);

	ReadSetJoin(t, out.returned, out.nreturned);
	MemtxCallEnd(&call);
	return (Datum) 0;
}

/*
 * memtx.search(query, k, entity_prefix, namespace, valid_at) →
 *     TABLE (record_id, entity, attribute, value, rank)
 *
 * memtx.recall's ranking over memtx.lookup's records: the best k matches of
 * query among the active records of namespace that the caller may read
 * (valid at valid_at when given), best first, with no memtx transaction, no
 * read set and no write, so a store's search reads what its get reads.
 * Served by the GIN index of the active records' documents (a slot's
 * superseded versions are neither read nor ranked); the caller's
 * readability is judged after the probe, as recall judges
 * visibility (a row-level-security query could not use the index: the
 * full-text match is not leakproof).  Tenancy as lookup's.
 */
PG_FUNCTION_INFO_V1(memtx_search);
Datum
memtx_search(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	int32		k;
	TSQuery		query;
	RecallOut	out;
	char	   *ns;

	MemtxRequireArg(fcinfo, 0, "query");
	MemtxRequireArg(fcinfo, 1, "k");
	MemtxRequireArg(fcinfo, 3, "namespace");
	k = PG_GETARG_INT32(1);
	RetrievalCheckK(k);
	ns = text_to_cstring(PG_GETARG_TEXT_PP(3));
	InitMaterializedSRF(fcinfo, 0);
	MemtxCallBeginAudit(&call);
	MemtxRequireNamespaceReader(&call, ns);

	query = RetrievalQuery(PG_GETARG_DATUM(0));
	if (query->size > 0)
	{
		RecallOutInit(&out, fcinfo, k, false);
		VisScanCurrent(call.caller,
					   RetrievalTextOpen(ns, query, PG_GETARG_DATUM(2), PG_ARGISNULL(2),
										 PG_GETARG_DATUM(4), PG_ARGISNULL(4), true),
					   k, RECALL_MAX_BATCH, RecallEmit, &out);
	}
	MemtxCallEnd(&call);
	return (Datum) 0;
}

/*
 * memtx.lookup(entity, attribute, namespace, valid_at) → SETOF memtx.records
 *
 * The active records on the slot (or the entity, when attribute is NULL)
 * that the caller may read, in id order, valid at valid_at when it is given
 * (SPEC §18); no transaction, no write.  A namespace other than "default"
 * answers its members and harnesses only (SPEC §17).
 */
PG_FUNCTION_INFO_V1(memtx_lookup);
Datum
memtx_lookup(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr by_slot;
	static SPIPlanPtr by_entity;
	static const Oid types[] = {TEXTOID, TEXTOID, TIMESTAMPTZOID, TEXTOID};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	Datum		values[4];
	char		nulls[4] = {' ', ' ', PG_ARGISNULL(3) ? 'n' : ' ', ' '};
	SPIPlanPtr	plan;

	MemtxRequireArg(fcinfo, 0, "entity");
	MemtxRequireArg(fcinfo, 2, "namespace");
	InitMaterializedSRF(fcinfo, 0);
	MemtxCallBeginAudit(&call);
	MemtxRequireNamespaceReader(&call, text_to_cstring(PG_GETARG_TEXT_PP(2)));

	values[0] = PG_GETARG_DATUM(2);
	values[1] = PG_GETARG_DATUM(0);
	values[2] = PG_ARGISNULL(3) ? (Datum) 0 : PG_GETARG_DATUM(3);
	if (!PG_ARGISNULL(1))
	{
		values[3] = PG_GETARG_DATUM(1);
		/*
		 * Through the single-truth index, which holds the active records
		 * only, so a slot's history (every superseded version) is never
		 * read.  The probe names the index's columns alone: given the
		 * entity and attribute too, the generic plan prefers the slot
		 * index, whose three equalities look as selective and which holds
		 * every version (a slot updated 5,000 times: 6,000 rows read per
		 * get, test/sql/hot_history.sql).  Entity and attribute are compared
		 * after the probe (OFFSET 0 keeps them out of it).
		 */
		plan = MemtxPlan(&by_slot,
						 "SELECT r.* FROM (SELECT * FROM memtx.records x "
						 "  WHERE memtx.slot_key(x.namespace, x.entity, x.attribute) "
						 "        = memtx.slot_key($1, $2, $4) "
						 "    AND memtx.slot_digest(x.namespace, x.entity, x.attribute) "
						 "        = memtx.slot_digest($1, $2, $4) "
						 "    AND x.namespace = $1 AND memtx.is_active(x.state) "
						 "    AND ($3 IS NULL OR x.valid @> $3) OFFSET 0) r "
						 "WHERE r.entity = $2 AND r.attribute = $4 ORDER BY r.id",
						 4, types);
	}
	else

		/*
		 * The entity's records through the slot index, active ones kept
		 * below: with the state in the query, the planner may intersect
		 * the slot index with the whole partial index of active records
		 * (test/sql/hot_paths.sql).
		 */
		plan = MemtxPlan(&by_entity,
						 "SELECT r.* FROM memtx.records r WHERE r.namespace = $1 "
						 "AND r.entity = $2 AND ($3 IS NULL OR r.valid @> $3) ORDER BY r.id",
						 3, types);
	MemtxExec(plan, values, nulls, 0);

	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemtxRec	rec;

		RecParse(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, &rec);
		if (MEMTX_IS_ACTIVE(rec.state) && VisReadable(call.caller, &rec))
			tuplestore_puttuple(rsinfo->setResult, SPI_tuptable->vals[i]);
	}
	MemtxCallEnd(&call);
	return (Datum) 0;
}
