/*
 * lifecycle.c — the record lifecycle (SPEC §1).
 *
 * The legal moves form a fixed relation, held by a BEFORE UPDATE row trigger
 * on memtx.records.  The trigger fires for every role, superusers writing the
 * table directly included, so neither an API path nor a manual UPDATE can make
 * any other move.  It also keeps a record's identity and content immutable:
 * a record is re-staged, never edited.  INSERTs are not checked, so COPY in
 * pg_restore loads a dumped store as it was; only the extension's owner and
 * superusers may insert into memtx.records.  The API inserts settled rows
 * in two places only, and updates neither: memtx.act's tool actions
 * (committed) and memtx.propose's record, admitted before it is written
 * (SPEC §21).  So no flag lets a row past this trigger: every move of a
 * written record is still checked here.
 *
 * Immutability is a list of what may change, not of what may not (SPEC §16
 * "Immutable content"): the state and its reason, the settlement positions
 * (settled_xid/settled_pos, committed_xid/committed_seq), the stored commit
 * outcome (verdict, verdict_reason) once, while it is unset, and erasure:
 * erased_at from unset to set, and in that same UPDATE the value to JSON
 * null.  Every other column — the permission block, validity, confidence,
 * authority, and any column a later release adds — is fixed at staging, for
 * every role.  The function refuses to run as a trigger of any other table
 * (it is not executable by PUBLIC either), so it cannot be turned against
 * a table of the caller's.
 *
 * validated is transient (SPEC §1): the pipeline takes a record that passed
 * its four checks from tentative to committed (or action_safe) in one
 * UPDATE, a path through validated without a row version of its own.  The
 * trigger lets that move through only for the records the pipeline has
 * declared, in this backend, for the UPDATE it is running
 * (LifecyclePassValidated; each record's pass is used up by its move, and
 * all are cleared when the UPDATE ends): every other tentative → committed
 * is refused, for every role, as before.
 */
#include "lifecycle.h"
#include "catalog.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
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

/* Columns an UPDATE may change freely; the rules for the rest are below. */
static const char *const LifecycleMutable[] = {
	"state", "reason", "settled_xid", "settled_pos", "committed_xid", "committed_seq"
};

/* The stored commit outcome: written once, by the call that settles the record. */
static const char *const LifecycleOutcome[] = {"verdict", "verdict_reason"};

static bool
LifecycleListed(const char *const *list, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

/* Whether column att is null in tuple. */
static bool
LifecycleIsNull(HeapTuple tuple, TupleDesc desc, int att)
{
	bool		isnull;

	if (att <= 0)
		return true;
	(void) heap_getattr(tuple, att, desc, &isnull);
	return isnull;
}

/* Whether jsonb column att of tuple holds JSON null. */
static bool
LifecycleJsonNull(HeapTuple tuple, TupleDesc desc, int att)
{
	bool		isnull;
	Datum		d = heap_getattr(tuple, att, desc, &isnull);

	return !isnull &&
		strcmp(DatumGetCString(DirectFunctionCall1(jsonb_out, d)), "null") == 0;
}

/*
 * Refuse an UPDATE that changes a column it may not (see the file header).
 * erased_at need not exist: without it no UPDATE erases.
 */
static void
LifecycleCheckContent(TupleDesc desc, HeapTuple oldtup, HeapTuple newtup)
{
	int			erased_att = SPI_fnumber(desc, "erased_at");
	int			verdict_att = SPI_fnumber(desc, "verdict");
	bool		erasing = erased_att > 0 &&
		LifecycleIsNull(oldtup, desc, erased_att) &&
		!LifecycleIsNull(newtup, desc, erased_att);
	bool		outcome_open = LifecycleIsNull(oldtup, desc, verdict_att);

	for (int att = 1; att <= desc->natts; att++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, att - 1);
		const char *name = NameStr(a->attname);
		bool		n1,
					n2;
		Datum		d1,
					d2;

		if (a->attisdropped ||
			LifecycleListed(LifecycleMutable, lengthof(LifecycleMutable), name))
			continue;
		d1 = heap_getattr(oldtup, att, desc, &n1);
		d2 = heap_getattr(newtup, att, desc, &n2);
		if (n1 == n2 && (n1 || datumIsEqual(d1, d2, a->attbyval, a->attlen)))
			continue;
		if (outcome_open &&
			LifecycleListed(LifecycleOutcome, lengthof(LifecycleOutcome), name))
			continue;
		if (erasing && att == erased_att)
			continue;
		if (erasing && strcmp(name, "value") == 0 &&
			LifecycleJsonNull(newtup, desc, att))
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_CHECK_VIOLATION),
				 errmsg("column \"%s\" of a memtx record cannot be changed", name),
				 errdetail("A record's identity and content are fixed once staged; stage a new record instead.")));
	}
}

bool
LifecycleLegal(MemtxState from, MemtxState to)
{
	return (LifecycleMoves[from] & (1 << to)) != 0;
}

/*
 * The records the pipeline is promoting through validated, sorted, and
 * whether each has moved yet (none: no promotion running).
 */
static int64 *LifecyclePassIds = NULL;
static bool *LifecyclePassUsed = NULL;
static int	LifecyclePassN = 0;

static int
LifecycleCompareIds(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/*
 * Declare the pipeline's promotion of records ids[0..n) (n = 0: end it).
 * The pass is copied into the current memory context, which outlives the
 * UPDATE; ending it only forgets it (it may end while an error unwinds).
 */
void
LifecyclePassValidated(const int64 *ids, int n)
{
	LifecyclePassIds = NULL;
	LifecyclePassUsed = NULL;
	LifecyclePassN = 0;
	if (n == 0)
		return;
	LifecyclePassIds = palloc(sizeof(int64) * n);
	LifecyclePassUsed = palloc0(sizeof(bool) * n);
	memcpy(LifecyclePassIds, ids, sizeof(int64) * n);
	qsort(LifecyclePassIds, n, sizeof(int64), LifecycleCompareIds);
	LifecyclePassN = n;
}

/*
 * Whether the move of the record in tuple from tentative to "to" is a
 * declared promotion through validated; uses that record's pass up.
 */
static bool
LifecyclePromoting(HeapTuple tuple, TupleDesc desc, MemtxState to)
{
	int			idatt = SPI_fnumber(desc, "id");
	bool		isnull;
	Datum		id;
	int64		key;
	int64	   *hit;

	if (LifecyclePassN == 0 || idatt <= 0 ||
		!LifecycleLegal(MS_VALIDATED, MS_COMMITTED) ||
		!(to == MS_COMMITTED || (to == MS_ACTION_SAFE && LifecycleLegal(MS_COMMITTED, MS_ACTION_SAFE))))
		return false;
	id = heap_getattr(tuple, idatt, desc, &isnull);
	if (isnull)
		return false;
	key = DatumGetInt64(id);
	hit = bsearch(&key, LifecyclePassIds, LifecyclePassN, sizeof(int64), LifecycleCompareIds);
	if (hit == NULL || LifecyclePassUsed[hit - LifecyclePassIds])
		return false;
	LifecyclePassUsed[hit - LifecyclePassIds] = true;
	return true;
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
	return (MemtxState) CatalogEnumIndex(ME_STATE, d);
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

	if (RelationGetNamespace(trigdata->tg_relation) != get_namespace_oid("memtx", true) ||
		strcmp(RelationGetRelationName(trigdata->tg_relation), "records") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("memtx.lifecycle_guard can only guard memtx.records"),
				 errdetail("It was fired by an UPDATE of \"%s\".",
						   RelationGetRelationName(trigdata->tg_relation))));

	desc = RelationGetDescr(trigdata->tg_relation);
	oldtup = trigdata->tg_trigtuple;
	newtup = trigdata->tg_newtuple;
	LifecycleCheckContent(desc, oldtup, newtup);

	stateatt = SPI_fnumber(desc, "state");
	if (stateatt <= 0)
		elog(ERROR, "memtx.records has no column \"state\"");
	from = LifecycleStateOf(oldtup, desc, stateatt);
	to = LifecycleStateOf(newtup, desc, stateatt);

	if (from != to && !LifecycleLegal(from, to) &&
		!(from == MS_TENTATIVE && LifecyclePromoting(newtup, desc, to)))
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
	MemtxState	from = (MemtxState) CatalogEnumIndex(ME_STATE, PG_GETARG_DATUM(0));
	MemtxState	to = (MemtxState) CatalogEnumIndex(ME_STATE, PG_GETARG_DATUM(1));

	PG_RETURN_BOOL(LifecycleLegal(from, to));
}
