/*
 * events.c — NOTIFY events on channel "memtx" (SPEC §9, §16).
 *
 * Commit outcomes, cascades (revocations, aborts, expiries), quarantines for
 * review and resolutions are announced with a small JSON payload, delivered
 * when the SQL transaction commits, so agent backends can LISTEN instead of
 * polling.  Payload: {"event": ..., "tx": ..., "record": ..., "reason": ...,
 * "count": ...}; absent fields are omitted.
 *
 * Any role that may connect can LISTEN on any channel (PostgreSQL has no
 * privilege for it), so a payload carries ids, counts and protocol codes
 * (event, reason) only: never a value, entity, attribute, namespace or role
 * name.  A listener learns what happened to what from the tables, through
 * row-level security (a transaction's row is its agent's, a record's its
 * readers'); an event about ids it cannot read tells it only that something
 * happened.
 *
 * memtx.notify = off silences them: PostgreSQL takes a database-wide lock
 * when a transaction that notified commits and holds it through the commit
 * record's flush, so notifying writers commit one at a time.
 */
#include "events.h"
#include "guc.h"

#include "commands/async.h"
#include "lib/stringinfo.h"
#include "utils/json.h"

void
MemtxNotify(const char *event, int64 tx, int64 record, const char *reason, int64 count)
{
	StringInfoData buf;

	if (!memtx_notify)
		return;
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"event\": ");
	escape_json(&buf, event);
	if (tx > 0)
		appendStringInfo(&buf, ", \"tx\": %lld", (long long) tx);
	if (record > 0)
		appendStringInfo(&buf, ", \"record\": %lld", (long long) record);
	if (reason)
	{
		appendStringInfoString(&buf, ", \"reason\": ");
		escape_json(&buf, reason);
	}
	if (count > 0)
		appendStringInfo(&buf, ", \"count\": %lld", (long long) count);
	appendStringInfoChar(&buf, '}');
	Async_Notify("memtx", buf.data);
	pfree(buf.data);
}
