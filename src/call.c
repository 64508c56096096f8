/*
 * call.c — how a memtx SQL function runs.
 *
 * Every API function is declared with SET search_path = pg_catalog, pg_temp,
 * so no name in its queries resolves into a schema the caller controls.  On
 * entry it records the calling role (the principal) and switches to the
 * owner of schema memtx for table access, the way RI triggers switch to a
 * table's owner; permission decisions are made in C against the recorded
 * caller.  An error unwinds both the SPI connection and the user switch
 * through transaction abort.
 *
 * SQL isolation levels (SPEC §16).  memtx judges every call against what
 * is committed at the moment of the call: the gate must see every tentative
 * record in flight, a commit must adjudicate against the rival that
 * committed while it waited for the slot lock, a cascade must reach every
 * descendant.  Each query here therefore takes a fresh snapshot, which is
 * READ COMMITTED.  Under REPEATABLE READ or SERIALIZABLE the queries would
 * see the SQL transaction's snapshot instead: an act could pass the gate
 * while a stage committed after that snapshot is in flight, and a commit
 * racing a rival would fail on the single-truth constraint.  So every memtx
 * function that names a memtx transaction or writes refuses to run at those
 * levels (0A000, MemtxCallBegin), before it reads or writes anything.  The
 * audit memtx.check_invariants (MemtxCallBeginAudit) reads only and keeps
 * working there: one snapshot for the whole audit is what it wants.  The
 * worker runs its expiry at READ COMMITTED whatever the server default.
 */
#include "call.h"
#include "catalog.h"
#include "readsetbuf.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
#include "common/shortest_dec.h"

#include <math.h>

/* Owner of schema memtx: the role all table access runs as. */
static Oid
MemtxOwner(void)
{
	Oid			nsp = get_namespace_oid("memtx", false);
	HeapTuple	tup = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nsp));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for schema memtx");
	owner = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Start an API call that reads at any SQL isolation level: no memtx
 * transaction, no write.
 */
void
MemtxCallBeginAudit(MemtxCall *call)
{
	CatalogCheckVersion();
	/* after a start that may have lost reads, the first call fixes the point (readsetbuf.c) */
	(void) ReadSetLostBefore();
	call->caller = GetUserId();
	call->caller_name = GetUserNameFromId(call->caller, false);
	GetUserIdAndSecContext(&call->save_userid, &call->save_sec_context);
	SetUserIdAndSecContext(MemtxOwner(),
						   call->save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

/* Start an API call that names a memtx transaction or writes: READ COMMITTED only. */
void
MemtxCallBegin(MemtxCall *call)
{
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("memtx cannot run in a %s transaction",
						IsolationIsSerializable() ? "SERIALIZABLE" : "REPEATABLE READ"),
				 errdetail("memtx judges each call against what is committed when the call runs; a transaction snapshot would hide records in flight from the action gate."),
				 errhint("Call memtx functions in a READ COMMITTED transaction, PostgreSQL's default.")));
	MemtxCallBeginAudit(call);
}

void
MemtxCallEnd(MemtxCall *call)
{
	SPI_finish();
	SetUserIdAndSecContext(call->save_userid, call->save_sec_context);
}

SPIPlanPtr
MemtxPlan(SPIPlanPtr *slot, const char *sql, int nargs, const Oid *argtypes)
{
	if (*slot == NULL)
	{
		/*
		 * Generic plans: every memtx query is an index probe whose shape does
		 * not depend on its parameters, so planning it once beats re-planning
		 * a custom plan on every call.
		 */
		SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, (Oid *) argtypes,
											  CURSOR_OPT_GENERIC_PLAN);

		if (plan == NULL)
			elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "SPI_keepplan failed");
		*slot = plan;
	}
	return *slot;
}

int
MemtxExec(SPIPlanPtr plan, const Datum *values, const char *nulls, long limit)
{
	int			rc;

	/*
	 * Always read-write: each query then takes a fresh snapshot (READ
	 * COMMITTED) after a command-counter increment, so it sees this call's
	 * own writes and everything committed before it.
	 */
	rc = SPI_execute_plan(plan, (Datum *) values, nulls, false, limit);

	if (rc < 0)
		elog(ERROR, "SPI_execute_plan failed: %s", SPI_result_code_string(rc));
	return rc;
}

Datum
MemtxGet(int row, int col, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);
}

int64
MemtxGetInt64(int row, int col)
{
	bool		isnull;
	Datum		d = MemtxGet(row, col, &isnull);

	return isnull ? 0 : DatumGetInt64(d);
}

int64 *
MemtxGetInt64Column(int col, uint64 *n)
{
	int64	   *values;

	*n = SPI_processed;
	values = palloc(sizeof(int64) * (*n + 1));
	for (uint64 i = 0; i < *n; i++)
		values[i] = MemtxGetInt64(i, col);
	return values;
}

char *
MemtxGetText(int row, int col)
{
	/* a text column needs no output function: detoast and copy it */
	if (SPI_gettypeid(SPI_tuptable->tupdesc, col) == TEXTOID)
	{
		bool		isnull;
		Datum		d = MemtxGet(row, col, &isnull);

		return isnull ? NULL : TextDatumGetCString(d);
	}
	return SPI_getvalue(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col);
}

double
MemtxGetFloat8(int row, int col)
{
	bool		isnull;
	Datum		d = MemtxGet(row, col, &isnull);

	return isnull ? 0.0 : DatumGetFloat8(d);
}

bool
MemtxGetBool(int row, int col)
{
	bool		isnull;
	Datum		d = MemtxGet(row, col, &isnull);

	return !isnull && DatumGetBool(d);
}

void
MemtxRequireArg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
}

void
MemtxCheckUnit(double v, const char *name)
{
	if (isnan(v) || v < 0.0 || v > 1.0)
	{
		/* the shortest text that reads back as v: 1.0000001, not 1 */
		char		buf[DOUBLE_SHORTEST_DECIMAL_LEN];

		double_to_shortest_decimal_buf(v, buf);
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s must be between 0 and 1, got %s", name, buf)));
	}
}

void
MemtxCheckText(text *t, const char *name, int maxbytes)
{
	int			len = VARSIZE_ANY_EXHDR(t);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", name)));
	if (len > maxbytes)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s is too long (%d bytes, at most %d)", name, len, maxbytes)));
}

/* A memtx.state datum for a function declared to return memtx.state. */
Datum
MemtxStateDatum(FunctionCallInfo fcinfo, MemtxState state)
{
	Oid			type = get_fn_expr_rettype(fcinfo->flinfo);

	return DirectFunctionCall2(enum_in, CStringGetDatum(MemtxStateNames[state]),
							   ObjectIdGetDatum(type));
}
