/*
 * lifecycle.c — the record lifecycle (SPEC §1).
 *
 * The legal moves form a fixed relation, held by a BEFORE UPDATE row trigger
 * on memtx.records.  The trigger fires for every role, superusers writing the
 * table directly included, so neither an API path nor a manual UPDATE can make
 * any other move.  It also keeps a record's identity and content immutable:
 * a record is re-staged, never edited.  INSERTs are not checked, so COPY in
 * pg_restore loads a dumped store as it was.
 */
#include "memtx.h"

#include "access/htup_details.h"
#include "commands/trigger.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/* legal[from] is a bit set of the states a record may move to. */
#define B(s) (1 << (s))
static const int LifecycleMoves[MS_NSTATES] = {
	[MS_RAW] = B(MS_TENTATIVE) | B(MS_REVOKED),
	[MS_TENTATIVE] = B(MS_VALIDATED) | B(MS_QUARANTINED) | B(MS_REVOKED),
	[MS_VALIDATED] = B(MS_COMMITTED) | B(MS_QUARANTINED),
	[MS_COMMITTED] = B(MS_ACTION_SAFE) | B(MS_SUPERSEDED) | B(MS_QUARANTINED) | B(MS_REVOKED),
	[MS_ACTION_SAFE] = B(MS_SUPERSEDED) | B(MS_QUARANTINED) | B(MS_REVOKED),
	[MS_QUARANTINED] = B(MS_TENTATIVE) | B(MS_REVOKED),
	[MS_SUPERSEDED] = B(MS_REVOKED),
	[MS_REVOKED] = 0,
};
#undef B

/* Columns no UPDATE may change. */
static const char *const LifecycleImmutable[] = {
	"id", "tx_id", "namespace", "entity", "attribute", "value", "kind",
	"owner", "staged_xid", "staged_pos"
};

bool
LifecycleLegal(MemtxState from, MemtxState to)
{
	return (LifecycleMoves[from] & (1 << to)) != 0;
}

MemtxState
MemtxStateFromName(const char *name)
{
	for (int i = 0; i < MS_NSTATES; i++)
		if (strcmp(MemtxStateNames[i], name) == 0)
			return (MemtxState) i;
	elog(ERROR, "unknown memtx state \"%s\"", name);
	return MS_RAW;				/* keep compiler quiet */
}

static MemtxState
LifecycleStateOf(HeapTuple tuple, TupleDesc desc, int attnum)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, attnum, desc, &isnull);

	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NOT_NULL_VIOLATION),
				 errmsg("record state must not be null")));
	return MemtxStateFromName(DatumGetCString(DirectFunctionCall1(enum_out, d)));
}

/* A human-readable list of the states "from" may move to. */
static char *
LifecycleMovesText(MemtxState from)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < MS_NSTATES; i++)
		if (LifecycleLegal(from, (MemtxState) i))
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", MemtxStateNames[i]);
	return buf.len ? buf.data : pstrdup("none (terminal)");
}

PG_FUNCTION_INFO_V1(memtx_lifecycle_guard);
Datum
memtx_lifecycle_guard(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	HeapTuple	oldtup;
	HeapTuple	newtup;
	int			stateatt;
	MemtxState	from;
	MemtxState	to;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		!TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("memtx.lifecycle_guard must be a BEFORE UPDATE row trigger")));

	desc = RelationGetDescr(trigdata->tg_relation);
	oldtup = trigdata->tg_trigtuple;
	newtup = trigdata->tg_newtuple;

	for (int i = 0; i < (int) lengthof(LifecycleImmutable); i++)
	{
		int			att = SPI_fnumber(desc, LifecycleImmutable[i]);
		Form_pg_attribute a;
		bool		n1,
					n2;
		Datum		d1,
					d2;

		if (att <= 0)
			continue;
		a = TupleDescAttr(desc, att - 1);
		d1 = heap_getattr(oldtup, att, desc, &n1);
		d2 = heap_getattr(newtup, att, desc, &n2);
		if (n1 != n2 || (!n1 && !datumIsEqual(d1, d2, a->attbyval, a->attlen)))
			ereport(ERROR,
					(errcode(ERRCODE_CHECK_VIOLATION),
					 errmsg("column \"%s\" of a memtx record cannot be changed",
							LifecycleImmutable[i]),
					 errdetail("A record's identity and content are fixed once staged; stage a new record instead.")));
	}

	stateatt = SPI_fnumber(desc, "state");
	if (stateatt <= 0)
		elog(ERROR, "memtx.records has no column \"state\"");
	from = LifecycleStateOf(oldtup, desc, stateatt);
	to = LifecycleStateOf(newtup, desc, stateatt);

	if (from != to && !LifecycleLegal(from, to))
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("illegal lifecycle transition from \"%s\" to \"%s\"",
						MemtxStateNames[from], MemtxStateNames[to]),
				 errdetail("A %s record may move to: %s.",
						   MemtxStateNames[from], LifecycleMovesText(from))));

	return PointerGetDatum(newtup);
}

PG_FUNCTION_INFO_V1(memtx_legal_transition);
Datum
memtx_legal_transition(PG_FUNCTION_ARGS)
{
	MemtxState	from = MemtxStateFromName(DatumGetCString(DirectFunctionCall1(enum_out, PG_GETARG_DATUM(0))));
	MemtxState	to = MemtxStateFromName(DatumGetCString(DirectFunctionCall1(enum_out, PG_GETARG_DATUM(1))));

	PG_RETURN_BOOL(LifecycleLegal(from, to));
}
