/*
 * cascade.c — retraction and typed cascade repair (SPEC §6).
 *
 * memtx.abort(tx) and memtx.revoke(record, note) share one routine (as do
 * expiry and memtx.fence, which abort with reasons expired and fenced).  It
 * revokes each root, logs it, then walks every transitive descendant once —
 * a recursive query over the edges' parent index whose UNION visits a
 * diamond's base once — and repairs by kind and state:
 *
 *   tentative, raw, superseded, quarantined at commit   revoked (revoked_parent)
 *   active belief                                       revoked (revoked_parent)
 *   active summary, profile, index_entry, shared_copy   quarantined (invalidated),
 *                                                       entered in the registry
 *   active tool_action                                  compensated (reversible
 *                                                       tool: obligation row) or
 *                                                       leaked; then revoked
 *   view already quarantined and registered, revoked    left alone, no log row
 *
 * A root that is itself an active tool action is repaired the same way
 * (compensated or leaked, then revoked; SPEC §16): an agent that revokes its
 * own action does not escape its compensation.
 *
 * A commit that quarantines a record with tool actions below it (actions
 * taken on tentative inputs, by its own transaction or under another's
 * raw_read pin) runs the same repair on those actions and what
 * descends from them, with the quarantined record as root_id and no root row
 * (the record's verdict is its outcome); such a commit holds the namespace
 * lock exclusive, as every cascade does.
 *
 * The walk goes on through revoked records, so nothing derived from them is
 * left tentative or active.  Repairs are applied set-wise, one statement per
 * kind of repair, and every repair and each root writes one rollback_log row;
 * cost is linear in the number of descendants and independent of store size.
 * Several roots (an abort) are walked below at once, and each record below
 * several is repaired under the lowest root id above it, as the roots'
 * cascades one after another in id order would (the later ones would find
 * it repaired): a chain staged in one transaction and aborted is one walk,
 * not one per record.
 *
 * A cascade holds its namespace lock exclusive: stages, commits, acts and
 * resolutions (shared holders) wait for it or it for them, so the descendant
 * set it repairs is the complete one, and no commit can interleave with it.
 */
#include "fault.h"
#include "catalog.h"
#include "permissions.h"
#include "cascade.h"
#include "dag.h"
#include "events.h"
#include "fenceadmit.h"
#include "locks.h"
#include "receipt.h"
#include "record.h"
#include "subxact.h"
#include "visibility.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/xid8.h"

/* What a repair did to a record: the action column of memtx.rollback_log. */
typedef enum RepairAction
{
	RA_REVOKED,
	RA_QUARANTINED,
	RA_COMPENSATED,
	RA_LEAKED
} RepairAction;

static const char *const RepairActionNames[] = {
	"revoked", "quarantined", "compensated", "leaked"
};

typedef struct RepairList
{
	Datum	   *ids;
	Datum	   *kinds;
	Datum	   *actions;
	Datum	   *reasons;
	int			n;
	int			cap;
} RepairList;

static void
RepairAdd(RepairList *l, int64 id, MemtxKind kind, RepairAction action, MemtxReason reason)
{
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 64;
		l->ids = l->ids ? repalloc(l->ids, sizeof(Datum) * l->cap) : palloc(sizeof(Datum) * l->cap);
		l->kinds = l->kinds ? repalloc(l->kinds, sizeof(Datum) * l->cap) : palloc(sizeof(Datum) * l->cap);
		l->actions = l->actions ? repalloc(l->actions, sizeof(Datum) * l->cap) : palloc(sizeof(Datum) * l->cap);
		l->reasons = l->reasons ? repalloc(l->reasons, sizeof(Datum) * l->cap) : palloc(sizeof(Datum) * l->cap);
	}
	l->ids[l->n] = Int64GetDatum(id);
	l->kinds[l->n] = CStringGetTextDatum(MemtxKindNames[kind]);
	l->actions[l->n] = CStringGetTextDatum(RepairActionNames[action]);
	l->reasons[l->n] = CStringGetTextDatum(MemtxReasonName(reason));
	l->n++;
}

static Datum
CascadeTexts(Datum *texts, int n)
{
	return PointerGetDatum(construct_array(texts, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* Revoke ids (any non-terminal state) with reason; tentative ones settle now. */
static void
CascadeRevokeIds(Datum *ids, int n, MemtxReason reason)
{
	static SPIPlanPtr unvalidate;
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID, TEXTOID};
	Datum		values[2];

	if (n == 0)
		return;
	values[0] = RecIdsDatum(ids, n);
	values[1] = CStringGetTextDatum(MemtxReasonName(reason));
	/* validated is a step inside commit; it can only leave through quarantine */
	MemtxExec(MemtxPlan(&unvalidate,
						"UPDATE memtx.records SET state = 'quarantined' "
						"WHERE id = ANY ($1) AND state = 'validated'",
						1, types),
			  values, NULL, 0);
	MemtxExec(MemtxPlan(&plan,
						"UPDATE memtx.records SET state = 'revoked', reason = $2, "
						"verdict = CASE WHEN state = 'tentative' THEN 'revoked' ELSE verdict END, "
						"verdict_reason = CASE WHEN state = 'tentative' THEN $2 ELSE verdict_reason END, "
						"settled_xid = coalesce(settled_xid, pg_catalog.pg_current_xact_id()), "
						"settled_pos = coalesce(settled_pos, pg_catalog.nextval('memtx.clock')) "
						"WHERE id = ANY ($1) AND state <> 'revoked'",
						2, types),
			  values, NULL, 0);
}

/* Write the log rows of one root's cascade in ns; emit them when out is given. */
static void
CascadeLog(const char *ns, int64 root, RepairList *l, const char *note, Tuplestorestate *out)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, TEXTOID, TEXTOID};
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};

	if (l->n == 0)
		return;
	values[0] = Int64GetDatum(root);
	values[1] = RecIdsDatum(l->ids, l->n);
	values[2] = CascadeTexts(l->kinds, l->n);
	values[3] = CascadeTexts(l->actions, l->n);
	values[4] = CascadeTexts(l->reasons, l->n);
	values[5] = note ? CStringGetTextDatum(note) : (Datum) 0;
	nulls[5] = note ? ' ' : 'n';
	values[6] = CStringGetTextDatum(ns);
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.rollback_log (root_id, record_id, kind, action, reason, note, pos, namespace) "
						"SELECT $1, u.id, u.kind::memtx.kind, u.action, u.reason, $6, "
						"       pg_catalog.nextval('memtx.clock'), $7 "
						"FROM unnest($2, $3, $4, $5) WITH ORDINALITY AS u(id, kind, action, reason, ord) "
						"ORDER BY u.ord RETURNING *",
						7, types),
			  values, nulls, 0);
	if (out)
		for (uint64 i = 0; i < SPI_processed; i++)
			tuplestore_puttuple(out, SPI_tuptable->vals[i]);
}

/* A tool action's repair: an obligation row when its tool is reversible, then revoked. */
static void
CascadeRepairAction(RepairList *log, RepairList *comp, int64 id, bool reversible, MemtxReason reason)
{
	if (reversible)
		RepairAdd(comp, id, MK_TOOL_ACTION, RA_COMPENSATED, reason);
	RepairAdd(log, id, MK_TOOL_ACTION, reversible ? RA_COMPENSATED : RA_LEAKED, reason);
}

/*
 * Lock and list what lies below root, in id order: every transitive
 * descendant, or (below_actions) only the tool actions among them and what
 * descends from those.  Columns: id, kind, state, retracted (MEMTX_IS_RETRACTED),
 * reversible, view (memtx.is_view_kind).
 */
#define CASCADE_WALK_COLUMNS \
	"SELECT r.id, r.kind, r.state, " MEMTX_IS_RETRACTED("r") ", " \
	"       coalesce(t.reversible, false), memtx.is_view_kind(r.kind) "
#define CASCADE_WALK_JOINS \
	"JOIN memtx.records r ON r.id = d.id " \
	"LEFT JOIN memtx.tools t ON r.kind = 'tool_action' " \
	"      AND t.name = pg_catalog.substr(r.entity, 6) " \
	"ORDER BY r.id FOR UPDATE OF r"

static void
CascadeWalk(int64 root, bool below_actions)
{
	static SPIPlanPtr walk_all;
	static SPIPlanPtr walk_actions;
	static const Oid types[] = {INT8OID};
	Datum		values[1];

	values[0] = Int64GetDatum(root);
	if (below_actions)
		MemtxExec(MemtxPlan(&walk_actions,
							"WITH a(id) AS MATERIALIZED ("
							"  SELECT x.id FROM memtx.descendants($1) x(id) "
							"  JOIN memtx.records ra ON ra.id = x.id AND ra.kind = 'tool_action'), "
							"b(ids) AS MATERIALIZED (SELECT ARRAY(SELECT a.id FROM a)), "
							"d(id) AS (SELECT a.id FROM a UNION "
							"          SELECT y.id FROM b CROSS JOIN LATERAL memtx.descendants_of(b.ids) y(id)) "
							CASCADE_WALK_COLUMNS "FROM d " CASCADE_WALK_JOINS,
							1, types),
				  values, NULL, 0);
	else
		MemtxExec(MemtxPlan(&walk_all,
							CASCADE_WALK_COLUMNS "FROM memtx.descendants($1) d(id) " CASCADE_WALK_JOINS,
							1, types),
				  values, NULL, 0);
}

/*
 * Lock and list the roots rootids[0..n) and everything below them, in id
 * order, in one walk (memtx.descendants_of): the columns of CascadeWalk, then
 * each record's parents (int8[]).
 */
static void
CascadeWalkRoots(Datum *rootids, int n)
{
	static SPIPlanPtr walk;
	static const Oid types[] = {INT8ARRAYOID};
	Datum		values[1];

	values[0] = RecIdsDatum(rootids, n);
	MemtxExec(MemtxPlan(&walk,
						"WITH d(id) AS (SELECT s.id FROM unnest($1) s(id) "
						"               UNION SELECT x.id FROM memtx.descendants_of($1) x(id)) "
						CASCADE_WALK_COLUMNS
						", ARRAY(SELECT e.parent FROM memtx.edges e WHERE e.child = r.id) "
						"FROM d " CASCADE_WALK_JOINS,
						1, types),
			  values, NULL, 0);
}

/*
 * Sort a row of a walk (CascadeWalk) by repair: a view to quarantine goes to
 * views, a record to revoke to revoke, a tool action to compensate to comp,
 * and every repair to log.
 */
static void
CascadeClassifyRow(HeapTuple tup, TupleDesc td, RepairList *log, RepairList *comp,
				   RepairList *views, RepairList *revoke)
{
	bool		isnull;
	int64		id = DatumGetInt64(SPI_getbinval(tup, td, 1, &isnull));
	MemtxKind	kind = (MemtxKind) CatalogEnumIndex(ME_KIND, SPI_getbinval(tup, td, 2, &isnull));
	MemtxState	state = (MemtxState) CatalogEnumIndex(ME_STATE, SPI_getbinval(tup, td, 3, &isnull));
	bool		retracted = DatumGetBool(SPI_getbinval(tup, td, 4, &isnull));
	bool		reversible = DatumGetBool(SPI_getbinval(tup, td, 5, &isnull));
	bool		view = DatumGetBool(SPI_getbinval(tup, td, 6, &isnull));

	/* revoked, or a view quarantined and registered already */
	if (retracted && (state == MS_REVOKED || state == MS_QUARANTINED))
		return;
	if (MEMTX_IS_ACTIVE(state) && view)
	{
		RepairAdd(views, id, kind, RA_QUARANTINED, MR_INVALIDATED);
		RepairAdd(log, id, kind, RA_QUARANTINED, MR_INVALIDATED);
		return;
	}
	if (MEMTX_IS_ACTIVE(state) && kind == MK_TOOL_ACTION)
		CascadeRepairAction(log, comp, id, reversible, MR_REVOKED_PARENT);
	else
		RepairAdd(log, id, kind, RA_REVOKED, MR_REVOKED_PARENT);
	RepairAdd(revoke, id, kind, RA_REVOKED, MR_REVOKED_PARENT);
}

/*
 * Run a statement with $1 = ids (int8[]), $2 = root and $3 = the namespace
 * ns (the first nargs of them), unless ids is empty.
 */
static void
CascadeExecIds(SPIPlanPtr *slot, const char *sql, int nargs, const char *ns, int64 root, Datum *ids, int n)
{
	static const Oid types[] = {INT8ARRAYOID, INT8OID, TEXTOID};
	Datum		values[3];

	if (n == 0)
		return;
	values[0] = RecIdsDatum(ids, n);
	values[1] = Int64GetDatum(root);
	values[2] = CStringGetTextDatum(ns);
	MemtxExec(MemtxPlan(slot, sql, nargs, types), values, NULL, 0);
}

/* Quarantine the views in ids (invalidated) and enter them in ns's registry under root. */
static void
CascadeInvalidateViews(const char *ns, int64 root, Datum *ids, int n)
{
	static SPIPlanPtr quarantine;
	static SPIPlanPtr registry;

	CascadeExecIds(&quarantine,
				   "UPDATE memtx.records SET state = 'quarantined', reason = 'invalidated' "
				   "WHERE id = ANY ($1)",
				   1, ns, root, ids, n);
	CascadeExecIds(&registry,
				   "INSERT INTO memtx.revocation_registry (record_id, root_id, namespace) "
				   "SELECT unnest($1), $2, $3 ON CONFLICT (record_id, namespace) DO NOTHING",
				   3, ns, root, ids, n);
}

/* An obligation row under root for each tool action in ids (of ns), naming its compensator. */
static void
CascadeCompensate(const char *ns, int64 root, Datum *ids, int n)
{
	static SPIPlanPtr compensate;

	CascadeExecIds(&compensate,
				   "INSERT INTO memtx.compensations (root_id, action_id, tool, compensator, args, namespace) "
				   "SELECT $2, r.id, pg_catalog.substr(r.entity, 6), t.compensator, r.value, $3 "
				   "FROM memtx.records r LEFT JOIN memtx.tools t "
				   "  ON t.name = pg_catalog.substr(r.entity, 6) "
				   "WHERE r.id = ANY ($1) ORDER BY r.id",
				   3, ns, root, ids, n);
}

/* Apply root's repairs (of namespace ns): revoke, views to quarantine, tool actions to compensate. */
static void
CascadeApply(const char *ns, int64 root, RepairList *revoke, RepairList *views, RepairList *comp)
{
	CascadeRevokeIds(revoke->ids, revoke->n, MR_REVOKED_PARENT);
	CascadeInvalidateViews(ns, root, views->ids, views->n);
	CascadeCompensate(ns, root, comp->ids, comp->n);
}

/*
 * Repair, by kind and state, what lies below root (of namespace ns): every transitive
 * descendant, or (below_actions) only the tool actions among them and what
 * descends from those.  Log rows go to log; comp holds the tool actions to
 * compensate (the caller may have added root itself).
 */
static void
CascadeRepairBelow(const char *ns, int64 root, bool below_actions, RepairList *log, RepairList *comp)
{
	RepairList	revoke = {0};
	RepairList	views = {0};
	SPITupleTable *walk;

	CascadeWalk(root, below_actions);
	walk = SPI_tuptable;
	for (uint64 i = 0; i < SPI_processed; i++)
		CascadeClassifyRow(walk->vals[i], walk->tupdesc, log, comp, &views, &revoke);
	CascadeApply(ns, root, &revoke, &views, comp);
}

/*
 * Sort what lies below the roots rootids[0..n) (revoked, in id order) by
 * repair and by root, as the roots' cascades one after another would: each
 * record below several roots is repaired under the first of them (in id
 * order), and the later ones find it repaired and skip it.  One walk for all
 * the roots (an abort of a chain staged in one transaction has as many roots
 * as records, each below the one before), then the first root above each
 * record flows down the edges (dag.c).  Into the per-root lists log[],
 * comp[], views[] and revoke[].
 */
static void
CascadeClassifyRoots(Datum *rootids, int n, RepairList *log, RepairList *comp,
					 RepairList *views, RepairList *revoke)
{
	SPITupleTable *walk;
	uint64		m;
	Dag		   *dag;

	CascadeWalkRoots(rootids, n);
	walk = SPI_tuptable;
	m = SPI_processed;
	dag = DagLoad(walk, m, 1, 7, 0);
	/* the lowest root id above a record is the greatest of the negated ids */
	for (int r = 0; r < n; r++)
		DagSeedSet(dag, DatumGetInt64(rootids[r]), -DatumGetInt64(rootids[r]));
	for (uint64 i = 0; i < m; i++)
	{
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(walk->vals[i], walk->tupdesc, 1, &isnull));
		int64		reach = DagReach(dag, id);
		int			lo = 0;
		int			hi = n - 1;

		if (reach == DAG_NONE)
			continue;			/* a root below no other */
		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (DatumGetInt64(rootids[mid]) < -reach)
				lo = mid + 1;
			else
				hi = mid;
		}
		Assert(DatumGetInt64(rootids[lo]) == -reach);
		CascadeClassifyRow(walk->vals[i], walk->tupdesc, &log[lo], &comp[lo], &views[lo], &revoke[lo]);
	}
}

/*
 * Lock the live roots among rootids[0..nroots) and log each one's own
 * repair with root_reason: an active tool action is compensated or leaked,
 * any other root revoked.  Overwrites rootids with the live roots, in id
 * order; their logs go to rootlog[i], compensations to rootcomp[i] (arrays
 * of *nlive, palloc'd).
 */
static void
CascadeLockRoots(Datum *rootids, int nroots, MemtxReason root_reason,
				 RepairList **rootlog, RepairList **rootcomp, uint64 *nlive)
{
	static SPIPlanPtr lock_roots;
	static const Oid types[] = {INT8ARRAYOID};
	Datum		values[1];
	SPITupleTable *tt;
	uint64		n;

	values[0] = RecIdsDatum(rootids, nroots);
	MemtxExec(MemtxPlan(&lock_roots,
						"SELECT r.id, r.kind, r.kind = 'tool_action' AND memtx.is_active(r.state), "
						"       coalesce(t.reversible, false) "
						"FROM memtx.records r LEFT JOIN memtx.tools t ON r.kind = 'tool_action' "
						"      AND t.name = pg_catalog.substr(r.entity, 6) "
						"WHERE r.id = ANY ($1) AND r.state <> 'revoked' ORDER BY r.id FOR UPDATE OF r",
						1, types),
			  values, NULL, 0);
	tt = SPI_tuptable;
	n = SPI_processed;
	*rootlog = palloc0(sizeof(RepairList) * (n + 1));
	*rootcomp = palloc0(sizeof(RepairList) * (n + 1));
	for (uint64 i = 0; i < n; i++)
	{
		HeapTuple	tup = tt->vals[i];
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tup, tt->tupdesc, 1, &isnull));

		rootids[i] = Int64GetDatum(id);
		if (DatumGetBool(SPI_getbinval(tup, tt->tupdesc, 3, &isnull)))
			CascadeRepairAction(&(*rootlog)[i], &(*rootcomp)[i], id,
								DatumGetBool(SPI_getbinval(tup, tt->tupdesc, 4, &isnull)),
								root_reason);
		else
			RepairAdd(&(*rootlog)[i], id,
					  (MemtxKind) CatalogEnumIndex(ME_KIND, SPI_getbinval(tup, tt->tupdesc, 2, &isnull)),
					  RA_REVOKED, root_reason);
	}
	*nlive = n;
}

int
CascadeRun(const char *ns, int64 *roots, int nroots,
		   MemtxReason root_reason, const char *note,
		   Tuplestorestate *out, CascadeReceipt receipt, int64 tx)
{
	Datum	   *rootids;
	int			written = 0;
	uint64		n;
	RepairList *rootlog;
	RepairList *rootcomp;
	RepairList *revoke = NULL;
	RepairList *views = NULL;

	LockNamespace(ns, true);

	/*
	 * Revoke every live root first, so a root below another keeps its own
	 * reason.  A root that is itself an active tool action is repaired like a
	 * descendant: compensated or leaked, then revoked.
	 */
	rootids = palloc(sizeof(Datum) * (nroots + 1));
	for (int i = 0; i < nroots; i++)
		rootids[i] = Int64GetDatum(roots[i]);
	CascadeLockRoots(rootids, nroots, root_reason, &rootlog, &rootcomp, &n);
	CascadeRevokeIds(rootids, (int) n, root_reason);
	FaultPoint("cascade:revoked");

	/* several roots: one walk below them all, sorted by root */
	if (n > 1)
	{
		revoke = palloc0(sizeof(RepairList) * n);
		views = palloc0(sizeof(RepairList) * n);
		CascadeClassifyRoots(rootids, (int) n, rootlog, rootcomp, views, revoke);
	}
	for (uint64 r = 0; r < n; r++)
	{
		int64		root = DatumGetInt64(rootids[r]);

		if (n > 1)
			CascadeApply(ns, root, &revoke[r], &views[r], &rootcomp[r]);
		else
			CascadeRepairBelow(ns, root, false, &rootlog[r], &rootcomp[r]);
		FaultPoint("cascade:repaired");
		CascadeLog(ns, root, &rootlog[r], note, out);
		written += rootlog[r].n;
		if (receipt == CASCADE_RECEIPT_PER_ROOT)
			ReceiptRetract(ns, root, false, root_reason, rootlog[r].ids, rootlog[r].n);
		MemtxNotify("cascade", 0, root, MemtxReasonName(root_reason), rootlog[r].n);
	}
	if (receipt == CASCADE_RECEIPT_TX)
	{
		Datum	   *all = palloc(sizeof(Datum) * (written + 1));
		int			m = 0;

		for (uint64 r = 0; r < n; r++)
			for (int i = 0; i < rootlog[r].n; i++)
				all[m++] = rootlog[r].ids[i];
		ReceiptRetract(ns, tx, true, root_reason, all, m);
	}
	FaultPoint("cascade:logged");
	return written;
}

/*
 * Repair the tool actions derived from record root, which a commit has just
 * quarantined, and what descends from them, as a cascade would (SPEC §16 "Act
 * inputs"): root leaves tentative other than by committing.  The rows carry
 * root as their root; root itself gets none (its verdict is its outcome).
 * The caller holds the namespace lock exclusive, or shared when every such
 * root was staged in its own SQL transaction (CascadeStagingPrivate).
 */
void
CascadeRepairActions(const char *ns, int64 root, MemtxReason reason)
{
	RepairList	log = {0};
	RepairList	comp = {0};

	Assert(LockNamespaceHeld(ns, false));
	CascadeRepairBelow(ns, root, true, &log, &comp);
	if (log.n == 0)
		return;
	CascadeLog(ns, root, &log, NULL, NULL);
	MemtxNotify("cascade", 0, root, MemtxReasonName(reason), log.n);
}

/*
 * Whether a tool action derives from a tentative record of transaction tx
 * (an active one, or one already revoked: the repair walks on through it to
 * what was staged below it since): its commit may then quarantine an
 * action's input, and the repair needs the namespace lock exclusive.  The action may be tx's own or
 * another transaction's (a raw_read pin lets it act on tx's staging).
 * Called with tx's row locked: tx's own acts wait for that lock, and so do
 * other transactions' (act locks the rows of its inputs' tentative owners,
 * gate.c), so no such action can appear before the commit ends.  A record
 * without children (the common case) costs one probe of the edges' parent
 * index.
 */
bool
CascadeStagingHasActions(int64 tx)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];

	values[0] = Int64GetDatum(tx);
	/*
	 * The records with children first, as an array: the planner would
	 * otherwise join the descendants with every active record (a scan of
	 * the store).  They are read in staging order, through the transaction's
	 * index: the partial index of tentative records would serve as well,
	 * but keeps the entry of every record that was ever tentative until
	 * VACUUM, and many proposals in one SQL transaction would each read all
	 * of the earlier ones'.  Their descendants are walked in one pass (a
	 * chain staged in the transaction is walked once, not once per record),
	 * and each is looked up by id.
	 */
	MemtxExec(MemtxPlan(&plan,
						"WITH p(ids) AS MATERIALIZED (SELECT ARRAY("
						"  SELECT r.id FROM memtx.records r "
						"  WHERE r.tx_id = $1 AND r.state = 'tentative' "
						"    AND EXISTS (SELECT 1 FROM memtx.edges e WHERE e.parent = r.id) "
						"  ORDER BY r.staged_pos)) "
						"SELECT 1 FROM p CROSS JOIN LATERAL memtx.descendants_of(p.ids) d(id) "
						"WHERE (SELECT a.kind = 'tool_action' FROM memtx.records a WHERE a.id = d.id) "
						"LIMIT 1",
						1, types),
			  values, NULL, 1);
	return SPI_processed > 0;
}

/*
 * Whether every tentative record of transaction tx that has children was
 * staged in the current SQL transaction.  Then nothing below them can be
 * another SQL transaction's: until this one commits no other can see them,
 * so none can stage a child of them or act on them (under a raw_read pin)
 * — and their actions, inserted here too, are as invisible.  A commit
 * repairing such actions has nothing to wait for and keeps the namespace
 * lock shared: two turns that each stage, act and commit in one SQL
 * transaction do not deadlock by both upgrading it (SPEC §17).
 */
bool
CascadeStagingPrivate(int64 tx)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID, XID8OID};
	Datum		values[2];

	values[0] = Int64GetDatum(tx);
	values[1] = FullTransactionIdGetDatum(GetTopFullTransactionId());
	MemtxExec(MemtxPlan(&plan,
						"SELECT 1 FROM memtx.records r "
						"WHERE r.tx_id = $1 AND r.state = 'tentative' AND r.staged_xid <> $2 "
						"  AND EXISTS (SELECT 1 FROM memtx.edges e WHERE e.parent = r.id) "
						"LIMIT 1",
						2, types),
			  values, NULL, 1);
	return SPI_processed == 0;
}

/*
 * memtx.revoke(record, note) → SETOF memtx.rollback_log
 */
PG_FUNCTION_INFO_V1(memtx_revoke);
Datum
memtx_revoke(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	int64		id;
	MemtxRec	rec;
	char	   *note = NULL;

	MemtxRequireArg(fcinfo, 0, "record id");
	id = PG_GETARG_INT64(0);
	if (!PG_ARGISNULL(1))
	{
		note = text_to_cstring(PG_GETARG_TEXT_PP(1));
		if (strlen(note) > 4096)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("note is too long (%zu bytes, at most 4096)", strlen(note))));
	}
	InitMaterializedSRF(fcinfo, 0);

	MemtxCallBegin(&call);
	(void) FenceAdmitWriter(call.caller_name);
	RecFetchOwned(&call, id, "revoke", &rec);

	CascadeRun(rec.namespace, &id, 1, MR_REVOKED, note, rsinfo->setResult,
			   CASCADE_RECEIPT_PER_ROOT, 0);
	MemtxCallEnd(&call);
	return (Datum) 0;
}

/*
 * Abort transaction t (its row locked) with reason aborted, expired or
 * fenced: revoke its tentative staging, repair, end it.
 */
void
CascadeAbort(MemtxTxn *t, MemtxReason reason, Tuplestorestate *out)
{
	static SPIPlanPtr staged;
	static const Oid types[] = {INT8OID};
	Datum		values[1];
	int64	   *ids;
	uint64		n;

	LockNamespace(t->namespace, true);
	values[0] = Int64GetDatum(t->id);
	MemtxExec(MemtxPlan(&staged,
						"SELECT id FROM memtx.records WHERE tx_id = $1 AND state = 'tentative' ORDER BY id",
						1, types),
			  values, NULL, 0);
	ids = MemtxGetInt64Column(1, &n);
	CascadeRun(t->namespace, ids, (int) n, reason, NULL, out, CASCADE_RECEIPT_TX, t->id);
	FaultPoint("abort:cascaded");
	TxnEnd(t, MX_ABORTED, reason);
	MemtxNotify(reason == MR_EXPIRED ? "expired" : "aborted",
				t->id, 0, MemtxReasonName(reason), (int64) n);
}

/*
 * memtx.abort(tx) → SETOF memtx.rollback_log
 *
 * Aborting an aborted transaction returns no rows; a committed one cannot be
 * aborted (revoke its records instead).
 */
PG_FUNCTION_INFO_V1(memtx_abort);
Datum
memtx_abort(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	MemtxTxn   *t;

	MemtxRequireArg(fcinfo, 0, "transaction id");
	InitMaterializedSRF(fcinfo, 0);
	MemtxCallBegin(&call);
	t = TxnLoad(&call, PG_GETARG_INT64(0), TXN_NEED_ANY);
	if (t->status == MX_ABORTED)
	{
		MemtxCallEnd(&call);
		return (Datum) 0;
	}
	if (t->status != MX_OPEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("memtx transaction %lld is %s and cannot be aborted",
						(long long) t->id, MemtxTxStatusNames[t->status]),
				 errhint("Revoke its records with memtx.revoke instead.")));
	CascadeAbort(t, MR_ABORTED, rsinfo->setResult);
	MemtxCallEnd(&call);
	return (Datum) 0;
}

/*
 * Expire the transactions ids[0..n) of namespace ns, which the caller holds
 * FOR UPDATE, in a subtransaction: when the namespace lock cannot be had
 * within lock_timeout (a writer idle in its SQL transaction holds it), the
 * namespace is skipped and false returned; the next run retries it.
 */
typedef struct CascadeExpiry
{
	const char *ns;
	int64	   *ids;
	int			n;
	Tuplestorestate *out;
	TupleDesc	desc;
} CascadeExpiry;

static bool
CascadeExpireBody(void *arg)
{
	CascadeExpiry *x = arg;

	LockNamespace(x->ns, true);
	for (int i = 0; i < x->n; i++)
	{
		Datum		v = Int64GetDatum(x->ids[i]);
		bool		isnull = false;

		/* load without renewing: the lease is over */
		CascadeAbort(TxnLoadExpired(x->ids[i]), MR_EXPIRED, NULL);
		FaultPoint("expire:namespace");
		tuplestore_putvalues(x->out, x->desc, &v, &isnull);
	}
	return true;
}

static bool
CascadeExpireNamespace(const char *ns, int64 *ids, int n, Tuplestorestate *out, TupleDesc desc)
{
	CascadeExpiry x = {ns, ids, n, out, desc};

	if (SubxactRun(CascadeExpireBody, &x, ERRCODE_LOCK_NOT_AVAILABLE))
		return true;
	ereport(LOG,
			(errmsg("memtx expiry skipped namespace \"%s\": its lock is held", ns),
			 errdetail_plural("%d expired transaction waits for the next run.",
							  "%d expired transactions wait for the next run.", n, n)));
	return false;
}

/*
 * memtx.expire_transactions(namespace DEFAULT NULL) → SETOF bigint
 *
 * Aborts, with reason expired, every open transaction (of the namespace,
 * when given) that counts as expired (memtx.lease_expired: its lease ran
 * out, or it was open across a crash that may have lost its reads).  Transactions locked by a call in
 * progress are skipped (that call renews their lease), and so is every
 * namespace whose lock is not had within lock_timeout: a writer idle in its
 * SQL transaction holds up expiry of its own namespace only.
 */
PG_FUNCTION_INFO_V1(memtx_expire_transactions);
Datum
memtx_expire_transactions(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr expired;
	static const Oid types[] = {TEXTOID};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	Datum		values[1];
	char		nulls[1] = {' '};
	int64	   *ids;
	char	  **nss;
	uint64		n;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "expire transactions");
	if (PG_NARGS() > 0 && !PG_ARGISNULL(0))
		values[0] = PG_GETARG_DATUM(0);
	else
		nulls[0] = 'n';
	MemtxExec(MemtxPlan(&expired,
						"SELECT id, namespace FROM memtx.transactions "
						"WHERE status = 'open' AND memtx.lease_expired(lease_expires_at, snapshot_xid) "
						"  AND ($1 IS NULL OR namespace = $1) "
						"ORDER BY namespace, id FOR UPDATE SKIP LOCKED",
						1, types),
			  values, nulls, 0);
	n = SPI_processed;
	ids = palloc(sizeof(int64) * (n + 1));
	nss = palloc(sizeof(char *) * (n + 1));
	for (uint64 i = 0; i < n; i++)
	{
		ids[i] = MemtxGetInt64(i, 1);
		nss[i] = MemtxGetText(i, 2);
	}
	for (uint64 first = 0, next; first < n; first = next)
	{
		for (next = first + 1; next < n && strcmp(nss[next], nss[first]) == 0; next++)
			;
		(void) CascadeExpireNamespace(nss[first], ids + first, (int) (next - first),
									  rsinfo->setResult, rsinfo->setDesc);
	}
	MemtxCallEnd(&call);
	return (Datum) 0;
}
