/*
 * invariants.c — memtx.check_invariants (SPEC §8).
 *
 * The checker recomputes every invariant from the records, the edges and the
 * action log, never from what the repair code believes it did:
 *
 *   I1  each allowed irreversible action was allowed under §5 at the moment
 *       it was recorded: no record whose staging the gate's snapshot could
 *       see was still unsettled in it, and the logged gate saw no blockers;
 *   I2  no transitive descendant of a retraction root is active, or tentative
 *       since before the retraction; every view quarantined by a cascade is
 *       in the registry; every tool_action descendant has a compensated or
 *       leaked entry, unless it was retracted itself (as a root) before a
 *       cascade reached it — cascades skip revoked descendants; and a tool
 *       action recorded while a record it derives from was tentative is,
 *       once the commit quarantined that record, revoked with such an entry;
 *   G3  no active record has a revoked or registered transitive ancestor;
 *   I4  single truth: no two active records share a slot with overlapping
 *       validity and different values;
 *   I5  no record of a transaction opened under a writer epoch
 *       became committed after the fence that ended that epoch (its clock
 *       position is above the fence's, SPEC §12);
 *   I6  every terminal disposition the store records
 *       (memtx.dispositions) has exactly one receipt, and no receipt names
 *       a disposition the store does not record (SPEC §11);
 *   I7  each namespace's chained receipts verify
 *       (memtx.receipt_problems: links, hashes, columns, subjects, digests),
 *       and so do the record states they anchor and every erasure (§17),
 *       each problem with the record it concerns;
 *   I8  no agent's proposal id is bound to two records of a namespace
 *       (§10, §17).
 *
 * The codes are those of the view memtx.invariants (SPEC §8 names I1, I2 and
 * G3; the others are numbered on from them).
 *
 * It returns one row per violation and nothing when all hold.  Unlike the
 * hot paths it reads whole tables: it is an audit, like amcheck.  Given a
 * namespace it checks that namespace only: its records, actions, retractions
 * and receipts (no invariant relates two namespaces).
 *
 * Cost.  The invariants about ancestry (I2, G3) ask of a set of records —
 * the retraction roots, the records quarantined at commit, the revoked and
 * registered ones — what lies below them.  Each is one walk down from the
 * whole set (memtx.descendants_of), never one walk per record: a chain of n
 * records aborted, revoked or quarantined record by record would otherwise
 * cost n²/2.  Two of them compare each record with the latest event above
 * it (a record tentative since before a retraction of an ancestor; a tool
 * action recorded before its input was quarantined): the walk's records are
 * loaded with their parents and that instant flows down the edges once
 * (dag.c).  Only a violation, which a healthy store has none of, costs a
 * walk of its own ancestry, to name the record it descends from.
 */
#include "dag.h"
#include "permissions.h"
#include "record.h"
#include "txn.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/xid8.h"

/*
 * The plain checks, in order: each a query of the namespace $1 (NULL: every
 * namespace) whose rows are violations (invariant, record, detail), in
 * the order they run; the checks that compare positions along the DAG
 * (InvariantsBelow) run in their places among them: the first after I1, the
 * second before G3.
 */
#define INV_NS(col) "($1::text IS NULL OR " col " = $1)"

static const char *const InvariantBefore[] = {
	/* I1: something was in flight when an irreversible action was allowed */
	"SELECT 'I1', a.action_id, pg_catalog.format("
	"  'action log %s (%s, record %s) was allowed while record %s was in flight', "
	"  a.id, a.tool, coalesce(a.action_id::text, 'none'), r.id) "
	"FROM memtx.action_log a JOIN memtx.records r "
	"  ON r.namespace = a.namespace AND r.staged_pos < a.gate_pos "
	"WHERE a.allowed AND NOT a.reversible AND r.id IS DISTINCT FROM a.action_id "
	"  AND " INV_NS("a.namespace") " "
	"  AND memtx.happened_before(r.staged_xid, r.staged_pos, a.gate_snapshot, a.gate_xid, a.gate_pos) "
	"  AND NOT coalesce(memtx.happened_before(r.settled_xid, r.settled_pos, "
	"                   a.gate_snapshot, a.gate_xid, a.gate_pos), false)",
	/* I1: the log says the gate saw blockers, yet the call was allowed */
	"SELECT 'I1', a.action_id, pg_catalog.format("
	"  'action log %s allowed %s although the gate saw blockers %s', a.id, a.tool, a.blockers) "
	"FROM memtx.action_log a "
	"WHERE a.allowed AND NOT a.reversible AND pg_catalog.cardinality(a.blockers) > 0 "
	"  AND " INV_NS("a.namespace"),
};

/*
 * The plain checks that run with the walks (InvariantWalkSettings): the
 * views' registry and the tool actions below retractions (I2), then, after
 * the second of InvariantsBelow, G3.
 */
static const char *const InvariantWalks[] = {
	/* I2: views quarantined by a cascade but missing from the registry */
	"SELECT 'I2', x.id, pg_catalog.format("
	"  'view %s (%s) was quarantined by a cascade but is not in the revocation registry', x.id, x.kind) "
	"FROM memtx.records x "
	"WHERE x.state = 'quarantined' AND x.reason = 'invalidated' "
	"  AND memtx.is_view_kind(x.kind) AND " INV_NS("x.namespace") " "
	"  AND NOT EXISTS (SELECT 1 FROM memtx.revocation_registry rr WHERE rr.record_id = x.id)",
	/* I2: tool actions below a retraction without a compensated or leaked entry */
	"SELECT 'I2', x.id, pg_catalog.format("
	"  'tool action %s (%s) descends from a retracted record but has no compensated or leaked entry', "
	"  x.id, x.entity) "
	"FROM (SELECT ARRAY(SELECT DISTINCT root_id FROM memtx.rollback_log "
	"                    WHERE record_id = root_id AND " INV_NS("namespace") ") AS ids OFFSET 0) s "
	"CROSS JOIN LATERAL memtx.descendants_of(s.ids) d(id) "
	"CROSS JOIN LATERAL (SELECT r.id, r.kind, r.entity FROM memtx.records r WHERE r.id = d.id OFFSET 0) x "
	"WHERE x.kind = 'tool_action' AND NOT EXISTS ("
	"  SELECT 1 FROM memtx.rollback_log l "
	"   WHERE l.record_id = x.id "
	"     AND (l.action IN ('compensated', 'leaked') OR l.root_id = x.id)) "
	"ORDER BY x.id",
	/* G3: active records with a revoked or registered ancestor */
	"SELECT 'G3', x.id, pg_catalog.format("
	"  'record %s is %s but has a revoked or registry-listed ancestor', x.id, x.state) "
	"FROM (SELECT ARRAY(SELECT DISTINCT rt.id FROM memtx.retracted rt "
	"                    WHERE " INV_NS("rt.namespace") ") AS ids OFFSET 0) s "
	"CROSS JOIN LATERAL memtx.descendants_of(s.ids) d(id) "
	"CROSS JOIN LATERAL (SELECT r.id, r.state FROM memtx.records r WHERE r.id = d.id OFFSET 0) x "
	"WHERE memtx.is_active(x.state) "
	"ORDER BY x.id",
};

static const char *const InvariantAfter[] = {
	/* I4, single truth */
	"SELECT 'I4', a.id, pg_catalog.format("
	"  'records %s and %s are both active on %s/%s.%s with overlapping validity and different values', "
	"  a.id, b.id, a.namespace, a.entity, a.attribute) "
	"FROM memtx.records a JOIN memtx.records b "
	"  ON b.id > a.id "
	" AND memtx.rivals(a.namespace, a.entity, a.attribute, a.valid, a.value, "
	"                  b.namespace, b.entity, b.attribute, b.valid, b.value) "
	"WHERE memtx.is_active(a.state) AND memtx.is_active(b.state) AND " INV_NS("a.namespace"),
	/* I5: a commit in a transaction of an epoch already fenced */
	"SELECT 'I5', r.id, pg_catalog.format("
	"  'record %s of transaction %s (role %s, epoch %s) was committed at position %s, "
	"after the fence to epoch %s at position %s', r.id, t.id, t.agent, t.epoch, r.committed_seq, "
	"  w.epoch, w.pos) "
	"FROM memtx.writer_epochs w "
	"JOIN memtx.transactions t ON t.agent = w.role_name AND t.epoch = w.epoch - 1 "
	"JOIN memtx.records r ON r.tx_id = t.id "
	"WHERE r.committed_seq > w.pos AND " INV_NS("r.namespace") " "
	"ORDER BY r.id",
	/* I6: a terminal disposition without exactly one receipt */
	"WITH d AS ("
	"  SELECT d.namespace, d.kind, d.subject, d.subject_is || coalesce(':' || (d.body->>'role'), '') AS key, "
	"         pg_catalog.count(*) AS n "
	"  FROM memtx.dispositions() d WHERE " INV_NS("d.namespace") " GROUP BY 1, 2, 3, 4),"
	" r AS ("
	"  SELECT r.namespace, r.kind, r.subject, (r.body->>'subject_is') || coalesce(':' || (r.body->>'role'), '') AS key, "
	"         pg_catalog.count(*) AS n "
	"  FROM memtx.receipts r WHERE " INV_NS("r.namespace") " GROUP BY 1, 2, 3, 4) "
	"SELECT 'I6', CASE WHEN key = 'record' THEN subject END, pg_catalog.format("
	"  '%s disposition of %s %s in namespace %s has %s receipts, not %s', "
	"  kind, key, subject, namespace, coalesce(r.n, 0), coalesce(d.n, 0)) "
	"FROM d FULL JOIN r USING (namespace, kind, subject, key) "
	"WHERE coalesce(d.n, 0) <> coalesce(r.n, 0) "
	"ORDER BY namespace, kind, subject",
	/* I7: a chained receipt altered or deleted behind the API */
	"SELECT 'I7', p.record_id, pg_catalog.format('namespace %s: %s', n.namespace, p.detail) "
	"FROM (SELECT DISTINCT namespace FROM memtx.receipts WHERE " INV_NS("namespace") ") n, "
	"     memtx.receipt_problems(n.namespace) p "
	"ORDER BY n.namespace, p.seq, p.record_id, p.detail",
	/* I8: one agent's proposal id bound to two records of a namespace */
	"SELECT 'I8', pg_catalog.min(id), pg_catalog.format("
	"  'proposal %s of agent %s is bound to %s records in namespace %s', proposal, proposer, "
	"  pg_catalog.count(*), namespace) "
	"FROM memtx.records WHERE proposal IS NOT NULL AND " INV_NS("namespace") " "
	"GROUP BY namespace, proposer, proposal HAVING pg_catalog.count(*) > 1",
};

/*
 * The checks that compare a record with the latest event above it.  The
 * first query lists the sources of the namespace $1 (id, and the event's
 * clock position); the second walks down from them all ($1, int8[]) and
 * lists the sources and every record below them, in id order: its parents,
 * whether it is a suspect at all, whether any event above it condemns it
 * (else only one after its staging does), its staging position and the
 * detail's words.  The detail names the lowest source above the record that
 * condemns it, as the checker always has.
 *
 * The walks' records are looked up one by one by id, as the walk finds them:
 * in a lateral subquery (no join for the planner to reorder) whose OFFSET 0
 * keeps every condition on the record's state outside it (a state condition
 * next to the id would let the planner intersect the id with a whole partial
 * index of active records, once per record).
 */
typedef struct InvariantBelow
{
	const char *sources;
	const char *walk;
	const char *format;			/* the detail: id, word, source id, word */
} InvariantBelow;

#define INV_BELOW_WALK(columns) \
	"SELECT n.id, ARRAY(SELECT e.parent FROM memtx.edges e WHERE e.child = n.id), x.* " \
	"FROM (SELECT s.id FROM unnest($1) s(id) " \
	"      UNION SELECT d.id FROM memtx.descendants_of($1) d(id)) n " \
	"CROSS JOIN LATERAL (SELECT " columns " FROM memtx.records r WHERE r.id = n.id OFFSET 0) x " \
	"ORDER BY n.id"

static const InvariantBelow InvariantsBelow[] = {
	/*
	 * I2: descendants of retraction roots left active, or tentative since
	 * before the retraction
	 */
	{
		"SELECT root_id, min(pos) FROM memtx.rollback_log "
		"WHERE record_id = root_id AND " INV_NS("namespace") " GROUP BY root_id",
		INV_BELOW_WALK("memtx.is_active(r.state) OR r.state = 'tentative', memtx.is_active(r.state), "
					   "r.staged_pos, r.kind::text, r.state::text"),
		"record %lld (%s) descends from retracted record %lld but is %s"
	},

	/*
	 * I2: tool actions recorded while a record they derive from was
	 * tentative, which the commit then quarantined, left active or without a
	 * compensated or leaked entry
	 */
	{
		"SELECT id, settled_pos FROM memtx.records "
		"WHERE verdict = 'quarantined' AND " INV_NS("namespace"),
		INV_BELOW_WALK("r.kind = 'tool_action' AND (memtx.is_active(r.state) OR NOT EXISTS ("
					   "  SELECT 1 FROM memtx.rollback_log l "
					   "   WHERE l.record_id = r.id "
					   "     AND (l.action IN ('compensated', 'leaked') OR l.root_id = r.id))), "
					   "false, r.staged_pos, r.entity, r.state::text"),
		"tool action %lld (%s) derives from record %lld, quarantined at commit after the action, "
		"but is %s without a compensated or leaked entry"
	},
};

/* Put a violation row into rsinfo's tuplestore. */
static void
InvariantEmit(ReturnSetInfo *rsinfo, const char *invariant, int64 id, char *detail)
{
	Datum		out[3];
	bool		nulls[3] = {false, false, false};

	out[0] = CStringGetTextDatum(invariant);
	out[1] = Int64GetDatum(id);
	out[2] = CStringGetTextDatum(detail);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
}

/*
 * The lowest source of dag above record id whose event makes id a
 * violation: any when all, else one later than staged.
 */
static int64
InvariantSource(Dag *dag, int64 id, bool all, int64 staged)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];
	int64		source = 0;

	values[0] = Int64GetDatum(id);
	MemtxExec(MemtxPlan(&plan, "SELECT a.id FROM memtx.ancestors($1) a(id) ORDER BY a.id", 1, types),
			  values, NULL, 0);
	for (uint64 i = 0; i < SPI_processed && source == 0; i++)
	{
		int64		a = MemtxGetInt64(i, 1);
		int64		seed = DagSeed(dag, a);

		if (seed != DAG_NONE && (all || seed > staged))
			source = a;
	}
	return source;
}

/* Run check c on namespace ns (a text datum, or NULL). */
static void
InvariantCheckBelow(ReturnSetInfo *rsinfo, int c, Datum *ns, const char *nulls)
{
	static SPIPlanPtr sources[lengthof(InvariantsBelow)];
	static SPIPlanPtr walks[lengthof(InvariantsBelow)];
	static const Oid nstypes[] = {TEXTOID};
	static const Oid idstypes[] = {INT8ARRAYOID};
	const InvariantBelow *check = &InvariantsBelow[c];
	SPITupleTable *tt;
	uint64		n;
	int64	   *ids;
	int64	   *pos;
	bool	   *seeded;
	Datum		walkargs[1];
	Dag		   *dag;

	MemtxExec(MemtxPlan(&sources[c], check->sources, 1, nstypes), ns, nulls, 0);
	n = SPI_processed;
	if (n == 0)
		return;
	ids = palloc(sizeof(int64) * n);
	pos = palloc(sizeof(int64) * n);
	seeded = palloc(sizeof(bool) * n);
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;

		ids[i] = MemtxGetInt64(i, 1);
		pos[i] = DatumGetInt64(MemtxGet(i, 2, &isnull));
		seeded[i] = !isnull;
	}
	walkargs[0] = RecIdsDatumOf(ids, (int) n);
	MemtxExec(MemtxPlan(&walks[c], check->walk, 1, idstypes), walkargs, NULL, 0);
	tt = SPI_tuptable;
	dag = DagLoad(tt, SPI_processed, 1, 2, 0);
	for (uint64 i = 0; i < n; i++)
		if (seeded[i])
			DagSeedSet(dag, ids[i], pos[i]);
	for (uint64 i = 0; i < tt->numvals; i++)
	{
		HeapTuple	tup = tt->vals[i];
		bool		isnull;
		int64		id;
		int64		reach;
		bool		all;
		int64		staged;

		if (!DatumGetBool(SPI_getbinval(tup, tt->tupdesc, 3, &isnull)))
			continue;
		id = DatumGetInt64(SPI_getbinval(tup, tt->tupdesc, 1, &isnull));
		reach = DagReach(dag, id);
		if (reach == DAG_NONE)
			continue;
		all = DatumGetBool(SPI_getbinval(tup, tt->tupdesc, 4, &isnull));
		staged = DatumGetInt64(SPI_getbinval(tup, tt->tupdesc, 5, &isnull));
		if (isnull && !all)
			continue;
		if (all || reach > staged)
		{
			char	   *word = SPI_getvalue(tup, tt->tupdesc, 6);
			char	   *state = SPI_getvalue(tup, tt->tupdesc, 7);
			int64		source = InvariantSource(dag, id, all, staged);

			InvariantEmit(rsinfo, "I2", id, psprintf(check->format, (long long) id, word,
													 (long long) source, state));
		}
	}
}

/*
 * Plan the walks of I2 and G3 as the protocol functions plan theirs: index
 * probes and nested loops only (hash and merge joins and sequential scans
 * off), so that each step of a walk probes the edges' index and each record
 * it finds is looked up by id, whatever the statistics a plan was made
 * with; the other checks read whole tables and keep the planner's choice.
 * Returns the GUC nest level to restore (AtEOXact_GUC; an error restores it
 * too).
 */
static int
InvariantWalkSettings(void)
{
	static const char *const off[] = {"enable_seqscan", "enable_hashjoin", "enable_mergejoin"};
	int			level = NewGUCNestLevel();

	for (int i = 0; i < (int) lengthof(off); i++)
		(void) set_config_option(off[i], "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
								 true, 0, false);
	return level;
}

/* Run the plain checks qs[0..n) (plans in plans[]) on namespace ns. */
static void
InvariantCheckPlain(ReturnSetInfo *rsinfo, const char *const *qs, SPIPlanPtr *plans, int n,
					Datum *ns, const char *nulls)
{
	static const Oid types[] = {TEXTOID};

	for (int q = 0; q < n; q++)
	{
		MemtxExec(MemtxPlan(&plans[q], qs[q], 1, types), ns, nulls, 0);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			Datum		out[3];
			bool		outnulls[3];

			for (int c = 0; c < 3; c++)
				out[c] = MemtxGet(i, c + 1, &outnulls[c]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, outnulls);
		}
	}
}

/*
 * memtx.check_invariants(namespace DEFAULT NULL) → SETOF (invariant, record_id, detail)
 *
 * NULL, or the 0.2.0 signature without an argument: every namespace.
 */
PG_FUNCTION_INFO_V1(memtx_check_invariants);
Datum
memtx_check_invariants(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr before[lengthof(InvariantBefore)];
	static SPIPlanPtr walks[lengthof(InvariantWalks)];
	static SPIPlanPtr after[lengthof(InvariantAfter)];
	int			level;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;
	Datum		ns[1] = {(Datum) 0};
	char		nulls[1] = {'n'};

	if (PG_NARGS() > 0 && !PG_ARGISNULL(0))
	{
		ns[0] = PG_GETARG_DATUM(0);
		nulls[0] = ' ';
	}
	InitMaterializedSRF(fcinfo, 0);
	MemtxCallBeginAudit(&call);	/* an audit: any isolation level */
	MemtxRequireHarness(&call, "check invariants");
	InvariantCheckPlain(rsinfo, InvariantBefore, before, lengthof(InvariantBefore), ns, nulls);
	level = InvariantWalkSettings();
	InvariantCheckBelow(rsinfo, 0, ns, nulls);
	InvariantCheckPlain(rsinfo, InvariantWalks, walks, 2, ns, nulls);
	InvariantCheckBelow(rsinfo, 1, ns, nulls);
	InvariantCheckPlain(rsinfo, InvariantWalks + 2, walks + 2, 1, ns, nulls);
	AtEOXact_GUC(true, level);
	InvariantCheckPlain(rsinfo, InvariantAfter, after, lengthof(InvariantAfter), ns, nulls);
	MemtxCallEnd(&call);
	return (Datum) 0;
}

/*
 * memtx.happened_before(xid, pos, snapshot, snapshot_xid, snapshot_pos):
 * whether an event at (xid, pos) precedes a snapshot taken at
 * (snapshot_xid, snapshot_pos).  NULL event: NULL.
 */
PG_FUNCTION_INFO_V1(memtx_happened_before);
Datum
memtx_happened_before(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		PG_RETURN_NULL();
	PG_RETURN_BOOL(MemtxBefore(PG_GETARG_FULLTRANSACTIONID(0), PG_GETARG_INT64(1),
							   PG_GETARG_DATUM(2), PG_GETARG_FULLTRANSACTIONID(3),
							   PG_GETARG_INT64(4)));
}
