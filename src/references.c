/*
 * references.c — the C half of the reference triggers (SPEC §16).
 *
 * The references between memtx tables are kept by the triggers
 * memtx.reference_check and memtx.reference_guard (SQL), not by foreign
 * keys, so that pg_restore -j can load the tables in any order: a row that
 * COPY FROM loads is let through unchecked, as a foreign key's check is
 * skipped while its table is being restored.  memtx.copying_into tells the
 * triggers (and the history trigger, which writes no history for restored
 * rows) whether this backend is running COPY FROM into a table.
 *
 * It reads this backend's own progress report, which COPY keeps (the row of
 * pg_stat_progress_copy), directly: no query, no view to plan.  As a SQL
 * function over that view it cost a third of a millisecond on the first
 * insert into memtx.records of every SQL transaction, which is where the
 * history trigger asks (PostgreSQL plans a SQL function's body once per
 * transaction there).
 */
#include "memtx.h"

#include "commands/progress.h"
#include "utils/backend_progress.h"
#include "utils/backend_status.h"

/* memtx.copying_into(rel oid) → boolean */
PG_FUNCTION_INFO_V1(memtx_copying_into);
Datum
memtx_copying_into(PG_FUNCTION_ARGS)
{
	volatile PgBackendStatus *me = MyBEEntry;
	Oid			rel;

	if (PG_ARGISNULL(0))
		PG_RETURN_BOOL(false);
	rel = PG_GETARG_OID(0);
	/* this backend writes its own entry; reading it needs no protocol */
	PG_RETURN_BOOL(me != NULL &&
				   me->st_progress_command == PROGRESS_COMMAND_COPY &&
				   me->st_progress_command_target == rel &&
				   me->st_progress_param[PROGRESS_COPY_COMMAND] == PROGRESS_COPY_COMMAND_FROM);
}
