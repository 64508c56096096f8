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
 *   single truth  no two active records share a slot with overlapping
 *       validity and different values;
 *   fenced_epoch  no record of a transaction opened under a writer epoch
 *       became committed after the fence that ended that epoch (its clock
 *       position is above the fence's, SPEC §12);
 *   receipts  every terminal disposition the store records
 *       (memtx.dispositions) has exactly one receipt, and no receipt names
 *       a disposition the store does not record (SPEC §11);
 *   receipt_chain  each namespace's chained receipts verify
 *       (memtx.receipt_problems: links, hashes, columns, subjects, digests),
 *       and so do the record states they anchor and every erasure (§17),
 *       each problem with the record it concerns;
 *   proposal  no agent's proposal id is bound to two records of a
 *             namespace (§10, §17).
 *
 * It returns one row per violation and nothing when all hold.  Unlike the
 * hot paths it reads whole tables: it is an audit, like amcheck.
 */
#include "record.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/xid8.h"

static const char *const InvariantQueries[] = {
	/* I1: something was in flight when an irreversible action was allowed */
	"SELECT 'I1', a.action_id, pg_catalog.format("
	"  'action log %s (%s, record %s) was allowed while record %s was in flight', "
	"  a.id, a.tool, coalesce(a.action_id::text, 'none'), r.id) "
	"FROM memtx.action_log a JOIN memtx.records r "
	"  ON r.namespace = a.namespace AND r.staged_pos < a.gate_pos "
	"WHERE a.allowed AND NOT a.reversible AND r.id IS DISTINCT FROM a.action_id "
	"  AND memtx.happened_before(r.staged_xid, r.staged_pos, a.gate_snapshot, a.gate_xid, a.gate_pos) "
	"  AND NOT coalesce(memtx.happened_before(r.settled_xid, r.settled_pos, "
	"                   a.gate_snapshot, a.gate_xid, a.gate_pos), false)",
	/* I1: the log says the gate saw blockers, yet the call was allowed */
	"SELECT 'I1', a.action_id, pg_catalog.format("
	"  'action log %s allowed %s although the gate saw blockers %s', a.id, a.tool, a.blockers) "
	"FROM memtx.action_log a "
	"WHERE a.allowed AND NOT a.reversible AND pg_catalog.cardinality(a.blockers) > 0",
	/* I2: descendants of retraction roots left active or tentative */
	"WITH roots(id, pos) AS ("
	"  SELECT root_id, min(pos) FROM memtx.rollback_log WHERE record_id = root_id GROUP BY root_id),"
	" d(root, id) AS (SELECT r.id, x FROM roots r, memtx.descendants(r.id) x) "
	"SELECT DISTINCT ON (x.id) 'I2', x.id, pg_catalog.format("
	"  'record %s (%s) descends from retracted record %s but is %s', x.id, x.kind, d.root, x.state) "
	"FROM d JOIN memtx.records x ON x.id = d.id JOIN roots ON roots.id = d.root "
	"WHERE memtx.is_active(x.state) "
	"   OR (x.state = 'tentative' AND x.staged_pos < roots.pos) "
	"ORDER BY x.id, d.root",
	/* I2: views quarantined by a cascade but missing from the registry */
	"SELECT 'I2', x.id, pg_catalog.format("
	"  'view %s (%s) was quarantined by a cascade but is not in the revocation registry', x.id, x.kind) "
	"FROM memtx.records x "
	"WHERE x.state = 'quarantined' AND x.reason = 'invalidated' "
	"  AND x.kind IN ('summary', 'profile', 'index_entry', 'shared_copy') "
	"  AND NOT EXISTS (SELECT 1 FROM memtx.revocation_registry rr WHERE rr.record_id = x.id)",
	/* I2: tool actions below a retraction without a compensated or leaked entry */
	"WITH roots(id) AS ("
	"  SELECT DISTINCT root_id FROM memtx.rollback_log WHERE record_id = root_id),"
	" d(id) AS (SELECT DISTINCT x FROM roots r, memtx.descendants(r.id) x) "
	"SELECT 'I2', x.id, pg_catalog.format("
	"  'tool action %s (%s) descends from a retracted record but has no compensated or leaked entry', "
	"  x.id, x.entity) "
	"FROM d JOIN memtx.records x ON x.id = d.id "
	"WHERE x.kind = 'tool_action' AND NOT EXISTS ("
	"  SELECT 1 FROM memtx.rollback_log l "
	"   WHERE l.record_id = x.id "
	"     AND (l.action IN ('compensated', 'leaked') OR l.root_id = x.id))",
	/*
	 * I2: tool actions recorded while a record they derive from was
	 * tentative, which the commit then quarantined, left active or without
	 * a compensated or leaked entry
	 */
	"SELECT DISTINCT ON (x.id) 'I2', x.id, pg_catalog.format("
	"  'tool action %s (%s) derives from record %s, quarantined at commit after the action, "
	"but is %s without a compensated or leaked entry', x.id, x.entity, q.id, x.state) "
	"FROM memtx.records q, memtx.descendants(q.id) d(id) JOIN memtx.records x ON x.id = d.id "
	"WHERE q.verdict = 'quarantined' AND x.kind = 'tool_action' AND q.settled_pos > x.staged_pos "
	"  AND (memtx.is_active(x.state) OR NOT EXISTS ("
	"    SELECT 1 FROM memtx.rollback_log l "
	"     WHERE l.record_id = x.id "
	"       AND (l.action IN ('compensated', 'leaked') OR l.root_id = x.id))) "
	"ORDER BY x.id, q.id",
	/* G3: active records with a revoked or registered ancestor */
	"WITH bad(id) AS ("
	"  SELECT id FROM memtx.records WHERE state = 'revoked'"
	"  UNION SELECT record_id FROM memtx.revocation_registry),"
	" d(id) AS (SELECT DISTINCT x FROM bad b, memtx.descendants(b.id) x) "
	"SELECT 'G3', x.id, pg_catalog.format("
	"  'record %s is %s but has a revoked or registry-listed ancestor', x.id, x.state) "
	"FROM d JOIN memtx.records x ON x.id = d.id "
	"WHERE memtx.is_active(x.state)",
	/* single truth */
	"SELECT 'single_truth', a.id, pg_catalog.format("
	"  'records %s and %s are both active on %s/%s.%s with overlapping validity and different values', "
	"  a.id, b.id, a.namespace, a.entity, a.attribute) "
	"FROM memtx.records a JOIN memtx.records b "
	"  ON b.id > a.id "
	" AND memtx.rivals(a.namespace, a.entity, a.attribute, a.valid, a.value, "
	"                  b.namespace, b.entity, b.attribute, b.valid, b.value) "
	"WHERE memtx.is_active(a.state) AND memtx.is_active(b.state)",
	/* fenced_epoch: a commit in a transaction of an epoch already fenced */
	"SELECT 'fenced_epoch', r.id, pg_catalog.format("
	"  'record %s of transaction %s (role %s, epoch %s) was committed at position %s, "
	"after the fence to epoch %s at position %s', r.id, t.id, t.agent, t.epoch, r.committed_seq, "
	"  w.epoch, w.pos) "
	"FROM memtx.writer_epochs w "
	"JOIN memtx.transactions t ON t.agent = w.role_name AND t.epoch = w.epoch - 1 "
	"JOIN memtx.records r ON r.tx_id = t.id "
	"WHERE r.committed_seq > w.pos "
	"ORDER BY r.id",
	/* receipts: a terminal disposition without exactly one receipt */
	"WITH d AS ("
	"  SELECT d.namespace, d.kind, d.subject, d.subject_is || coalesce(':' || (d.body->>'role'), '') AS key, "
	"         pg_catalog.count(*) AS n "
	"  FROM memtx.dispositions() d GROUP BY 1, 2, 3, 4),"
	" r AS ("
	"  SELECT r.namespace, r.kind, r.subject, (r.body->>'subject_is') || coalesce(':' || (r.body->>'role'), '') AS key, "
	"         pg_catalog.count(*) AS n "
	"  FROM memtx.receipts r GROUP BY 1, 2, 3, 4) "
	"SELECT 'receipts', CASE WHEN key = 'record' THEN subject END, pg_catalog.format("
	"  '%s disposition of %s %s in namespace %s has %s receipts, not %s', "
	"  kind, key, subject, namespace, coalesce(r.n, 0), coalesce(d.n, 0)) "
	"FROM d FULL JOIN r USING (namespace, kind, subject, key) "
	"WHERE coalesce(d.n, 0) <> coalesce(r.n, 0) "
	"ORDER BY namespace, kind, subject",
	/* receipt_chain: a chained receipt altered or deleted behind the API */
	"SELECT 'receipt_chain', p.record_id, pg_catalog.format('namespace %s: %s', n.namespace, p.detail) "
	"FROM (SELECT DISTINCT namespace FROM memtx.receipts) n, memtx.receipt_problems(n.namespace) p "
	"ORDER BY n.namespace, p.seq, p.record_id, p.detail",
	/* proposal: one agent's proposal id bound to two records of a namespace */
	"SELECT 'proposal', pg_catalog.min(id), pg_catalog.format("
	"  'proposal %s of agent %s is bound to %s records in namespace %s', proposal, proposer, "
	"  pg_catalog.count(*), namespace) "
	"FROM memtx.records WHERE proposal IS NOT NULL "
	"GROUP BY namespace, proposer, proposal HAVING pg_catalog.count(*) > 1",
};

PG_FUNCTION_INFO_V1(memtx_check_invariants);
Datum
memtx_check_invariants(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plans[lengthof(InvariantQueries)];
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemtxCall	call;

	InitMaterializedSRF(fcinfo, 0);
	MemtxCallBeginAudit(&call);	/* an audit: any isolation level */
	MemtxRequireHarness(&call, "check invariants");
	for (int q = 0; q < (int) lengthof(InvariantQueries); q++)
	{
		MemtxExec(MemtxPlan(&plans[q], InvariantQueries[q], 0, NULL), NULL, NULL, 0);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			Datum		out[3];
			bool		nulls[3];

			for (int c = 0; c < 3; c++)
				out[c] = MemtxGet(i, c + 1, &nulls[c]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
		}
	}
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
