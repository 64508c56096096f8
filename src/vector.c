/*
 * vector.c — semantic recall (SPEC §19): the C functions of the companion
 * extension memtx_vector, in memtx's own module.
 *
 * memtx never depends on pgvector: this file includes no pgvector header
 * and the module links nothing of it.  The functions below are declared by
 * memtx_vector's SQL (sql/memtx_vector.sql), which requires pgvector's
 * `vector`; a vector reaches them as an opaque Datum of the type their
 * arguments are declared with, found at call time (get_fn_expr_argtype),
 * and is handed to SPI with that type.  What C needs to know of a vector —
 * its dimensions, whether it is all zeros — it asks through pgvector's cast
 * to real[]; the distance operator and the type with the model's
 * dimensions are named through the type's own schema, wherever CREATE
 * EXTENSION put it.  Without memtx_vector none of this runs, and CREATE
 * EXTENSION memtx needs nothing of it.
 *
 * memtx.recall_similar is memtx.read by similarity, like memtx.recall by
 * relevance: VisReadBegin's preconditions, VisVisibleMany's one definition
 * of what a transaction sees, ReadSetJoin for the read set, and the batched
 * cursor of VisScan (visscan.c) that keeps the visible rows and
 * stops at k.  Its candidates come from the model's HNSW index
 * (memtx.embedding_model_index: a partial index on the embedding cast to the
 * model's dimensions, WHERE model = the model), through a query that states
 * the same expression and predicate, so the planner answers it from that
 * index (test/vector: EXPLAIN, and the index's scan count).  The query text
 * therefore holds the model's name (checked against ^[A-Za-z0-9_.:-]{1,64}$
 * at registration and by the registry's CHECK, and quoted), its dimensions
 * and its distance operator: it is composed from the registry, never from a
 * caller's argument, and kept as a prepared plan per model (VectorPlans);
 * the vector, namespace, prefix and instant are parameters.
 *
 * The visibility filter runs inside the index scan.  The cursor pulls rows
 * from the index as VisScan asks for batches; with
 * hnsw.iterative_scan on (the function sets it), pgvector's scan goes on
 * past hnsw.ef_search candidates for as long as rows are asked for, so a
 * store where most embeddings are invisible to the caller still yields k
 * visible rows, read in distance order, instead of the ef_search nearest
 * filtered afterwards (which returns fewer than k, or none).
 *
 * Ordering.  The answer is exactly ordered by (distance, id): the rows the
 * scan keeps are sorted before they are returned.  The scan runs with
 * hnsw.iterative_scan = relaxed_order.  With strict_order pgvector never
 * returns a row nearer than one it returned before: a candidate its resumed
 * search finds late, nearer than rows already returned, is dropped.  A
 * filtered scan resumes often, so strict_order loses true neighbours:
 * recall@10 at the default ef_search with 90% of a 100k store invisible,
 * 0.959 strict against 0.973 relaxed (bench scenario 12's data), and 0.91
 * against 0.97 on a 20k store where the visible records lay away from the
 * queries.  relaxed_order returns them, late;
 * so the scan keeps the first k visible rows and then every visible row no
 * farther than the k-th nearest kept so far, and stops at the first visible
 * row beyond it.  Ties at the k-th distance are all read, so which of them
 * are returned depends on ids only.
 *
 * The exact fallback.  pgvector ends an iterative scan after
 * hnsw.max_scan_tuples candidates (20,000 by default) or at its memory
 * bound; a namespace holding few of a model's embeddings, or a caller who
 * may see few of them, can exhaust it before k visible rows turn up.  When
 * the index scan ends with fewer than k visible rows, the call searches
 * exactly instead: the namespace's embeddings of the model (through the
 * btree embeddings_namespace_idx, not the store), ordered by exact distance
 * then id, through the same visible scan.  So recall_similar returns k
 * rows whenever k visible embedded records exist, and its answer is exact
 * whenever the index could not fill it.
 *
 * Hybrid.  With a text query, the vector list (the k nearest visible rows)
 * and the text list (memtx.recall's k best visible matches, through
 * RetrievalTextOpen and VisScan) are fused by reciprocal rank: score
 * = Σ 1/(60 + position), positions from 1 in each list, a list that does
 * not hold a row contributing nothing; rank is that score, descending,
 * then id; distance is NULL for a row only the text matched.  Without a
 * query rank is the same score of the vector list alone.
 *
 * memtx.embed writes one row of memtx.embeddings.  It takes the writer lock
 * of the caller (a fenced role writes nothing, fence.c) and its record's
 * namespace lock shared, as writers of records do (locks.c): memtx.erase
 * holds that lock exclusive while its trigger deletes the record's
 * embeddings (sql/memtx_vector.sql), so an embed either commits before the
 * erasure reads the embeddings, or waits for it and then finds the record
 * erased.  register_embedding_model writes the registry row; the registry's
 * trigger builds the index.
 */
#include "fenceadmit.h"
#include "permissions.h"
#include "locks.h"
#include "readset.h"
#include "recall.h"
#include "visibility.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include <math.h>

/* The largest model (pgvector's HNSW index takes vectors up to 2,000 dimensions). */
#define VECTOR_MAX_DIMS 2000
#define VECTOR_MAX_NAME 64
/* Reciprocal rank fusion's constant (SPEC §19). */
#define VECTOR_RRF_K 60

typedef enum VectorDistance
{
	VD_COSINE,
	VD_L2,
	VD_INNER_PRODUCT,
	VD_NDISTANCES
} VectorDistance;

/* A model's distance names and pgvector's operator for each. */
static const char *const VectorDistanceNames[] = {"cosine", "l2", "inner_product"};
static const char *const VectorOperators[] = {"<=>", "<->", "<#>"};

StaticAssertDecl(lengthof(VectorDistanceNames) == VD_NDISTANCES, "a name per distance");
StaticAssertDecl(lengthof(VectorOperators) == VD_NDISTANCES, "an operator per distance");

typedef struct VectorModel
{
	char		name[VECTOR_MAX_NAME + 1];
	int32		dims;
	VectorDistance distance;
} VectorModel;

/* The kept search plans of a model (hash entry, keyed by name). */
typedef struct VectorPlans
{
	char		name[VECTOR_MAX_NAME + 1];
	int32		dims;
	VectorDistance distance;
	Oid			vtype;
	SPIPlanPtr	approximate;
	SPIPlanPtr	exact;
} VectorPlans;

static HTAB *VectorPlanCache;

static VectorDistance
VectorDistanceOf(const char *name)
{
	for (int d = 0; d < VD_NDISTANCES; d++)
		if (strcmp(name, VectorDistanceNames[d]) == 0)
			return (VectorDistance) d;
	return VD_NDISTANCES;
}

/*
 * A kept plan whose parameters include a vector: prepared again when the
 * vector type is another than the one it was prepared for (the extension
 * was dropped and created again).
 */
static SPIPlanPtr
VectorTypedPlan(SPIPlanPtr *slot, Oid *slot_type, Oid vtype, const char *sql,
				int nargs, Oid *types)
{
	if (*slot != NULL && *slot_type != vtype)
	{
		SPI_freeplan(*slot);
		*slot = NULL;
	}
	*slot_type = vtype;
	return MemtxPlan(slot, sql, nargs, types);
}

/* Column col of row row of the current SPI result, an integer (NULL: 0). */
static int32
VectorGetInt32(int row, int col)
{
	bool		isnull;
	Datum		d = MemtxGet(row, col, &isnull);

	return isnull ? 0 : DatumGetInt32(d);
}

/* The registered model named by name; 42704 when there is none. */
static void
VectorModelGet(Datum name, VectorModel *m)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID};
	char	   *distance;

	MemtxExec(MemtxPlan(&plan,
						"SELECT m.name, m.dims, m.distance FROM memtx.embedding_models m WHERE m.name = $1",
						1, types),
			  &name, NULL, 1);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("embedding model \"%s\" does not exist", TextDatumGetCString(name)),
				 errhint("A harness registers models with memtx.register_embedding_model.")));
	strlcpy(m->name, MemtxGetText(0, 1), sizeof(m->name));
	m->dims = VectorGetInt32(0, 2);
	distance = MemtxGetText(0, 3);
	m->distance = VectorDistanceOf(distance);
	if (m->distance == VD_NDISTANCES)
		elog(ERROR, "embedding model \"%s\" has unknown distance \"%s\"", m->name, distance);
}

/*
 * Refuse a vector (argument what) that does not fit model m: its
 * dimensions must be the model's, and a cosine model cannot place the zero
 * vector, which has no direction (its cosine distance to anything is NaN,
 * and pgvector's index leaves it out).  pgvector's own input refuses NaN
 * and infinite elements, so every vector is finite.
 */
static void
VectorCheck(const VectorModel *m, Datum vector, Oid vtype, const char *what)
{
	static SPIPlanPtr plan;
	static Oid	plan_type;
	Oid			types[] = {vtype};
	int32		dims;

	MemtxExec(VectorTypedPlan(&plan, &plan_type, vtype,
							  "SELECT pg_catalog.array_length(CAST($1 AS real[]), 1),"
							  "       NOT EXISTS (SELECT FROM pg_catalog.unnest(CAST($1 AS real[])) x WHERE x <> 0)",
							  1, types),
			  &vector, NULL, 1);
	dims = VectorGetInt32(0, 1);
	if (dims != m->dims)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has %d dimensions, model \"%s\" has %d", what, dims, m->name, m->dims)));
	if (m->distance == VD_COSINE && MemtxGetBool(0, 2))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is the zero vector, which has no cosine distance", what),
				 errdetail("Model \"%s\" compares vectors by cosine distance.", m->name)));
}

/*
 * The query text of a model's search: memtx.records rows of the model's
 * embeddings in namespace $2 (entities starting with $3, valid at $4, when
 * not NULL) with their distance to $1 as recall_distance, nearest first.
 * Approximate: the expression and predicate of the model's HNSW index, in
 * its order.  Exact: the distance of the uncast column (which no HNSW index
 * answers), in exact (distance, id) order.
 */
static char *
VectorSearchSql(const VectorModel *m, Oid vtype, bool exact)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(vtype));
	char	   *schema;
	char	   *distance;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for type %u", vtype);
	schema = get_namespace_name(((Form_pg_type) GETSTRUCT(tup))->typnamespace);
	ReleaseSysCache(tup);

	distance = psprintf("%s OPERATOR(%s.%s) $1",
						exact ? "e.embedding" :
						psprintf("(e.embedding::%s)",
								 format_type_extended(vtype, m->dims,
													  FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY)),
						quote_identifier(schema), VectorOperators[m->distance]);
	/*
	 * Each row's record by its id (OFFSET 0: one probe of the primary key per
	 * row, never a join over the namespace, whatever the estimates).
	 */
	return psprintf("SELECT r.*, %s AS recall_distance"
					"  FROM memtx.embeddings e"
					"  CROSS JOIN LATERAL (SELECT x.* FROM memtx.records x WHERE x.id = e.record_id OFFSET 0) r"
					" WHERE e.model = %s AND e.namespace = $2 AND r.namespace = e.namespace"
					"   AND ($3 IS NULL OR pg_catalog.starts_with(r.entity, $3))"
					"   AND ($4 IS NULL OR r.valid @> $4)"
					" ORDER BY %s",
					distance, quote_literal_cstr(m->name),
					exact ? "recall_distance, r.id" : distance);
}

/* The kept search plans of model m for vector type vtype. */
static VectorPlans *
VectorPlansGet(const VectorModel *m, Oid vtype)
{
	VectorPlans *p;
	bool		found;
	Oid			types[] = {vtype, TEXTOID, TEXTOID, TIMESTAMPTZOID};

	if (VectorPlanCache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = VECTOR_MAX_NAME + 1;
		ctl.entrysize = sizeof(VectorPlans);
		VectorPlanCache = hash_create("memtx vector plans", 16, &ctl, HASH_ELEM | HASH_STRINGS);
	}
	p = hash_search(VectorPlanCache, m->name, HASH_ENTER, &found);
	if (found && (p->dims != m->dims || p->distance != m->distance || p->vtype != vtype))
	{
		/* the extension was dropped and the model registered again */
		SPI_freeplan(p->approximate);
		SPI_freeplan(p->exact);
		found = false;
	}
	if (!found)
	{
		p->approximate = p->exact = NULL;
		p->dims = m->dims;
		p->distance = m->distance;
		p->vtype = vtype;
		PG_TRY();
		{
			(void) MemtxPlan(&p->approximate, VectorSearchSql(m, vtype, false), 4, types);
			(void) MemtxPlan(&p->exact, VectorSearchSql(m, vtype, true), 4, types);
		}
		PG_CATCH();
		{
			if (p->approximate)
				SPI_freeplan(p->approximate);
			hash_search(VectorPlanCache, m->name, HASH_REMOVE, NULL);
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
	return p;
}

/* A row a list keeps: copied out of the batch that read it. */
typedef struct VectorHit
{
	int64		id;
	char	   *entity;
	char	   *attribute;
	Datum		value;
	double		distance;		/* vector list */
	float4		text_rank;		/* text list */
	double		score;			/* fused */
	bool		in_vector;
} VectorHit;

typedef struct VectorList
{
	MemoryContext cxt;
	VectorHit  *hits;
	int			n;
	int			cap;
	int			k;
	double		kth;			/* the k-th smallest distance kept, once n >= k */
} VectorList;

static int
VectorCompareDistance(const void *a, const void *b)
{
	const VectorHit *x = a;
	const VectorHit *y = b;

	/* NaN (a distance pgvector can give only to a zero vector) sorts last */
	if (x->distance != y->distance)
	{
		if (isnan(x->distance) || isnan(y->distance))
			return isnan(x->distance) ? (isnan(y->distance) ? 0 : 1) : -1;
		return x->distance < y->distance ? -1 : 1;
	}
	return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

static VectorHit *
VectorListAdd(VectorList *list, MemtxRec *rec, HeapTuple tuple, TupleDesc desc)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(list->cxt);
	VectorHit  *h;
	bool		isnull;

	if (list->n == list->cap)
	{
		list->cap *= 2;
		list->hits = repalloc(list->hits, sizeof(VectorHit) * list->cap);
	}
	h = &list->hits[list->n++];
	memset(h, 0, sizeof(*h));
	h->id = rec->id;
	h->entity = pstrdup(rec->entity);
	h->attribute = pstrdup(rec->attribute);
	h->value = PointerGetDatum(PG_DETOAST_DATUM_COPY(SPI_getbinval(tuple, desc,
																   SPI_fnumber(desc, "value"),
																   &isnull)));
	MemoryContextSwitchTo(oldcxt);
	return h;
}

static void
VectorListInit(VectorList *list, int k)
{
	list->cxt = CurrentMemoryContext;
	list->k = k;
	list->n = 0;
	list->cap = k + 1;
	list->hits = palloc(sizeof(VectorHit) * list->cap);
	list->kth = 0;
}

/*
 * The vector list: keep the first k visible rows, then every row no
 * farther than the k-th nearest kept (a late nearer row of the relaxed
 * scan, or a tie), and stop at the first row beyond it.  The exact query
 * arrives in order, so it stops after the k-th row's ties.
 */
static bool
VectorNearestEmit(MemtxRec *rec, HeapTuple tuple, TupleDesc desc, void *arg)
{
	VectorList *list = (VectorList *) arg;
	bool		isnull;
	double		distance = DatumGetFloat8(SPI_getbinval(tuple, desc,
														SPI_fnumber(desc, "recall_distance"),
														&isnull));
	VectorHit  *h;

	if (list->n >= list->k && !(distance <= list->kth))
		return true;
	h = VectorListAdd(list, rec, tuple, desc);
	h->distance = distance;
	h->in_vector = true;
	if (list->n >= list->k)
	{
		qsort(list->hits, list->n, sizeof(VectorHit), VectorCompareDistance);
		list->kth = list->hits[list->k - 1].distance;
	}
	return false;
}

/* The text list: memtx.recall's first k visible matches, best first. */
static bool
VectorTextEmit(MemtxRec *rec, HeapTuple tuple, TupleDesc desc, void *arg)
{
	VectorList *list = (VectorList *) arg;
	bool		isnull;
	VectorHit  *h = VectorListAdd(list, rec, tuple, desc);

	h->text_rank = DatumGetFloat4(SPI_getbinval(tuple, desc, SPI_fnumber(desc, "recall_rank"), &isnull));
	return list->n == list->k;
}

/* The k nearest rows visible to t under the model, nearest first, into list. */
static void
VectorNearest(MemtxTxn *t, const VectorModel *m, Oid vtype, FunctionCallInfo fcinfo,
			  VectorList *list)
{
	VectorPlans *plans = VectorPlansGet(m, vtype);
	Datum		values[4];
	char		nulls[4] = {' ', ' ', PG_ARGISNULL(4) ? 'n' : ' ', PG_ARGISNULL(6) ? 'n' : ' '};
	Portal		portal;

	values[0] = PG_GETARG_DATUM(1);
	values[1] = CStringGetTextDatum(t->namespace);
	values[2] = PG_ARGISNULL(4) ? (Datum) 0 : PG_GETARG_DATUM(4);
	values[3] = PG_ARGISNULL(6) ? (Datum) 0 : PG_GETARG_DATUM(6);
	portal = SPI_cursor_open(NULL, plans->approximate, values, nulls, false);
	if (portal == NULL)
		elog(ERROR, "SPI_cursor_open failed: %s", SPI_result_code_string(SPI_result));
	/* batches of k + 1 rows first: the row after the k-th ends the list */
	(void) VisScan(t, portal, list->k + 1, RECALL_MAX_BATCH, VectorNearestEmit, list);
	if (list->n < list->k)
	{
		/* the index gave out first: search the namespace's embeddings exactly */
		list->n = 0;
		portal = SPI_cursor_open(NULL, plans->exact, values, nulls, false);
		if (portal == NULL)
			elog(ERROR, "SPI_cursor_open failed: %s", SPI_result_code_string(SPI_result));
		(void) VisScan(t, portal, list->k + 1, RECALL_MAX_BATCH, VectorNearestEmit, list);
	}
	qsort(list->hits, list->n, sizeof(VectorHit), VectorCompareDistance);
	list->n = Min(list->n, list->k);
}

static int
VectorCompareId(const void *a, const void *b)
{
	const VectorHit *x = a;
	const VectorHit *y = b;

	return x->id < y->id ? -1 : (x->id > y->id ? 1 : 0);
}

/* Fused order: rank (the score as returned, a real) descending, then id. */
static int
VectorCompareScore(const void *a, const void *b)
{
	const VectorHit *x = a;
	const VectorHit *y = b;
	float4		rx = (float4) x->score;
	float4		ry = (float4) y->score;

	if (rx != ry)
		return rx > ry ? -1 : 1;
	return VectorCompareId(a, b);
}

/*
 * Reciprocal rank fusion of the vector list (nearest first) and the text
 * list (best first) into fused (vec->n + text->n entries), best first; the
 * number of rows.
 */
static int
VectorFuse(VectorList *vec, VectorList *text, VectorHit *fused)
{
	int			n = 0;

	for (int i = 0; i < vec->n; i++)
	{
		fused[n] = vec->hits[i];
		fused[n++].score = 1.0 / (VECTOR_RRF_K + i + 1);
	}
	qsort(fused, n, sizeof(VectorHit), VectorCompareId);
	for (int j = 0, nvec = n; j < text->n; j++)
	{
		VectorHit  *same = bsearch(&text->hits[j], fused, nvec, sizeof(VectorHit), VectorCompareId);
		double		score = 1.0 / (VECTOR_RRF_K + j + 1);

		if (same)
			same->score += score;
		else
		{
			fused[n] = text->hits[j];
			fused[n].in_vector = false;
			fused[n++].score = score;
		}
	}
	qsort(fused, n, sizeof(VectorHit), VectorCompareScore);
	return n;
}

/*
 * memtx.recall_similar(tx, embedding, model, k, entity_prefix, query, valid_at)
 *     → TABLE (record_id, entity, attribute, value, distance, rank)
 */
PG_FUNCTION_INFO_V1(memtx_recall_similar);
Datum
memtx_recall_similar(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			vtype = get_fn_expr_argtype(fcinfo->flinfo, 1);
	MemtxCall	call;
	MemtxTxn   *t;
	VectorModel m;
	int32		k;
	TSQuery		query = NULL;
	VectorList	vec;
	VectorList	text;
	VectorHit  *rows;
	int			nrows;
	Datum	   *returned;

	MemtxRequireArg(fcinfo, 1, "embedding");
	MemtxRequireArg(fcinfo, 2, "model");
	MemtxRequireArg(fcinfo, 3, "k");
	k = PG_GETARG_INT32(3);
	RetrievalCheckK(k);
	t = VisReadBegin(fcinfo, &call, "memtx.recall_similar");
	VectorModelGet(PG_GETARG_DATUM(2), &m);
	VectorCheck(&m, PG_GETARG_DATUM(1), vtype, "embedding");
	if (!PG_ARGISNULL(5))
		query = RetrievalQuery(PG_GETARG_DATUM(5));

	VectorListInit(&vec, k);
	VectorNearest(t, &m, vtype, fcinfo, &vec);
	VectorListInit(&text, k);
	if (query != NULL && query->size > 0)
		(void) VisScan(t, RetrievalTextOpen(t->namespace, query,
											PG_GETARG_DATUM(4), PG_ARGISNULL(4),
											PG_GETARG_DATUM(6), PG_ARGISNULL(6), false),
					   k, RECALL_MAX_BATCH, VectorTextEmit, &text);

	rows = palloc(sizeof(VectorHit) * (vec.n + text.n + 1));
	nrows = Min(VectorFuse(&vec, &text, rows), k);
	returned = palloc(sizeof(Datum) * (nrows + 1));
	for (int i = 0; i < nrows; i++)
	{
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, !rows[i].in_vector, false};

		values[0] = Int64GetDatum(rows[i].id);
		values[1] = CStringGetTextDatum(rows[i].entity);
		values[2] = CStringGetTextDatum(rows[i].attribute);
		values[3] = rows[i].value;
		values[4] = Float4GetDatum((float4) rows[i].distance);
		values[5] = Float4GetDatum((float4) rows[i].score);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		returned[i] = Int64GetDatum(rows[i].id);
	}
	ReadSetJoin(t, returned, nrows);
	MemtxCallEnd(&call);
	return (Datum) 0;
}

/*
 * memtx.embed(record, model, embedding) → void
 */
PG_FUNCTION_INFO_V1(memtx_embed);
Datum
memtx_embed(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr erased;
	static SPIPlanPtr insert;
	static SPIPlanPtr same;
	static Oid	insert_type;
	static Oid	same_type;
	static const Oid load_types[] = {INT8OID};
	Oid			vtype = get_fn_expr_argtype(fcinfo->flinfo, 2);
	Oid			types[] = {INT8OID, TEXTOID, TEXTOID, vtype};
	MemtxCall	call;
	VectorModel m;
	MemtxRec	rec;
	int64		id;
	Datum		values[4];

	MemtxRequireArg(fcinfo, 0, "record id");
	MemtxRequireArg(fcinfo, 1, "model");
	MemtxRequireArg(fcinfo, 2, "embedding");
	id = PG_GETARG_INT64(0);

	MemtxCallBegin(&call);
	VectorModelGet(PG_GETARG_DATUM(1), &m);
	VectorCheck(&m, PG_GETARG_DATUM(2), vtype, "embedding");
	(void) FenceAdmitWriter(call.caller_name);

	RecFetchOwned(&call, id, "embed", &rec);

	/* against erasure: erase holds the namespace lock exclusive until it commits */
	LockNamespace(rec.namespace, false);
	values[0] = Int64GetDatum(id);
	MemtxExec(MemtxPlan(&erased, "SELECT r.erased_at IS NOT NULL FROM memtx.records r WHERE r.id = $1",
						1, load_types),
			  values, NULL, 1);
	if (MemtxGetBool(0, 1))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("record %lld is erased", (long long) id),
				 errdetail("An erased record has no value to embed.")));

	values[1] = CStringGetTextDatum(rec.namespace);
	values[2] = CStringGetTextDatum(m.name);
	values[3] = PG_GETARG_DATUM(2);
	MemtxExec(VectorTypedPlan(&insert, &insert_type, vtype,
							  "INSERT INTO memtx.embeddings (record_id, namespace, model, embedding) "
							  "VALUES ($1, $2, $3, $4) ON CONFLICT (record_id, model, namespace) DO NOTHING",
							  4, types),
			  values, NULL, 0);
	if (SPI_processed == 0)
	{
		/* embedded already: the same vector is a repeat, another a conflict */
		MemtxExec(VectorTypedPlan(&same, &same_type, vtype,
								  "SELECT CAST(e.embedding AS real[]) = CAST($4 AS real[]) FROM memtx.embeddings e "
								  "WHERE e.record_id = $1 AND e.namespace = $2 AND e.model = $3",
								  4, types),
				  values, NULL, 1);
		if (!MemtxGetBool(0, 1))
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("record %lld already has another embedding under model \"%s\"",
							(long long) id, m.name),
					 errdetail("An embedding is immutable, like the content of its record.")));
	}
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}

/* The allowed model names: ^[A-Za-z0-9_.:-]{1,64}$ (SPEC §19, as for tools). */
static void
VectorCheckModelName(text *name)
{
	const char *s = VARDATA_ANY(name);
	int			len = VARSIZE_ANY_EXHDR(name);
	bool		ok = len >= 1 && len <= VECTOR_MAX_NAME;

	for (int i = 0; ok && i < len; i++)
		ok = (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
			(s[i] >= '0' && s[i] <= '9') || strchr("_.:-", s[i]) != NULL;
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid embedding model name \"%s\"", text_to_cstring(name)),
				 errdetail("A model name is 1 to 64 ASCII letters, digits, underscores, periods, colons or hyphens.")));
}

/*
 * memtx.register_embedding_model(name, dims, distance) → void
 */
PG_FUNCTION_INFO_V1(memtx_register_embedding_model);
Datum
memtx_register_embedding_model(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr insert;
	static SPIPlanPtr existing;
	static const Oid types[] = {TEXTOID, INT4OID, TEXTOID};
	MemtxCall	call;
	Datum		values[3];
	int32		dims;
	char	   *distance;

	MemtxRequireArg(fcinfo, 0, "model name");
	MemtxRequireArg(fcinfo, 1, "dims");
	MemtxRequireArg(fcinfo, 2, "distance");
	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "register an embedding model");
	VectorCheckModelName(PG_GETARG_TEXT_PP(0));
	dims = PG_GETARG_INT32(1);
	if (dims < 1 || dims > VECTOR_MAX_DIMS)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("dims must be between 1 and %d, got %d", VECTOR_MAX_DIMS, dims),
				 errdetail("pgvector's HNSW index takes vectors of at most %d dimensions.", VECTOR_MAX_DIMS)));
	distance = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (VectorDistanceOf(distance) == VD_NDISTANCES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown distance \"%s\"", distance),
				 errdetail("The distances are cosine, l2 and inner_product.")));

	values[0] = PG_GETARG_DATUM(0);
	values[1] = Int32GetDatum(dims);
	values[2] = PG_GETARG_DATUM(2);
	/* a new model's row: its trigger builds the model's index */
	MemtxExec(MemtxPlan(&insert,
						"INSERT INTO memtx.embedding_models (name, dims, distance) VALUES ($1, $2, $3) "
						"ON CONFLICT (name) DO NOTHING",
						3, types),
			  values, NULL, 0);
	if (SPI_processed == 0)
	{
		MemtxExec(MemtxPlan(&existing,
							"SELECT m.dims, m.distance FROM memtx.embedding_models m "
							"WHERE m.name = $1 AND (m.dims <> $2 OR m.distance <> $3)",
							3, types),
				  values, NULL, 1);
		if (SPI_processed > 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("embedding model \"%s\" is registered with %d dimensions and distance %s",
							TextDatumGetCString(values[0]), VectorGetInt32(0, 1),
							MemtxGetText(0, 2)),
					 errdetail("A model's dimensions and distance never change: its embeddings and index depend on them."),
					 errhint("Register the new model under another name.")));
	}
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}
