/*
 * erase.c — legal erasure (SPEC §13).
 *
 * memtx.erase(record, note) removes a record's value from the store while
 * keeping everything that holds no value: its id, lineage, history and
 * rollback log.  It is a harness operation in two steps, both inside the
 * caller's SQL transaction, so a reader sees the record either as it was or
 * erased, never half-way:
 *
 *   1. A record not yet revoked is revoked as by memtx.revoke, with reason
 *      erased on the root and the cascade of §6 below it (CascadeRun).
 *   2. Its value becomes JSON null, erased_at is set to memtx.now(), and, for
 *      a tool action, the copies of its arguments in the action log and in
 *      compensation obligations become JSON null too.  The recall index is
 *      an expression index over the value, so it follows the record.  The
 *      salt of the value's digest in its receipts is deleted, and the erasure
 *      appends its retract receipt (reason erased; receipt.c).
 *
 * The lifecycle trigger lets exactly this change through (value to null
 * together with erased_at from unset to set); everything else stays fixed.
 * Descendants keep their own values.  Erasing an erased record writes
 * nothing and returns no rows.
 *
 * Locking: CascadeRun takes the record's namespace lock exclusive (also when
 * the record is revoked already and nothing is repaired), then the record's
 * row lock; the erasing UPDATE re-checks erased_at under that row lock, so
 * of two concurrent erasures one writes and the other finds nothing to do.
 */
#include "fault.h"
#include "api.h"
#include "cascade.h"
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
 * The namespace of record id, or NULL when it is erased already; the one
 * not-found error when it does not exist.
 */
static char *
EraseTarget(int64 id)
{
	static SPIPlanPtr load;
	static const Oid types[] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};

	MemtxExec(MemtxPlan(&load,
						"SELECT r.namespace, r.erased_at IS NOT NULL FROM memtx.records r WHERE r.id = $1",
						1, types),
			  values, NULL, 1);
	if (SPI_processed == 0)
		RecNotFound("record", id);
	return MemtxGetBool(0, 2) ? NULL : MemtxGetText(0, 1);
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
	ns = EraseTarget(id);
	if (ns)
	{
		/* a live record's revocation appends the erasure's retract receipt */
		int			repaired = CascadeRun(ns, &id, 1, MR_ERASED, note,
										  ((ReturnSetInfo *) fcinfo->resultinfo)->setResult,
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
	MemtxCallEnd(&call);
	return (Datum) 0;
}
