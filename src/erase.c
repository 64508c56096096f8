/*
 * erase.c — legal erasure (SPEC §13, §17).
 *
 * memtx.erase(record, note) removes a record's value from the store while
 * keeping everything that holds no value: its id, lineage, history and
 * rollback log.  It erases the record and every copy of it that memtx
 * keeps: the records memtx.restore made from it, and the ones restored from
 * those (the restored_from chain, SPEC §17), each exactly as the record
 * itself, in id order.  It is a harness operation, inside the caller's SQL
 * transaction, so a reader sees the records either as they were or erased,
 * never half-way.  For each record not yet erased:
 *
 *   1. A record not yet revoked is revoked as by memtx.revoke, with reason
 *      erased on the root and the cascade of §6 below it (CascadeRun), which
 *      appends its retract receipt.
 *   2. Its value becomes JSON null, erased_at is set to memtx.now(), and, for
 *      a tool action, the copies of its arguments in the action log and in
 *      compensation obligations become JSON null too.  The recall index is
 *      an expression index over the value, so it follows the record.  The
 *      salt of the value's digest in its receipts is deleted; a record that
 *      was revoked already gets its retract receipt (reason erased) now.
 *
 * So an erased record is revoked, null, without salt, with erased_at set and
 * a retract receipt of reason erased: the combination verify_receipts
 * requires (SPEC §17 "Erased means erased").  The lifecycle trigger lets
 * exactly this change through (value to null together with erased_at from
 * unset to set); everything else stays fixed.  Descendants keep their own
 * values.  Erasing an erased record whose copies are erased too writes
 * nothing and returns no rows; one whose copies are not (copies made before
 * 0.3.0, when erasure did not reach them) erases those.
 *
 * Locking.  The records to erase are listed twice: once without a lock
 * (nothing left to erase: no lock, nothing written), then under the
 * namespace lock exclusive, which every writer of the namespace holds shared
 * (restore included, from before it reads the record it copies: restore.c).
 * So a restore racing the erasure either staged its copy and ended its SQL
 * transaction before the second listing, which finds and erases the copy, or
 * reads the record after the erasure committed and finds nothing to restore
 * (test/specs/erase_restore.spec).  CascadeRun then locks each record's row;
 * the erasing UPDATE re-checks erased_at, so of two concurrent erasures one
 * writes and the other finds nothing to do.
 */
#include "fault.h"
#include "clock.h"
#include "permissions.h"
#include "call.h"
#include "cascade.h"
#include "locks.h"
#include "receipt.h"
#include "record.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

/*
 * Replace record id's value and its copies by JSON null, unless erased
 * already; returns whether it erased.
 */
static bool
EraseValue(int64 id)
{
	static SPIPlanPtr erase_record;
	static SPIPlanPtr erase_copies;
	static const Oid types[] = {INT8OID, TIMESTAMPTZOID};
	Datum		values[2];

	values[0] = Int64GetDatum(id);
	values[1] = TimestampTzGetDatum(MemtxNow());
	MemtxExec(MemtxPlan(&erase_record,
						"UPDATE memtx.records SET value = 'null'::jsonb, erased_at = $2 "
						"WHERE id = $1 AND erased_at IS NULL RETURNING kind = 'tool_action'",
						2, types),
			  values, NULL, 0);
	if (SPI_processed == 0)
		return false;
	if (MemtxGetBool(0, 1))
		MemtxExec(MemtxPlan(&erase_copies,
							"WITH a AS (UPDATE memtx.action_log SET args = 'null'::jsonb "
							"           WHERE action_id = $1 AND args IS DISTINCT FROM 'null'::jsonb) "
							"UPDATE memtx.compensations SET args = 'null'::jsonb "
							"WHERE action_id = $1 AND args IS DISTINCT FROM 'null'::jsonb",
							1, types),
				  values, NULL, 0);
	return true;
}

/*
 * Record id and its restored copies, transitively (through the partial
 * index on restored_from), that are not erased yet, in id order, into *ids
 * (*n of them); the namespace into *ns.  The one not-found error when id
 * does not exist.
 */
static void
EraseTargets(int64 id, char **ns, int64 **ids, uint64 *n)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};

	MemtxExec(MemtxPlan(&plan,
						"WITH RECURSIVE c(id) AS ("
						"  SELECT r.id FROM memtx.records r WHERE r.id = $1 "
						"  UNION "
						"  SELECT x.id FROM c JOIN memtx.records x ON x.restored_from = c.id) "
						"SELECT r.id, r.namespace, r.erased_at IS NULL "
						"FROM c JOIN memtx.records r ON r.id = c.id ORDER BY r.id",
						1, types),
			  values, NULL, 0);
	if (SPI_processed == 0)
		RecNotFound("record", id);
	*ns = MemtxGetText(0, 2);
	*ids = palloc(sizeof(int64) * SPI_processed);
	*n = 0;
	for (uint64 i = 0; i < SPI_processed; i++)
		if (MemtxGetBool(i, 3))
			(*ids)[(*n)++] = MemtxGetInt64(i, 1);
}

/* Erase record id of namespace ns (steps 1 and 2 above), its log rows into out. */
static void
EraseOne(const char *ns, int64 id, const char *note, Tuplestorestate *out)
{
	/* a live record's revocation appends the erasure's retract receipt */
	int			repaired = CascadeRun(ns, &id, 1, MR_ERASED, note, out,
									  CASCADE_RECEIPT_PER_ROOT, 0);

	FaultPoint("erase:revoked");
	if (EraseValue(id))
	{
		/* the value's digest in receipts can no longer be recomputed */
		ReceiptForgetSalt(id);
		if (repaired == 0)
			ReceiptRetract(ns, id, false, MR_ERASED, NULL, 0);
		FaultPoint("erase:erased");
	}
}

/*
 * memtx.erase(record, note) → SETOF memtx.rollback_log
 */
PG_FUNCTION_INFO_V1(memtx_erase);
Datum
memtx_erase(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	int64		id;
	char	   *ns;
	char	   *note = NULL;
	int64	   *ids;
	uint64		n;

	MemtxRequireArg(fcinfo, 0, "record id");
	id = PG_GETARG_INT64(0);
	if (!PG_ARGISNULL(1))
	{
		MemtxCheckText(PG_GETARG_TEXT_PP(1), "note", 4096);
		note = text_to_cstring(PG_GETARG_TEXT_PP(1));
	}
	InitMaterializedSRF(fcinfo, 0);

	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "erase records");
	EraseTargets(id, &ns, &ids, &n);
	if (n > 0)
	{
		/* again under the lock, with a fresh snapshot: copies staged meanwhile are found */
		LockNamespace(ns, true);
		EraseTargets(id, &ns, &ids, &n);
		for (uint64 i = 0; i < n; i++)
			EraseOne(ns, ids[i], note, ((ReturnSetInfo *) fcinfo->resultinfo)->setResult);
	}
	MemtxCallEnd(&call);
	return (Datum) 0;
}
