/*
 * fenceadmit.c — the writer admission of fencing (SPEC §12, §17).
 *
 * Every writing call takes its role's writer lock shared (level 0 of the
 * lock order in locks.c) and is refused (42501) while the role is fenced;
 * so is every write of a session whose session user is fenced, whatever
 * role it has set.  memtx.fence takes the same lock exclusive (fence.c,
 * whose essay says why that leaves no moment at which two writers can
 * commit).  These are the checks alone: they read memtx.writer_epochs and
 * memtx.transactions and call nothing above the call machinery and the
 * locks, so the transactions (txn.c), the cascade (cascade.c) and the
 * commands that write can all use them.
 */
#include "fenceadmit.h"
#include "call.h"
#include "locks.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"

/*
 * Take role's writer lock shared and return its writer epoch; *fenced: it is
 * fenced now.
 */
static int64
FenceEpochOf(const char *role, bool *fenced)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID};
	Datum		values[1];

	LockWriter(role, false);
	values[0] = CStringGetTextDatum(role);
	MemtxExec(MemtxPlan(&plan,
						"SELECT epoch, unfenced_at IS NULL FROM memtx.writer_epochs "
						"WHERE role_name = $1 ORDER BY epoch DESC LIMIT 1",
						1, types),
			  values, NULL, 1);
	*fenced = SPI_processed > 0 && MemtxGetBool(0, 2);
	return SPI_processed > 0 ? MemtxGetInt64(0, 1) : 0;
}

/*
 * Refuse a write by a session whose session user is fenced, whatever role
 * it has set (SPEC §17: SET ROLE cannot escape a fence).  Takes the session
 * user's writer lock shared, after the agent's (level 0 of locks.c).  A
 * session user that is the agent, checked already, is not checked again.
 */
void
FenceAdmitSession(const char *agent)
{
	char	   *session = GetUserNameFromId(GetSessionUserId(), false);
	bool		fenced;

	if (agent && strcmp(agent, session) == 0)
		return;
	(void) FenceEpochOf(session, &fenced);
	if (fenced)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("session user \"%s\" is fenced", session),
				 errdetail("A harness fenced its writer epoch; no write by its sessions is accepted until memtx.unfence, whatever role they set."),
				 errhint("Writes by the role's successor are not affected.")));
}

int64
FenceAdmitWriter(const char *role)
{
	bool		fenced;
	int64		epoch = FenceEpochOf(role, &fenced);

	if (fenced)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("role \"%s\" is fenced", role),
				 errdetail("A harness fenced its writer epoch; no write by it is accepted until memtx.unfence."),
				 errhint("Writes by the role's successor are not affected.")));
	FenceAdmitSession(role);
	return epoch;
}

char *
FenceLockTxnWriter(int64 tx)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];
	char	   *agent;

	values[0] = Int64GetDatum(tx);
	MemtxExec(MemtxPlan(&plan, "SELECT agent FROM memtx.transactions WHERE id = $1", 1, types),
			  values, NULL, 1);
	if (SPI_processed == 0)
		return NULL;
	agent = MemtxGetText(0, 1);
	LockWriter(agent, false);
	return agent;
}

void
FenceAdmitRecord(int64 id)
{
	static SPIPlanPtr load;
	static SPIPlanPtr stale;
	static const Oid types[] = {INT8OID};
	Datum		values[1];

	values[0] = Int64GetDatum(id);
	MemtxExec(MemtxPlan(&load,
						"SELECT t.id, t.agent FROM memtx.records r "
						"JOIN memtx.transactions t ON t.id = r.tx_id WHERE r.id = $1",
						1, types),
			  values, NULL, 1);
	if (SPI_processed == 0)
		return;
	values[0] = Int64GetDatum(MemtxGetInt64(0, 1));
	LockWriter(MemtxGetText(0, 2), false);
	MemtxExec(MemtxPlan(&stale,
						"SELECT 1 FROM memtx.transactions t "
						"WHERE t.id = $1 AND t.epoch < memtx.writer_epoch(t.agent)",
						1, types),
			  values, NULL, 1);
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("record %lld cannot be accepted: its transaction was fenced", (long long) id),
				 errdetail("Its transaction was opened under an older writer epoch of its agent."),
				 errhint("Reject it, or have the role's successor stage it again.")));
}
