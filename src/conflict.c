/*
 * conflict.c — check 3 of the commit pipeline: semantic conflict (SPEC §4).
 *
 * In order: (a) a revoked or registry-listed parent, (b) a parent still
 * tentative in another transaction, or inactive, (c) permission laundering
 * over the declared parents and, under memtx.flow_control = read_set, every
 * record the transaction has read, (d) slot adjudication against active
 * rivals.  The caller holds the slot's lock, so the rivals it sees are the
 * rivals there are; records committed earlier in the same run are among them.
 *
 * The first rule of (d) is the expected head (SPEC §10, proposal.c): a
 * candidate that names one and finds another head set is stale_head, before
 * any rival is judged.  A matching head proves the proposer saw the current
 * state of its window, so the snapshot half of stale_late_write does not
 * apply to it; the observed_at half, authority, writers and review do.
 *
 * Adjudication against several rivals takes the strictest outcome:
 * stale_late_write, lower_authority, write_not_permitted, needs_review; the
 * candidate supersedes only when it beats every rival, and then all of them.
 */
#include "conflict.h"
#include "catalog.h"
#include "guc.h"
#include "permissions.h"
#include "dag.h"
#include "locks.h"
#include "proposal.h"

#include "catalog/pg_type.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

/* outcome ranks, strictest first */
enum
{
	RANK_STALE,
	RANK_LOWER,
	RANK_WRITE,
	RANK_REVIEW,
	RANK_BEATS
};
static const MemtxReason RankReason[] = {
	MR_STALE_LATE_WRITE, MR_LOWER_AUTHORITY, MR_WRITE_NOT_PERMITTED, MR_NEEDS_REVIEW, MR_NONE
};

/*
 * Everything checks 3a–3c need to know about the candidate's parents and
 * read set, in one query: the declared parents' states, the laundering rule
 * over declared parents (and the read set under memtx.flow_control =
 * read_set), and the parents check 4 has to walk from (see ConflictCheck).
 */
/* whether par's parent p is retracted (MEMTX_IS_RETRACTED: a condition on its row) */
#define CONFLICT_RETRACTED \
	MEMTX_IS_RETRACTED("p") " AS retracted"
/* what ConflictGatherFacts answers from its "par" and "flow" */
#define CONFLICT_FACTS \
	"SELECT coalesce((SELECT bool_or(retracted) FROM par), false)," \
	"       coalesce((SELECT bool_or(state IN ('tentative', 'raw', 'validated')) FROM par), false)," \
	"       coalesce((SELECT bool_or(state IN ('quarantined', 'superseded')) FROM par), false)," \
	"       coalesce((SELECT bool_or(f.scope < $4::memtx.scope OR NOT ($5 <@ f.readers)) FROM flow f), false)," \
	"       ARRAY(SELECT id FROM par WHERE tx_id IS DISTINCT FROM $2)"

static void
ConflictGatherFacts(MemtxTxn *t, MemtxRec *cand, ConflictFacts *f)
{
	static SPIPlanPtr plan;
	static SPIPlanPtr pending;
	static const Oid types[] = {INT8OID, INT8OID, BOOLOID, TEXTOID, TEXTARRAYOID, INT8ARRAYOID};
	Datum		values[6];
	bool		isnull;

	values[0] = Int64GetDatum(cand->id);
	values[1] = Int64GetDatum(t->id);
	values[2] = BoolGetDatum(memtx_flow_control == MF_READ_SET);
	values[3] = CStringGetTextDatum(MemtxScopeNames[cand->scope]);
	values[4] = PointerGetDatum(cand->readers);
	if (cand->pending)
	{
		/* the parents are the candidate's own argument (sorted, distinct) */
		values[5] = PointerGetDatum(cand->parents);
		MemtxExec(MemtxPlan(&pending,
							"WITH par AS ("
							"  SELECT p.id, p.tx_id, p.state, " CONFLICT_RETRACTED
							"    FROM memtx.records p"
							"   WHERE p.id = ANY ($6)),"
							" flow AS ("
							"  SELECT p.scope, p.readers FROM memtx.records p"
							"   WHERE p.id IN (SELECT unnest($6)"
							"                  UNION"
							"                  SELECT s.record_id FROM memtx.read_set s"
							"                   WHERE $3 AND s.tx_id = $2 AND s.record_id <> $1)"
							"     AND p.scope <> 'public') "
							CONFLICT_FACTS,
							6, types),
				  values, NULL, 1);
	}
	else
		MemtxExec(MemtxPlan(&plan,
							"WITH par AS ("
							"  SELECT p.id, p.tx_id, p.state, " CONFLICT_RETRACTED
							"    FROM memtx.edges e JOIN memtx.records p ON p.id = e.parent"
							"   WHERE e.child = $1),"
							" flow AS ("
							"  SELECT p.scope, p.readers FROM memtx.records p"
							"   WHERE p.id IN (SELECT e.parent FROM memtx.edges e WHERE e.child = $1"
							"                  UNION"
							"                  SELECT s.record_id FROM memtx.read_set s"
							"                   WHERE $3 AND s.tx_id = $2 AND s.record_id <> $1)"
							"     AND p.scope <> 'public') "
							CONFLICT_FACTS,
							5, types),
				  values, NULL, 1);
	f->revoked_parent = MemtxGetBool(0, 1);
	f->uncommitted_parent = MemtxGetBool(0, 2);
	f->inactive_parent = MemtxGetBool(0, 3);
	f->laundering = MemtxGetBool(0, 4);
	deconstruct_array(DatumGetArrayTypeP(MemtxGet(0, 5, &isnull)), INT8OID, sizeof(int64),
					  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &f->walk, NULL, &f->nwalk);
}

/*
 * The ancestry facts of one commit run: for every parent of the run's
 * records, whether one of its transitive ancestors is revoked or registered.
 * Loaded when a candidate first needs one, for all of them at once.
 */
struct ConflictMemo
{
	Dag		   *dag;			/* NULL until loaded */
	/* rivals fetched for several candidates at once (ConflictPrefetchRivals) */
	SPITupleTable *rivals;		/* cand, then ConflictFetchRivals' columns */
	int64	   *cands;			/* the candidates, sorted */
	uint64	   *first;			/* rows of cands[k]: first[k] .. first[k + 1] */
	int			ncands;
};

ConflictMemo *
ConflictMemoCreate(void)
{
	return palloc0(sizeof(ConflictMemo));
}

/*
 * Whether a transitive ancestor of parent (a parent of a record of t) is
 * revoked or registered.  The first call walks up once from every parent of
 * t's records (memtx.ancestors_of), with each revoked or registered record a
 * seed, and the answers flow down the edges (dag.c): parents that share an
 * ancestry, such as the nodes of a deep chain other records derive from,
 * cost its length once, not once each.  A revocation in the run itself
 * (the repair of a tool action below a quarantined record) cannot make an
 * answer stale where it matters: it revokes or registers everything below
 * it, the parent too, which check 3a refuses first.
 */
/* the walk of ConflictParentUnstable from the parents p(ids) */
#define CONFLICT_WALK \
	" u(id) AS (SELECT unnest(p.ids) FROM p UNION " \
	"           SELECT a.id FROM p CROSS JOIN LATERAL memtx.ancestors_of(p.ids) a(id)) " \
	DAG_RETRACTED_SEEDS

/*
 * cand is the run's candidate: when it is pending (memtx.propose, the only
 * record of its run), its parents are its argument, not edges in the store.
 */
static bool
ConflictParentUnstable(MemtxTxn *t, ConflictMemo *memo, MemtxRec *cand, int64 parent)
{
	static SPIPlanPtr plan;
	static SPIPlanPtr pending;
	static const Oid types[] = {INT8OID, INT8ARRAYOID};
	Datum		values[2];

	if (memo->dag == NULL)
	{
		values[0] = Int64GetDatum(t->id);
		values[1] = cand->pending ? PointerGetDatum(cand->parents) : (Datum) 0;
		if (cand->pending)
			MemtxExec(MemtxPlan(&pending,
								"WITH p(ids) AS MATERIALIZED (SELECT ARRAY("
								"  SELECT pr.id FROM memtx.records pr "
								"  WHERE pr.id = ANY ($2) AND pr.tx_id IS DISTINCT FROM $1)), "
								CONFLICT_WALK,
								2, types),
					  values, NULL, 0);
		else
			MemtxExec(MemtxPlan(&plan,
								"WITH p(ids) AS MATERIALIZED (SELECT ARRAY("
								"  SELECT DISTINCT e.parent FROM memtx.records r "
								"  JOIN memtx.edges e ON e.child = r.id "
								"  JOIN memtx.records pr ON pr.id = e.parent "
								"  WHERE r.tx_id = $1 AND pr.tx_id IS DISTINCT FROM $1)), "
								CONFLICT_WALK,
								1, types),
					  values, NULL, 0);
		memo->dag = DagLoad(SPI_tuptable, SPI_processed, 1, 2, 3);
	}
	return DagReach(memo->dag, parent) != DAG_NONE;
}

/* Whether the candidate's owner may supersede a rival. */
static bool
ConflictMayWrite(MemtxRec *cand, const char *rival_owner, ArrayType *rival_writers)
{
	Oid			owner = get_role_oid(cand->owner, true);

	if (!OidIsValid(owner))
		return false;
	return MemtxRoleIsMember(owner, rival_owner) || MemtxRoleInAny(owner, rival_writers);
}

/*
 * The active rivals of record id: same namespace and slot, overlapping
 * validity, a different value.  Leaves them in SPI_tuptable: id, tx_id,
 * authority, source, owner, writers, observed_at, committed_xid,
 * committed_seq.
 */
void
ConflictFetchRivals(int64 id)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];

	values[0] = Int64GetDatum(id);
	/*
	 * Through the single-truth index (active records only, led by the slot
	 * key): a hot slot's history of superseded records is never read.  The
	 * candidate's slot key is also given to the rivals' side on its own, as
	 * a value computed once (an init plan): a plan made while the index was
	 * empty (a fresh store) would otherwise be free to read the whole index
	 * once per candidate, which made a commit of n records on their own
	 * slots cost n²/2 index entries.
	 */
	MemtxExec(MemtxPlan(&plan,
						"SELECT r.id, r.tx_id, r.authority, r.source, r.owner, r.writers, "
						"       r.observed_at, r.committed_xid, r.committed_seq "
						"FROM memtx.records c JOIN memtx.records r "
						"  ON memtx.is_active(r.state) "
						" AND memtx.rivals(c.namespace, c.entity, c.attribute, c.valid, c.value, "
						"                  r.namespace, r.entity, r.attribute, r.valid, r.value) "
						" AND memtx.slot_digest(r.namespace, r.entity, r.attribute) "
						"     = memtx.slot_digest(c.namespace, c.entity, c.attribute) "
						"WHERE c.id = $1 "
						"  AND memtx.slot_key(r.namespace, r.entity, r.attribute) = "
						"      (SELECT memtx.slot_key(k.namespace, k.entity, k.attribute) "
						"       FROM memtx.records k WHERE k.id = $1) "
						"ORDER BY r.id",
						1, types),
			  values, NULL, 0);
}

/*
 * ConflictFetchRivals for candidate cand, in the store or pending (then by
 * its content, through the same index).
 */
void
ConflictFetchRivalsOf(MemtxRec *cand)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, TEXTOID, TEXTOID, TSTZRANGEOID, JSONBOID};
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};

	if (!cand->pending)
	{
		ConflictFetchRivals(cand->id);
		return;
	}
	values[0] = CStringGetTextDatum(cand->namespace);
	values[1] = CStringGetTextDatum(cand->entity);
	values[2] = CStringGetTextDatum(cand->attribute);
	values[3] = cand->valid;
	nulls[3] = cand->valid == (Datum) 0 ? 'n' : ' ';
	values[4] = cand->value;
	MemtxExec(MemtxPlan(&plan,
						"SELECT r.id, r.tx_id, r.authority, r.source, r.owner, r.writers, "
						"       r.observed_at, r.committed_xid, r.committed_seq "
						"FROM memtx.records r "
						"WHERE memtx.is_active(r.state) "
						"  AND memtx.rivals($1, $2, $3, coalesce($4, '(,)'::pg_catalog.tstzrange), $5, "
						"                   r.namespace, r.entity, r.attribute, r.valid, r.value) "
						"  AND memtx.slot_digest(r.namespace, r.entity, r.attribute) "
						"      = memtx.slot_digest($1, $2, $3) "
						"  AND memtx.slot_key(r.namespace, r.entity, r.attribute) = "
						"      memtx.slot_key($1, $2, $3) "
						"ORDER BY r.id",
						5, types),
			  values, nulls, 0);
}

static int
ConflictCompareIds(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/*
 * The active rivals of the records ids[0..n) of one commit run, in one
 * query, for ConflictSlot to use instead of one ConflictFetchRivals each.
 * The caller names only records that nothing earlier in the run can have
 * changed the rivals of: the first of the run on their slot, in a run that
 * repairs no actions (an admission changes the active records of its own
 * slot only), under the slot locks the run holds.
 */
void
ConflictPrefetchRivals(ConflictMemo *memo, const int64 *ids, int n)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID};
	Datum		values[1];
	int			k = 0;

	if (n == 0)
		return;
	values[0] = RecIdsDatumOf(ids, n);
	/*
	 * Per candidate, through the single-truth index by slot key, as
	 * ConflictFetchRivals (OFFSET 0: the rivals of each candidate are an
	 * index scan with its slot key, never a join over all active records).
	 */
	MemtxExec(MemtxPlan(&plan,
						"SELECT c.id, r.id, r.tx_id, r.authority, r.source, r.owner, r.writers, "
						"       r.observed_at, r.committed_xid, r.committed_seq "
						"FROM unnest($1) AS u(id) JOIN memtx.records c ON c.id = u.id "
						"CROSS JOIN LATERAL ("
						"  SELECT r.* FROM memtx.records r "
						"  WHERE memtx.is_active(r.state) "
						"    AND memtx.rivals(c.namespace, c.entity, c.attribute, c.valid, c.value, "
						"                     r.namespace, r.entity, r.attribute, r.valid, r.value) "
						"    AND memtx.slot_digest(r.namespace, r.entity, r.attribute) "
						"        = memtx.slot_digest(c.namespace, c.entity, c.attribute) "
						"    AND memtx.slot_key(r.namespace, r.entity, r.attribute) "
						"        = memtx.slot_key(c.namespace, c.entity, c.attribute) "
						"  OFFSET 0) r "
						"ORDER BY c.id, r.id",
						1, types),
			  values, NULL, 0);
	memo->rivals = SPI_tuptable;
	memo->cands = palloc(sizeof(int64) * n);
	memo->first = palloc(sizeof(uint64) * (n + 1));
	memcpy(memo->cands, ids, sizeof(int64) * n);
	qsort(memo->cands, n, sizeof(int64), ConflictCompareIds);
	memo->ncands = n;
	/* rows are sorted by candidate: each candidate's range starts where the last ended */
	for (uint64 row = 0; k < n; k++)
	{
		memo->first[k] = row;
		while (row < SPI_processed && MemtxGetInt64(row, 1) == memo->cands[k])
			row++;
		memo->first[k + 1] = row;
	}
}

/* (d): slot adjudication, the expected head first. */
static void
ConflictSlot(MemtxTxn *t, MemtxRec *cand, ConflictMemo *memo, ConflictResult *res)
{
	int			rank = RANK_BEATS;
	bool		head_stale = cand->expected_head >= 0 && !ProposalHeadMatches(cand);
	bool		head_seen = cand->expected_head >= 0 && !head_stale;
	int64	   *hit = memo->ncands > 0 && !cand->pending
		? bsearch(&cand->id, memo->cands, memo->ncands, sizeof(int64), ConflictCompareIds) : NULL;
	uint64		lo = 0;
	uint64		hi;
	int			off = 0;		/* column offset of the rivals' rows */

	if (hit != NULL)
	{
		SPI_tuptable = memo->rivals;
		lo = memo->first[hit - memo->cands];
		hi = memo->first[hit - memo->cands + 1];
		off = 1;
	}
	else
	{
		ConflictFetchRivalsOf(cand);
		hi = SPI_processed;
	}
	res->nrivals = (int) (hi - lo);
	if (head_stale)
	{
		res->reason = MR_STALE_HEAD;
		return;
	}
	if (hi == lo)
		return;
	res->supersede = palloc(sizeof(Datum) * (hi - lo));
	for (uint64 i = lo; i < hi; i++)
	{
		int64		rid = MemtxGetInt64(i, off + 1);
		int64		rtx = MemtxGetInt64(i, off + 2);
		double		rauth = MemtxGetFloat8(i, off + 3);
		char	   *rsource = MemtxGetText(i, off + 4);
		char	   *rowner = MemtxGetText(i, off + 5);
		bool		isnull;
		Datum		d;
		ArrayType  *rwriters;
		bool		stale = false;
		int			r;

		d = MemtxGet(i, off + 6, &isnull);
		rwriters = isnull ? NULL : DatumGetArrayTypeP(d);

		if (rtx != t->id && !head_seen)
		{
			Datum		xid = MemtxGet(i, off + 8, &isnull);

			/* a record seeded without commit positions predates everything */
			if (!isnull && !TxnSawCommit(t, xid, false, MemtxGetInt64(i, off + 9)))
				stale = true;
		}
		d = MemtxGet(i, off + 7, &isnull);
		if (!isnull && cand->has_observed && DatumGetTimestampTz(d) > cand->observed_at)
			stale = true;

		if (stale)
			r = RANK_STALE;
		else if (cand->authority < rauth)
			r = RANK_LOWER;
		else if (cand->authority > rauth ||
				 (rsource == NULL && cand->source == NULL) ||
				 (rsource != NULL && cand->source != NULL && strcmp(rsource, cand->source) == 0))
			r = ConflictMayWrite(cand, rowner, rwriters) ? RANK_BEATS : RANK_WRITE;
		else
			r = RANK_REVIEW;
		if (r < rank)
			rank = r;
		res->supersede[res->nsupersede++] = Int64GetDatum(rid);
	}
	res->reason = RankReason[rank];
	if (res->reason != MR_NONE)
		res->nsupersede = 0;
}

/*
 * provenance: whether the candidate has declared parents, or the read set
 * counts and the transaction has read anything.  Without either there is no
 * parent, ancestor or flow to judge, every fact is false, and the facts query
 * (the pipeline's most expensive plan to start) is skipped.
 *
 * The fact check 4 needs (a transitive ancestor revoked or registered) is
 * found, when no check 3 failed, from the parents: each parent itself is
 * judged by 3a, and the ancestries of the parents outside the candidate's
 * transaction are walked once per commit run, together (memo), however many
 * candidates derive from them.  A parent of the candidate's own transaction
 * was staged earlier, so this run has judged it already: it passed check 4 (and no
 * revocation can run while the commit holds the namespace lock, so its
 * ancestry is still stable), or it did not pass and the candidate fails 3a
 * or 3b on it.  So a chain staged in one transaction, or a fan-in below one
 * deep parent, commits in time linear in its size, not a walk per record.
 */
void
ConflictCheck(MemtxTxn *t, MemtxRec *cand, bool provenance, ConflictMemo *memo, ConflictResult *res)
{
	/* the rivals found below are final only under the slot's lock */
	Assert(LockSlotHeld(cand->namespace, cand->entity, cand->attribute));
	memset(res, 0, sizeof(*res));
	res->reason = MR_NONE;
	if (provenance)
		ConflictGatherFacts(t, cand, &res->facts);
	if (res->facts.revoked_parent)
		res->reason = MR_REVOKED_PARENT;
	else if (res->facts.uncommitted_parent)
		res->reason = MR_UNCOMMITTED_PARENT;
	else if (res->facts.inactive_parent)
		res->reason = MR_INACTIVE_PARENT;
	else if (res->facts.laundering)
		res->reason = MR_PERMISSION_LAUNDERING;
	else
		ConflictSlot(t, cand, memo, res);
	if (res->reason == MR_NONE)
		for (int i = 0; i < res->facts.nwalk && !res->facts.unstable; i++)
			res->facts.unstable = ConflictParentUnstable(t, memo, cand, DatumGetInt64(res->facts.walk[i]));
}

void
ConflictSupersede(Datum *ids, int n)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID};
	Datum		values[1];

	if (n == 0)
		return;
	/*
	 * The rivals were found active under the slot lock, and no cascade can
	 * run while the caller holds the namespace lock, so they still are.
	 * The statement names them by id only: a state condition would let the
	 * planner, before the store is analyzed, read the whole partial index
	 * of active records (records_single_truth) to intersect it with these
	 * few ids (test/sql/hot_paths.sql).  The lifecycle trigger still
	 * refuses any record that is not active.
	 */
	values[0] = RecIdsDatum(ids, n);
	MemtxExec(MemtxPlan(&plan,
						"UPDATE memtx.records SET state = 'superseded' WHERE id = ANY ($1)",
						1, types),
			  values, NULL, 0);
	if (SPI_processed != (uint64) n)
		elog(ERROR, "%d rivals to supersede, " UINT64_FORMAT " found", n, SPI_processed);
}
