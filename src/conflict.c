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
 * Adjudication against several rivals takes the strictest outcome:
 * stale_late_write, lower_authority, write_not_permitted, needs_review; the
 * candidate supersedes only when it beats every rival, and then all of them.
 */
#include "pipeline.h"

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
static const char *const RankReason[] = {
	"stale_late_write", "lower_authority", "write_not_permitted", "needs_review", NULL
};

/* Whether every role name in "sub" appears in "super". */
static bool
ConflictReadersSubset(ArrayType *sub, ArrayType *super)
{
	Datum	   *a;
	Datum	   *b;
	int			na;
	int			nb;

	deconstruct_array(sub, TEXTOID, -1, false, TYPALIGN_INT, &a, NULL, &na);
	deconstruct_array(super, TEXTOID, -1, false, TYPALIGN_INT, &b, NULL, &nb);
	for (int i = 0; i < na; i++)
	{
		bool		found = false;

		for (int j = 0; j < nb && !found; j++)
			found = strcmp(TextDatumGetCString(a[i]), TextDatumGetCString(b[j])) == 0;
		if (!found)
			return false;
	}
	return true;
}

/* (a) and (b): the declared parents' states. */
static const char *
ConflictParents(MemtxTxn *t, MemtxRec *cand)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];
	const char *reason = NULL;

	values[0] = Int64GetDatum(cand->id);
	MemtxExec(MemtxPlan(&plan,
						"SELECT p.state::text, p.tx_id, rr.record_id IS NOT NULL "
						"FROM memtx.edges e JOIN memtx.records p ON p.id = e.parent "
						"LEFT JOIN memtx.revocation_registry rr ON rr.record_id = p.id "
						"WHERE e.child = $1",
						1, types),
			  values, NULL, true, 0);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemtxState	s = MemtxStateFromName(MemtxGetText(i, 1));
		bool		registered = MemtxGetBool(i, 3);

		if (s == MS_REVOKED || registered)
			return "revoked_parent";
		if (s == MS_TENTATIVE || s == MS_RAW || s == MS_VALIDATED)
			reason = "uncommitted_parent";
		else if ((s == MS_QUARANTINED || s == MS_SUPERSEDED) && reason == NULL)
			reason = "inactive_parent";
	}
	return reason;
}

/* (c): permission laundering over declared parents and, if enabled, the read set. */
static bool
ConflictLaundering(MemtxTxn *t, MemtxRec *cand)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID, INT8OID, BOOLOID};
	Datum		values[3];

	values[0] = Int64GetDatum(cand->id);
	values[1] = Int64GetDatum(t->id);
	values[2] = BoolGetDatum(memtx_flow_control == MF_READ_SET);
	MemtxExec(MemtxPlan(&plan,
						"SELECT p.scope::text, p.readers FROM memtx.records p "
						"WHERE p.id IN (SELECT e.parent FROM memtx.edges e WHERE e.child = $1 "
						"               UNION "
						"               SELECT s.record_id FROM memtx.read_set s "
						"                WHERE $3 AND s.tx_id = $2 AND s.record_id <> $1) "
						"AND p.scope <> 'public'",
						3, types),
			  values, NULL, true, 0);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		int			pscope = MemtxLabelIndex(MemtxScopeNames, 3, MemtxGetText(i, 1));
		bool		isnull;
		ArrayType  *preaders = DatumGetArrayTypeP(MemtxGet(i, 2, &isnull));

		if (cand->scope > pscope)
			return true;
		if (!ConflictReadersSubset(cand->readers, preaders))
			return true;
	}
	return false;
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

/* (d): slot adjudication. */
static void
ConflictSlot(MemtxTxn *t, MemtxRec *cand, ConflictResult *res)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];
	int			rank = RANK_BEATS;

	values[0] = Int64GetDatum(cand->id);
	MemtxExec(MemtxPlan(&plan,
						"SELECT r.id, r.tx_id, r.authority, r.source, r.owner, r.writers, "
						"       r.observed_at, r.committed_xid, r.committed_seq "
						"FROM memtx.records c JOIN memtx.records r "
						"  ON r.namespace = c.namespace AND r.entity = c.entity "
						" AND r.attribute = c.attribute AND r.valid && c.valid "
						" AND r.state IN ('committed', 'action_safe') "
						" AND r.value::text <> c.value::text "
						"WHERE c.id = $1 ORDER BY r.id",
						1, types),
			  values, NULL, true, 0);
	res->nrivals = (int) SPI_processed;
	if (SPI_processed == 0)
		return;
	res->supersede = palloc(sizeof(Datum) * SPI_processed);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		int64		rid = MemtxGetInt64(i, 1);
		int64		rtx = MemtxGetInt64(i, 2);
		double		rauth = MemtxGetFloat8(i, 3);
		char	   *rsource = MemtxGetText(i, 4);
		char	   *rowner = MemtxGetText(i, 5);
		bool		isnull;
		Datum		d;
		ArrayType  *rwriters;
		bool		stale = false;
		int			r;

		d = MemtxGet(i, 6, &isnull);
		rwriters = isnull ? NULL : DatumGetArrayTypeP(d);

		if (rtx != t->id)
		{
			Datum		xid = MemtxGet(i, 8, &isnull);

			/* a record seeded without commit positions predates everything */
			if (!isnull && !TxnSawCommit(t, xid, false, MemtxGetInt64(i, 9)))
				stale = true;
		}
		d = MemtxGet(i, 7, &isnull);
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
	if (res->reason != NULL)
		res->nsupersede = 0;
}

void
ConflictCheck(MemtxTxn *t, MemtxRec *cand, ConflictResult *res)
{
	memset(res, 0, sizeof(*res));
	res->reason = ConflictParents(t, cand);
	if (res->reason)
		return;
	if (ConflictLaundering(t, cand))
	{
		res->reason = "permission_laundering";
		return;
	}
	ConflictSlot(t, cand, res);
}

void
ConflictSupersede(Datum *ids, int n)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID};
	Datum		values[1];

	if (n == 0)
		return;
	values[0] = PointerGetDatum(construct_array(ids, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	MemtxExec(MemtxPlan(&plan,
						"UPDATE memtx.records SET state = 'superseded' "
						"WHERE id = ANY ($1) AND state IN ('committed', 'action_safe')",
						1, types),
			  values, NULL, false, 0);
}

/* Check 4: a transitive ancestor revoked or in the revocation registry. */
const char *
PipelineUnstableDependency(int64 id)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];

	values[0] = Int64GetDatum(id);
	MemtxExec(MemtxPlan(&plan,
						"WITH RECURSIVE anc(id) AS ("
						"  SELECT parent FROM memtx.edges WHERE child = $1"
						"  UNION"
						"  SELECT e.parent FROM memtx.edges e JOIN anc ON e.child = anc.id)"
						"SELECT 1 FROM anc JOIN memtx.records a ON a.id = anc.id "
						"LEFT JOIN memtx.revocation_registry rr ON rr.record_id = a.id "
						"WHERE a.state = 'revoked' OR rr.record_id IS NOT NULL LIMIT 1",
						1, types),
			  values, NULL, true, 1);
	return SPI_processed > 0 ? "unstable_dependency" : NULL;
}
