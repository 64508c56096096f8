/*
 * fault.c — fault injection at named step boundaries (test build only).
 *
 * memtx promises that each call is all or nothing: a belief fully admitted
 * or not at all, a cascade complete or absent, a receipt with its
 * disposition.  Every call runs inside its caller's SQL transaction, so the
 * promise rests on PostgreSQL's atomicity — provided no step writes outside
 * the transaction or depends on state that outlives it.  The fault points
 * test exactly that: the test build (make MEMTX_ASSERT=1, which test/run
 * uses; -DMEMTX_TESTING) places FaultPoint("call:step") between the steps
 * of every call that writes, and a superuser sets
 *
 *   memtx.fault_at = 'commit:admitted'       -- the point to fail at
 *   memtx.fault_action = 'panic' | 'error'  -- crash the server, or raise
 *
 * A PANIC stops the whole server in the middle of the call (restart and WAL
 * recovery follow); an ERROR (SQLSTATE MXFLT) aborts the SQL transaction.
 * Either way nothing of the call may remain (test/t/010_faults.pl).  The
 * setting accepts only the names listed below, so a test that names a point
 * the code no longer has fails instead of passing vacuously.  A release
 * build has neither the settings nor the points (fault.h makes FaultPoint
 * nothing).
 */
#include "memtx.h"
#include "fault.h"

#ifdef MEMTX_TESTING

#include "utils/guc.h"

/* Every fault point, by call and step, in the order of each call. */
static const char *const FaultPoints[] = {
	"begin:inserted",
	"stage:inserted", "stage:edges",
	"commit:loaded", "commit:admitted", "commit:receipts", "commit:ended",
	"resolve:accepted", "resolve:rejected",
	"act:decided", "act:logged",
	"cascade:revoked", "cascade:repaired", "cascade:logged",
	"abort:cascaded",
	"expire:namespace",
	"fence:advanced", "fence:aborted",
	"erase:revoked", "erase:erased",
	"chain:filled",
	"readset:flush",
};

enum
{
	FAULT_ERROR,
	FAULT_PANIC
};

static const struct config_enum_entry FaultActions[] = {
	{"error", FAULT_ERROR, false},
	{"panic", FAULT_PANIC, false},
	{NULL, 0, false}
};

static char *fault_at = NULL;
static int	fault_action = FAULT_ERROR;

static bool
FaultKnown(const char *name)
{
	for (int i = 0; i < (int) lengthof(FaultPoints); i++)
		if (strcmp(FaultPoints[i], name) == 0)
			return true;
	return false;
}

static bool
FaultCheckAt(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || **newval == '\0' || FaultKnown(*newval))
		return true;
	GUC_check_errdetail("\"%s\" is not a fault point of this build.", *newval);
	return false;
}

void
FaultInit(void)
{
	DefineCustomStringVariable("memtx.fault_at",
							   "Test build: the fault point at which memtx calls fail.",
							   "Empty: none.  Only the names compiled into the test build are accepted.",
							   &fault_at,
							   "",
							   PGC_SUSET, 0,
							   FaultCheckAt, NULL, NULL);
	DefineCustomEnumVariable("memtx.fault_action",
							 "Test build: what happens at memtx.fault_at.",
							 "error raises SQLSTATE MXFLT; panic crashes the server.",
							 &fault_action,
							 FAULT_ERROR, FaultActions,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
}

/* Fail here when memtx.fault_at names this point. */
void
FaultPoint(const char *name)
{
	Assert(FaultKnown(name));
	if (fault_at == NULL || strcmp(fault_at, name) != 0)
		return;
	ereport(fault_action == FAULT_PANIC ? PANIC : ERROR,
			(errcode(MAKE_SQLSTATE('M', 'X', 'F', 'L', 'T')),
			 errmsg("memtx fault injected at %s", name)));
}

#endif							/* MEMTX_TESTING */
