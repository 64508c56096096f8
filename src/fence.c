/*
 * fence.c — writer fencing (SPEC §12).
 *
 * Handing a namespace to a new writer is a fence of the old one and a grant
 * to the new: there must be no moment at which both can commit.  Each role
 * has a writer epoch, 0 until fenced; memtx.fence(role) opens the next epoch
 * (a row of memtx.writer_epochs with the clock position of the fence),
 * aborts every open transaction whose agent is exactly that role (not its
 * members) through the abort path with reason fenced, in every namespace,
 * and leaves the role fenced until memtx.unfence(role), which keeps the
 * epoch.  While fenced, every write by the role fails with 42501: its own
 * begin or a harness's on its behalf, revoke by it (and memtx.propose, a
 * begin, stage and commit in one call, must check its caller the same way,
 * with FenceAdmitWriter, before it begins) — and every write of a session
 * whose session user is the role, whatever role it has set (SPEC §17:
 * FenceAdmitSession, in FenceAdmitWriter and in every load of a transaction
 * for a call that writes).  A transaction records
 * its agent's epoch at begin; every call on a transaction opened under an
 * older epoch fails with 42501 forever (txn.c, TxnAdmit), after unfence and
 * for a harness too, commit's stored outcome and act in a committed
 * transaction included.  Reads without a transaction still answer.
 *
 * Races.  A fence takes the role's writer lock exclusive (level 0 of the lock
 * order in locks.c) before it advances the epoch; every writing call of the
 * role takes it shared before it checks the epoch, each query of the call
 * taking a fresh snapshot.  So a call racing a fence either holds the lock
 * first, and the fence waits for its SQL transaction to end (the call
 * completes before the fence, and a transaction it committed or began is
 * then the fence's to abort or its epoch's past), or it waits for the fence
 * and then sees the new epoch and fails.  A record committed in a
 * transaction of an older epoch therefore has a clock position below its
 * fence's: memtx.check_invariants checks exactly that (invariant I5).
 *
 * The admission every writing call goes through (FenceAdmitWriter,
 * FenceAdmitSession, FenceLockTxnWriter, FenceAdmitRecord) is fenceadmit.c,
 * below the transactions and the cascade that use it; this file is the two
 * commands, above them.
 */
#include "fault.h"
#include "cascade.h"
#include "locks.h"
#include "permissions.h"
#include "receipt.h"
#include "txn.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"

/* The role argument of fence and unfence, checked; the caller must be a harness. */
static char *
FenceRoleArg(FunctionCallInfo fcinfo, MemtxCall *call, const char *what)
{
	char	   *role;

	MemtxRequireArg(fcinfo, 0, "role");
	MemtxCheckText(PG_GETARG_TEXT_PP(0), "role", NAMEDATALEN - 1);
	role = text_to_cstring(PG_GETARG_TEXT_PP(0));

	/* the harness check first: a non-harness learns nothing about roles */
	MemtxCallBegin(call);
	MemtxRequireHarness(call, what);
	MemtxCheckRoleName(role, NULL);
	LockWriter(role, true);
	return role;
}

/*
 * memtx.fence(role) → bigint
 *
 * Opens the role's next writer epoch and aborts its open transactions, in
 * (namespace, id) order, as memtx.abort would, with reason fenced.
 */
PG_FUNCTION_INFO_V1(memtx_fence);
Datum
memtx_fence(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr advance;
	static SPIPlanPtr open;
	static const Oid types[] = {TEXTOID};
	MemtxCall	call;
	Datum		values[1];
	char	   *role;
	int64		epoch;
	int64	   *ids;
	uint64		n;

	role = FenceRoleArg(fcinfo, &call, "fence a role");
	values[0] = CStringGetTextDatum(role);
	MemtxExec(MemtxPlan(&advance,
						"INSERT INTO memtx.writer_epochs (role_name, epoch, pos, fenced_at) "
						"VALUES ($1, memtx.writer_epoch($1) + 1, pg_catalog.nextval('memtx.clock'), memtx.now()) "
						"RETURNING epoch",
						1, types),
			  values, NULL, 0);
	epoch = MemtxGetInt64(0, 1);
	FaultPoint("fence:advanced");

	MemtxExec(MemtxPlan(&open,
						"SELECT id FROM memtx.transactions WHERE agent = $1 AND status = 'open' "
						"ORDER BY namespace, id FOR UPDATE",
						1, types),
			  values, NULL, 0);
	ids = MemtxGetInt64Column(1, &n);
	for (uint64 i = 0; i < n; i++)
		CascadeAbort(TxnLoadExpired(ids[i]), MR_FENCED, NULL);
	FaultPoint("fence:aborted");
	ReceiptFence(role, epoch);

	MemtxCallEnd(&call);
	PG_RETURN_INT64(epoch);
}

/*
 * memtx.unfence(role) → void
 *
 * The role may write again; its epoch stays, so its transactions opened
 * before the fence stay refused.  Unfencing a role that is not fenced does
 * nothing.
 */
PG_FUNCTION_INFO_V1(memtx_unfence);
Datum
memtx_unfence(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID};
	MemtxCall	call;
	Datum		values[1];

	values[0] = CStringGetTextDatum(FenceRoleArg(fcinfo, &call, "unfence a role"));
	MemtxExec(MemtxPlan(&plan,
						"UPDATE memtx.writer_epochs SET unfenced_at = memtx.now() "
						"WHERE role_name = $1 AND unfenced_at IS NULL",
						1, types),
			  values, NULL, 0);
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}
