/*
 * visibility.c — what a transaction may see, and memtx.read (SPEC §3).
 *
 * A record is visible to transaction t when it is in t's namespace, readable
 * by t's agent, and either staged by t (visible while tentative, and once
 * settled whenever t's level exposes its state) or in t's snapshot with an
 * exposed state.  The levels nest:
 *
 *   raw_read               every state (snapshot = staged before t began)
 *   committed_read         active records
 *   verified_read          ... whose every transitive ancestor is active
 *   causally_stable_read   ... with no tentative rival, from another
 *                          transaction, on its own or an ancestor's slot, and
 *                          no ancestor in the revocation registry
 *   action_safe_read       ... in state action_safe
 *
 * The ancestor conditions walk only the records' own ancestries, through the
 * edges' primary key, once for all the records of a read (a chain read whole
 * costs its length); rivals are found through the slot index.  Nothing here
 * scans the store.
 */
#include "catalog.h"
#include "dag.h"
#include "readset.h"
#include "readsetbuf.h"
#include "record.h"
#include "visibility.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

/*
 * The ancestry conditions of verified_read and above for records ids[0..n),
 * as seen by transaction txid, into ok[]: every transitive ancestor active
 * and, when causal, none in the revocation registry and no tentative rival
 * of another transaction on the slot of the record or of an ancestor.  One
 * statement for the whole set, however many records: it lists the records
 * and their ancestors (one walk, memtx.ancestors_of), each with its parents
 * and whether it is wrong by itself (inactive, registered or rivalled as an
 * ancestor; rivalled as a record read), and what is wrong flows down the
 * edges once (dag.c).  Records that share an ancestry, such as a chain read
 * whole, cost its length, not its length squared.
 */
static void
VisAncestryStable(Datum *ids, int n, int64 txid, bool causal, bool *ok)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID, INT8OID, BOOLOID};
	Datum		values[3];
	Dag		   *dag;
	HTAB	   *rivalled;
	HASHCTL		ctl;

	values[0] = RecIdsDatum(ids, n);
	values[1] = Int64GetDatum(txid);
	values[2] = BoolGetDatum(causal);
	MemtxExec(MemtxPlan(&plan,
						"WITH u(id) AS (SELECT c.id FROM unnest($1) c(id)"
						"               UNION SELECT a.id FROM memtx.ancestors_of($1) a(id)) "
						"SELECT u.id, ARRAY(SELECT e.parent FROM memtx.edges e WHERE e.child = u.id), "
						"       CASE WHEN y.wrong OR y.rivalled THEN 1 END, y.rivalled "
						"  FROM u CROSS JOIN LATERAL ("
						"    SELECT NOT memtx.is_active(a.state) OR ($3 AND "
						"             " MEMTX_IS_RETRACTED("a") ")"
						"           AS wrong,"
						"           $3 AND EXISTS ("
						"             SELECT 1 FROM memtx.records x"
						"              WHERE x.namespace = a.namespace AND x.entity = a.entity"
						"                AND x.attribute = a.attribute AND x.state = 'tentative'"
						"                AND x.tx_id <> $2"
						"                AND memtx.rivals(a.namespace, a.entity, a.attribute, a.valid, a.value,"
						"                                 x.namespace, x.entity, x.attribute, x.valid, x.value))"
						"           AS rivalled"
						"      FROM memtx.records a WHERE a.id = u.id OFFSET 0) y",
						3, types),
			  values, NULL, 0);
	dag = DagLoad(SPI_tuptable, SPI_processed, 1, 2, 3);
	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(int64);
	ctl.hcxt = CurrentMemoryContext;
	rivalled = hash_create("memtx rivalled records", 16, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (uint64 i = 0; i < SPI_processed; i++)
		if (MemtxGetBool(i, 4))
		{
			int64		id = MemtxGetInt64(i, 1);

			(void) hash_search(rivalled, &id, HASH_ENTER, NULL);
		}
	for (int i = 0; i < n; i++)
	{
		int64		id = DatumGetInt64(ids[i]);

		ok[i] = hash_search(rivalled, &id, HASH_FIND, NULL) == NULL &&
			DagReach(dag, id) == DAG_NONE;
	}
}

/*
 * Whether t's level exposes rec's state, but for the ancestry conditions:
 * *ancestry tells whether they apply, *causal whether in full.
 */
static bool
VisExposes(MemtxTxn *t, MemtxRec *rec, bool *ancestry, bool *causal)
{
	*ancestry = t->isolation >= MI_VERIFIED_READ;
	*causal = t->isolation >= MI_CAUSALLY_STABLE_READ;
	switch (t->isolation)
	{
		case MI_RAW_READ:
			return true;
		case MI_COMMITTED_READ:
		case MI_VERIFIED_READ:
		case MI_CAUSALLY_STABLE_READ:
			return MEMTX_IS_ACTIVE(rec->state);
		case MI_ACTION_SAFE_READ:
			return rec->state == MS_ACTION_SAFE;
	}
	return false;
}

/* rec's visibility to t but for the ancestry conditions (see VisExposes). */
static bool
VisVisibleBase(MemtxTxn *t, MemtxRec *rec, bool *ancestry, bool *causal)
{
	*ancestry = false;
	if (strcmp(rec->namespace, t->namespace) != 0)
		return false;
	if (!VisReadable(t->agent_oid, rec))
		return false;
	if (rec->tx_id == t->id && rec->state == MS_TENTATIVE)
		return true;
	if (rec->tx_id != t->id)
	{
		if (t->isolation == MI_RAW_READ)
		{
			if (!MemtxBefore(rec->staged_xid, rec->staged_pos, t->snapshot,
							 t->snapshot_xid, t->snapshot_seq))
				return false;
		}
		else if (!TxnSawCommit(t, rec->committed_xid, !rec->committed, rec->committed_seq))
			return false;
	}
	return VisExposes(t, rec, ancestry, causal);
}

/* The visibility of recs[0..n) to t, into visible[]; one ancestry query in all. */
void
VisVisibleMany(MemtxTxn *t, MemtxRec *recs, int n, bool *visible)
{
	Datum	   *ids = palloc(sizeof(Datum) * (n + 1));
	int		   *at = palloc(sizeof(int) * (n + 1));
	bool	   *ok;
	bool		causal = false;
	int			nids = 0;

	for (int i = 0; i < n; i++)
	{
		bool		ancestry;

		visible[i] = VisVisibleBase(t, &recs[i], &ancestry, &causal);
		if (visible[i] && ancestry)
		{
			ids[nids] = Int64GetDatum(recs[i].id);
			at[nids++] = i;
		}
	}
	if (nids == 0)
		return;
	ok = palloc(sizeof(bool) * nids);
	VisAncestryStable(ids, nids, t->id, causal, ok);
	for (int j = 0; j < nids; j++)
		visible[at[j]] = ok[j];
}

bool
VisVisible(MemtxTxn *t, MemtxRec *rec)
{
	bool		visible;

	VisVisibleMany(t, rec, 1, &visible);
	return visible;
}

/*
 * The query of a read of t: the slot, the entity or the attribute named by
 * arguments 1 and 2, or (both NULL) the whole namespace; its parameters go
 * to values.
 */
static SPIPlanPtr
VisReadPlan(FunctionCallInfo fcinfo, MemtxTxn *t, Datum *values)
{
	static SPIPlanPtr by_slot;
	static SPIPlanPtr by_entity;
	static SPIPlanPtr by_attribute;
	static SPIPlanPtr by_namespace;
	static const Oid types[] = {TEXTOID, TEXTOID, TEXTOID};

	values[0] = CStringGetTextDatum(t->namespace);
	if (!PG_ARGISNULL(1) && !PG_ARGISNULL(2))
	{
		values[1] = PG_GETARG_DATUM(1);
		values[2] = PG_GETARG_DATUM(2);
		return MemtxPlan(&by_slot,
						 "SELECT r.* FROM memtx.records r WHERE r.namespace = $1 "
						 "AND r.entity = $2 AND r.attribute = $3 ORDER BY r.id",
						 3, types);
	}
	if (!PG_ARGISNULL(1))
	{
		values[1] = PG_GETARG_DATUM(1);
		return MemtxPlan(&by_entity,
						 "SELECT r.* FROM memtx.records r WHERE r.namespace = $1 "
						 "AND r.entity = $2 ORDER BY r.id",
						 2, types);
	}
	if (!PG_ARGISNULL(2))
	{
		values[1] = PG_GETARG_DATUM(2);
		return MemtxPlan(&by_attribute,
						 "SELECT r.* FROM memtx.records r WHERE r.namespace = $1 "
						 "AND r.attribute = $2 ORDER BY r.id",
						 2, types);
	}
	return MemtxPlan(&by_namespace,
					 "WITH c AS MATERIALIZED ("
					 "  SELECT r.* FROM memtx.records r WHERE r.namespace = $1) "
					 "SELECT * FROM c ORDER BY c.id",
					 1, types);
}

/*
 * The start of a read through the memtx transaction named by argument 0
 * (memtx.read, memtx.recall): refused during recovery and without the
 * read-set buffer, then a call at READ COMMITTED on a transaction of the
 * caller's that is not aborted, with a materialized result.
 */
MemtxTxn *
VisReadBegin(FunctionCallInfo fcinfo, MemtxCall *call, const char *fn)
{
	MemtxRequireArg(fcinfo, 0, "transaction id");
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s cannot run during recovery", fn),
				 errdetail("A read joins its memtx transaction's read set, which lives on the primary."),
				 errhint("Read on the primary, or use memtx.lookup, which needs no transaction.")));
	ReadSetRequire(fn);
	InitMaterializedSRF(fcinfo, 0);
	MemtxCallBegin(call);
	return TxnLoad(call, PG_GETARG_INT64(0), TXN_NEED_LIVE_PROBE);
}

/*
 * memtx.read(tx, entity, attribute) → SETOF memtx.records
 *
 * Returns what is visible to tx on the slot (or the entity, or the whole
 * namespace when both are NULL) and adds it to tx's read set.
 */
PG_FUNCTION_INFO_V1(memtx_read);
Datum
memtx_read(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	MemtxTxn   *t;
	Datum		values[3];
	SPITupleTable *tuptable;
	uint64		n;
	Datum	   *seen;
	int			nseen = 0;
	MemtxRec   *recs;
	bool	   *visible;

	t = VisReadBegin(fcinfo, &call, "memtx.read");
	MemtxExec(VisReadPlan(fcinfo, t, values), values, NULL, 0);

	/* Keep the candidates: the ancestry check runs a query of its own. */
	tuptable = SPI_tuptable;
	n = SPI_processed;
	seen = palloc(sizeof(Datum) * (n + 1));
	recs = RecDecodeAll(tuptable, n);
	visible = palloc(sizeof(bool) * (n + 1));
	VisVisibleMany(t, recs, (int) n, visible);
	for (uint64 i = 0; i < n; i++)
	{
		if (!visible[i])
			continue;
		tuplestore_puttuple(rsinfo->setResult, tuptable->vals[i]);
		seen[nseen++] = Int64GetDatum(recs[i].id);
	}
	ReadSetJoin(t, seen, nseen);
	MemtxCallEnd(&call);
	return (Datum) 0;
}
