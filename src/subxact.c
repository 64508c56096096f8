/*
 * subxact.c — the internal-subtransaction dance, written once.
 *
 * BeginInternalSubTransaction switches to the subtransaction's memory
 * context and resource owner; leaving it (release or rollback) switches to
 * the parent's, which are not necessarily those the caller was using.  So
 * the caller's memory context and resource owner are saved before and made
 * current again after every way out, and an error is copied out of the
 * failed subtransaction's memory, cleared, and the subtransaction rolled
 * back before anything else runs (PL/Python's subtransaction helpers do the
 * same): a handler further up then sees its own transaction state, not a
 * half-aborted subtransaction.  memtx.propose (its retry check may not leave
 * the stage it made) and the expiry of one namespace (whose lock may not be
 * had) are the users.
 */
#include "postgres.h"

#include "subxact.h"

#include "access/xact.h"
#include "utils/resowner.h"

bool
SubxactRun(SubxactBody body, void *arg, int catch_code)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;
	volatile bool keep = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		keep = body(arg);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
	}
	PG_END_TRY();
	if (keep && edata == NULL)
		ReleaseCurrentSubTransaction();
	else
		RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	if (edata == NULL)
		return true;
	if (catch_code == 0 || edata->sqlerrcode != catch_code)
		ReThrowError(edata);
	FreeErrorData(edata);
	return false;
}
