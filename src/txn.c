/*
 * txn.c — memtx transactions, snapshots and leases (SPEC §3).
 *
 * A memtx transaction is a row of memtx.transactions spanning many SQL
 * calls.  Its snapshot is exact under concurrent commits: begin stores
 * PostgreSQL's own snapshot (pg_current_snapshot()) together with the SQL
 * transaction's xid and a position on the memtx clock.  A record committed by
 * SQL transaction X at clock position p is "in the snapshot" when X is
 * visible in the stored snapshot, or when X is the begin's own SQL
 * transaction and p precedes the begin's position.  Sequence numbers alone
 * would not do: they are drawn before the commits that carry them become
 * visible.
 *
 * Locking.  Every call that writes locks its transaction's row FOR UPDATE
 * first (level 1 of the lock order in locks.c), so two commits of one
 * transaction, or a stage racing a commit of it, serialize; the second sees
 * the first's outcome.  read and gate are probes: they read the row without
 * locking it (a probe racing a commit sees the transaction as it was
 * before), and write nothing of their own, so they run in a READ ONLY
 * transaction and a polling agent writes nothing.
 *
 * Lease.  Each call that writes anyway renews lease_expires_at (wall clock,
 * memtx.lease_timeout of the caller; a call within a tenth of the timeout,
 * at most a second, of the last renewal leaves it): every call but the
 * probes, and read when it adds to the read set (TxnRenewLease).  A gate
 * never renews (SPEC §16 "Probes write nothing").  A call on an open
 * transaction whose lease ran out fails, probes included, and
 * memtx.expire_transactions() (or the worker) aborts it.
 *
 * Fencing (fence.c).  begin records the agent's writer epoch, under the
 * agent's writer lock, and is refused while the agent is fenced; every load
 * but the probes takes the writer lock of the transaction's agent before its
 * row, and every call on a transaction opened under an older epoch is
 * refused (42501) after the principal check and before any status check, so
 * a fenced transaction answers nothing, not even its stored outcome.
 *
 * Tenancy and tier.  A role begins only in a namespace it is a member of
 * ("default" is open to all; permissions.c); a harness anywhere, for any
 * agent.  Without a harness tier the tier is the highest configured for the
 * calling role or the session user, so SET ROLE to a less trusted group role
 * does not lower it.
 */
#include "fault.h"
#include "txn.h"
#include "catalog.h"
#include "guc.h"
#include "permissions.h"
#include "fenceadmit.h"
#include "readsetbuf.h"
#include "record.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/xid8.h"

bool
MemtxBefore(FullTransactionId xid, int64 pos, Datum snapshot,
			FullTransactionId sxid, int64 spos)
{
	if (FullTransactionIdEquals(xid, sxid))
		return pos < spos;
	return DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot,
											FullTransactionIdGetDatum(xid),
											snapshot));
}

bool
TxnSawCommit(MemtxTxn *t, Datum xid, bool xid_isnull, int64 seq)
{
	if (xid_isnull)
		return false;
	return MemtxBefore(DatumGetFullTransactionId(xid), seq, t->snapshot,
					   t->snapshot_xid, t->snapshot_seq);
}

void
TxnFetchParams(int64 id, Datum *values)
{
	values[0] = Int64GetDatum(id);
	values[1] = Int32GetDatum(memtx_lease_timeout);
	/* renewal granularity: a tenth of the timeout, at most a second */
	values[2] = Float8GetDatum(Min(1.0, memtx_lease_timeout / 10.0));
}

/*
 * The transaction in row 0 of tt (a query selecting TXN_FIELDS first, with
 * TxnFetchParams); *expired tells whether its lease ran out, *renew_due
 * whether a call now should renew it (see TxnAdmit).
 */
static MemtxTxn *
TxnFromRow(int64 id, SPITupleTable *tt, uint64 n, bool *expired, bool *renew_due)
{
	MemtxTxn   *t;
	bool		isnull;

	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("memtx transaction %lld does not exist", (long long) id)));
	SPI_tuptable = tt;
	t = palloc0(sizeof(MemtxTxn));
	t->id = id;
	t->agent = MemtxGetText(0, 1);
	t->agent_oid = get_role_oid(t->agent, true);
	t->tier = (MemtxTier) CatalogEnumIndex(ME_TIER, MemtxGet(0, 2, &isnull));
	t->isolation = (MemtxIsolation) CatalogEnumIndex(ME_ISOLATION, MemtxGet(0, 3, &isnull));
	t->namespace = MemtxGetText(0, 4);
	t->snapshot = SPI_datumTransfer(MemtxGet(0, 5, &isnull), false, -1);
	t->snapshot_xid = DatumGetFullTransactionId(MemtxGet(0, 6, &isnull));
	t->snapshot_seq = MemtxGetInt64(0, 7);
	t->status = (MemtxTxStatus) CatalogEnumIndex(ME_TX_STATUS, MemtxGet(0, 8, &isnull));
	*expired = MemtxGetBool(0, 9);
	t->verifier_calls = DatumGetInt32(MemtxGet(0, 10, &isnull));
	*renew_due = MemtxGetBool(0, 11);
	t->fenced = MemtxGetBool(0, 12);
	return t;
}

/* Fetch transaction id, locking its row or not. */
static MemtxTxn *
TxnFetch(int64 id, bool lock, bool *expired, bool *renew_due)
{
	static SPIPlanPtr load;
	static SPIPlanPtr load_nolock;
	static const Oid types[] = {INT8OID, INT4OID, FLOAT8OID};
	Datum		values[3];

	TxnFetchParams(id, values);
	if (lock)
		MemtxExec(MemtxPlan(&load, "SELECT " TXN_FIELDS " FROM memtx.transactions "
							"WHERE id = $1 FOR UPDATE", 3, types),
				  values, NULL, 1);
	else
		MemtxExec(MemtxPlan(&load_nolock, "SELECT " TXN_FIELDS " FROM memtx.transactions "
							"WHERE id = $1", 3, types),
				  values, NULL, 1);
	return TxnFromRow(id, SPI_tuptable, SPI_processed, expired, renew_due);
}

/* Load a transaction for expiry or a fence to abort: no principal, no lease renewal. */
MemtxTxn *
TxnLoadExpired(int64 id)
{
	bool		expired;
	bool		renew_due;

	return TxnFetch(id, true, &expired, &renew_due);
}

/*
 * Renew t's lease to now + memtx.lease_timeout if it is open and due, for a
 * call that writes anyway.  A renewal within a tenth of the timeout (at
 * most a second) of the previous one is skipped: it would only rewrite the
 * row (a batch of stages in one SQL transaction would leave a version per
 * call) for no lease.
 */
void
TxnRenewLease(MemtxTxn *t)
{
	static SPIPlanPtr renew;
	static const Oid types[] = {INT8OID, INT4OID};
	Datum		values[2];

	if (!t->lease_due || t->status != MX_OPEN)
		return;
	values[0] = Int64GetDatum(t->id);
	values[1] = Int32GetDatum(memtx_lease_timeout);
	MemtxExec(MemtxPlan(&renew,
						"UPDATE memtx.transactions SET lease_expires_at = "
						"pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $2) "
						"WHERE id = $1",
						2, types),
			  values, NULL, 0);
	t->lease_due = false;
}

/*
 * Whether t was open across a crash that may have lost its rolled-back
 * reads (readset.c): then it counts as expired (memtx.lease_expired).
 */
static bool
TxnReadsMayBeLost(MemtxTxn *t)
{
	uint64		before = ReadSetLostBefore();

	return before != 0 && U64FromFullTransactionId(t->snapshot_xid) < before;
}

/*
 * Check that the calling principal may act in t and that its status and
 * lease allow "need"; renew the lease unless the call is a probe.
 */
static void
TxnAdmit(MemtxCall *call, MemtxTxn *t, TxnNeed need, bool expired, bool renew_due)
{
	/* Only the transaction's agent (a member of its role) or a harness. */
	if (!(OidIsValid(t->agent_oid) && is_member_of_role(call->caller, t->agent_oid)) &&
		!MemtxIsHarness(call->caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for memtx transaction %lld", (long long) t->id),
				 errdetail("Only its agent or a harness may operate on it.")));

	if (t->fenced)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("memtx transaction %lld was fenced", (long long) t->id),
				 errdetail("It was opened under an older writer epoch of role \"%s\"; no call on it is accepted, even after memtx.unfence.",
						   t->agent),
				 errhint("Begin a new transaction (the role must be unfenced first).")));

	t->lease_due = renew_due;
	if (t->status == MX_OPEN)
	{
		if (expired && TxnReadsMayBeLost(t))
			ereport(ERROR,
					(errcode(ERRCODE_IDLE_IN_TRANSACTION_SESSION_TIMEOUT),
					 errmsg("memtx transaction %lld has expired: it was open across a restart that may have lost its reads", (long long) t->id),
					 errdetail("A crash (or a restart that kept no read set) may have lost reads of it that rolled back, so it may not commit on its read set (see memtx.read_set_lost_before())."),
					 errhint("Begin a new transaction; the expired one will be aborted.")));
		if (expired)
			ereport(ERROR,
					(errcode(ERRCODE_IDLE_IN_TRANSACTION_SESSION_TIMEOUT),
					 errmsg("lease of memtx transaction %lld has expired", (long long) t->id),
					 errdetail("No call was made on it within memtx.lease_timeout."),
					 errhint("Begin a new transaction; the expired one will be aborted.")));
		if (need != TXN_NEED_LIVE_PROBE)
			TxnRenewLease(t);
	}
	else if (need == TXN_NEED_OPEN ||
			 ((need == TXN_NEED_LIVE || need == TXN_NEED_LIVE_PROBE) && t->status == MX_ABORTED))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("memtx transaction %lld is %s", (long long) t->id,
						MemtxTxStatusNames[t->status]),
				 errhint(need == TXN_NEED_OPEN
						 ? "Only an open transaction accepts this call; begin a new one."
						 : "An aborted transaction cannot act; begin a new one.")));
}

/*
 * Load transaction id for the calling principal: take its agent's writer
 * lock and its row lock (unless a probe), check the caller may act in it,
 * that it was not fenced and that its status and lease allow "need", renew
 * the lease (unless a probe).  The result lives in the SPI procedure context.
 */
MemtxTxn *
TxnLoad(MemtxCall *call, int64 id, TxnNeed need)
{
	return TxnLoadSharing(call, id, need, NULL, 0);
}

/* Lock the rows of transactions ids[0..n) FOR SHARE, in id order. */
static void
TxnShareRows(const int64 *ids, int n)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8ARRAYOID};
	Datum		values[1];

	if (n == 0)
		return;
	values[0] = RecIdsDatumOf(ids, n);
	MemtxExec(MemtxPlan(&plan,
						"SELECT 1 FROM memtx.transactions WHERE id = ANY ($1) "
						"ORDER BY id FOR SHARE",
						1, types),
			  values, NULL, 0);
}

/*
 * TxnLoad that also locks the rows of the transactions in others (sorted,
 * distinct, without id) FOR SHARE: act does so for the transactions whose
 * tentative records it takes as inputs, so their commits wait for it and
 * then see its action (cascade.c, CascadeStagingHasActions).  All of these
 * rows are lock level 1 (locks.c), taken in one pass in id order, id's own
 * row FOR UPDATE at its place, so two such calls never deadlock.
 */
MemtxTxn *
TxnLoadSharing(MemtxCall *call, int64 id, TxnNeed need, const int64 *others, int nothers)
{
	bool		expired;
	bool		renew_due;
	MemtxTxn   *t;
	int			nbelow = 0;

	Assert(need != TXN_NEED_LIVE_PROBE || nothers == 0);
	if (need != TXN_NEED_LIVE_PROBE)
		FenceAdmitSession(FenceLockTxnWriter(id));
	while (nbelow < nothers && others[nbelow] < id)
		nbelow++;
	TxnShareRows(others, nbelow);
	t = TxnFetch(id, need != TXN_NEED_LIVE_PROBE, &expired, &renew_due);
	TxnShareRows(others + nbelow, nothers - nbelow);
	TxnAdmit(call, t, need, expired, renew_due);
	return t;
}

/*
 * TxnLoad for a probe whose own query selected TXN_FIELDS first (with
 * TxnFetchParams as $1..$3) and more columns after them, in one statement:
 * tt and n are that query's result, which stays readable afterwards.
 */
MemtxTxn *
TxnLoadFromProbe(MemtxCall *call, int64 id, SPITupleTable *tt, uint64 n)
{
	bool		expired;
	bool		renew_due;
	MemtxTxn   *t = TxnFromRow(id, tt, n, &expired, &renew_due);

	TxnAdmit(call, t, TXN_NEED_LIVE_PROBE, expired, renew_due);
	return t;
}

/* Close transaction t with the given status. */
void
TxnEnd(MemtxTxn *t, MemtxTxStatus status, MemtxReason why)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID, TEXTOID, TEXTOID, INT4OID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	values[0] = Int64GetDatum(t->id);
	values[1] = CStringGetTextDatum(MemtxTxStatusNames[status]);
	if (why != MR_NONE)
		values[2] = CStringGetTextDatum(MemtxReasonName(why));
	else
		nulls[2] = 'n';
	values[3] = Int32GetDatum(t->verifier_calls);
	MemtxExec(MemtxPlan(&plan,
						"UPDATE memtx.transactions SET status = $2::memtx.tx_status, "
						"end_reason = $3, ended_at = pg_catalog.clock_timestamp(), "
						"verifier_calls = $4 WHERE id = $1",
						4, types),
			  values, nulls, 0);
	ReadSetForget(t->id);
	t->status = status;
}

static const MemtxIsolation TierIsolation[] = {
	[MT_LOW] = MI_COMMITTED_READ,
	[MT_MEDIUM] = MI_VERIFIED_READ,
	[MT_HIGH] = MI_CAUSALLY_STABLE_READ,
	[MT_EXTERNAL_ACTION] = MI_ACTION_SAFE_READ,
};

/*
 * The tier of a transaction begun without a harness tier: the highest tier
 * configured for the agent a harness named, else for the calling role or the
 * session user (so SET ROLE to a group role cannot lower it); with none
 * configured, memtx.default_tier.
 */
static int
TxnTierFloor(const char *agent, bool named)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTARRAYOID};
	Datum		names[2];
	int			n = 0;
	Datum		values[1];
	bool		isnull;
	Datum		tier;

	names[n++] = CStringGetTextDatum(agent);
	if (!named)
		names[n++] = CStringGetTextDatum(GetUserNameFromId(GetSessionUserId(), false));
	values[0] = PointerGetDatum(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
	MemtxExec(MemtxPlan(&plan,
						"SELECT pg_catalog.max(tier) FROM memtx.role_tiers "
						"WHERE role_name = ANY ($1)",
						1, types),
			  values, NULL, 1);
	tier = MemtxGet(0, 1, &isnull);
	return isnull ? memtx_default_tier : CatalogEnumIndex(ME_TIER, tier);
}

/*
 * What every begin checks and decides before its row is written: that
 * call's principal may begin in ns and agent is not fenced (taking the
 * agent's writer lock), the tier (-1: the agent's floor; agent_named: the
 * agent was named by a harness, so the session user's floor does not apply)
 * and the isolation (-1: the tier's).  Returns the agent's writer epoch.
 */
static int64
TxnBeginChecks(MemtxCall *call, const char *agent, bool agent_named, int *tier, int *isolation,
			   const char *ns)
{
	int64		epoch;

	if (!MemtxNamespaceMember(call->caller, ns))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to begin in this namespace"),
				 errdetail("Role \"%s\" is not a member of the namespace.", call->caller_name),
				 errhint("A harness grants namespaces with memtx.grant_namespace.")));

	epoch = FenceAdmitWriter(agent);

	if (*tier < 0)
		*tier = TxnTierFloor(agent, agent_named);
	if (*isolation < 0)
		*isolation = TierIsolation[*tier];
	return epoch;
}

/*
 * Open a transaction of agent in namespace ns for call's principal (see
 * TxnBeginChecks for the arguments); returns its id.  memtx.begin.
 */
int64
TxnBegin(MemtxCall *call, const char *agent, bool agent_named, int tier, int isolation,
		 const char *ns)
{
	static SPIPlanPtr insert;
	static const Oid types[] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT4OID, INT8OID};
	Datum		values[6];
	int64		epoch;
	int64		id;

	epoch = TxnBeginChecks(call, agent, agent_named, &tier, &isolation, ns);
	values[0] = CStringGetTextDatum(agent);
	values[1] = CStringGetTextDatum(MemtxTierNames[tier]);
	values[2] = CStringGetTextDatum(MemtxIsolationNames[isolation]);
	values[3] = CStringGetTextDatum(ns);
	values[4] = Int32GetDatum(memtx_lease_timeout);
	values[5] = Int64GetDatum(epoch);
	MemtxExec(MemtxPlan(&insert,
						"INSERT INTO memtx.transactions (agent, tier, isolation, namespace, "
						"snapshot, snapshot_xid, snapshot_seq, lease_expires_at, epoch) "
						"VALUES ($1, $2::memtx.risk_tier, $3::memtx.isolation, $4, "
						"pg_catalog.pg_current_snapshot(), pg_catalog.pg_current_xact_id(), "
						"pg_catalog.nextval('memtx.clock'), "
						"pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $5), $6) "
						"RETURNING id",
						6, types),
			  values, NULL, 0);
	id = MemtxGetInt64(0, 1);
	ReadSetNoteBegin(id);
	FaultPoint("begin:inserted");
	return id;
}

/*
 * memtx.propose's begin (SPEC §21): the checks and the snapshot of
 * TxnBegin, with the caller as agent at its tier, but no row yet — the
 * transaction is open only inside the call, loaded as TxnLoad would load it
 * (nobody else can name it), and its row is written once, already closed,
 * by TxnInsertClosed when the outcome is known.  *epoch is the agent's
 * writer epoch, for that row.
 */
MemtxTxn *
TxnBeginPending(MemtxCall *call, const char *ns, int64 *epoch)
{
	static SPIPlanPtr plan;
	int			tier = -1;
	int			isolation = -1;
	MemtxTxn   *t;
	bool		isnull;

	*epoch = TxnBeginChecks(call, call->caller_name, false, &tier, &isolation, ns);
	MemtxExec(MemtxPlan(&plan,
						"SELECT pg_catalog.nextval('memtx.transaction_id_seq'), "
						"pg_catalog.pg_current_snapshot(), pg_catalog.pg_current_xact_id(), "
						"pg_catalog.nextval('memtx.clock')",
						0, NULL),
			  NULL, NULL, 1);
	t = palloc0(sizeof(MemtxTxn));
	t->id = MemtxGetInt64(0, 1);
	t->agent = pstrdup(call->caller_name);
	t->agent_oid = call->caller;
	t->tier = (MemtxTier) tier;
	t->isolation = (MemtxIsolation) isolation;
	t->namespace = pstrdup(ns);
	t->snapshot = SPI_datumTransfer(MemtxGet(0, 2, &isnull), false, -1);
	t->snapshot_xid = DatumGetFullTransactionId(MemtxGet(0, 3, &isnull));
	t->snapshot_seq = MemtxGetInt64(0, 4);
	t->status = MX_OPEN;
	FaultPoint("begin:inserted");
	return t;
}

/*
 * Write the row of transaction t (TxnBeginPending) already closed with
 * status: the row memtx.begin, its lease and TxnEnd would have left.
 */
void
TxnInsertClosed(MemtxTxn *t, int64 epoch, MemtxTxStatus status)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {
		INT8OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID, PG_SNAPSHOTOID, XID8OID, INT8OID,
		INT4OID, INT8OID, TEXTOID, INT4OID
	};
	Datum		values[12];

	values[0] = Int64GetDatum(t->id);
	values[1] = CStringGetTextDatum(t->agent);
	values[2] = CStringGetTextDatum(MemtxTierNames[t->tier]);
	values[3] = CStringGetTextDatum(MemtxIsolationNames[t->isolation]);
	values[4] = CStringGetTextDatum(t->namespace);
	values[5] = t->snapshot;
	values[6] = FullTransactionIdGetDatum(t->snapshot_xid);
	values[7] = Int64GetDatum(t->snapshot_seq);
	values[8] = Int32GetDatum(memtx_lease_timeout);
	values[9] = Int64GetDatum(epoch);
	values[10] = CStringGetTextDatum(MemtxTxStatusNames[status]);
	values[11] = Int32GetDatum(t->verifier_calls);
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.transactions (id, agent, tier, isolation, namespace, "
						"snapshot, snapshot_xid, snapshot_seq, lease_expires_at, epoch, "
						"status, ended_at, verifier_calls) "
						"VALUES ($1, $2, $3::memtx.risk_tier, $4::memtx.isolation, $5, $6, $7, $8, "
						"pg_catalog.clock_timestamp() + pg_catalog.make_interval(secs => $9), $10, "
						"$11::memtx.tx_status, pg_catalog.clock_timestamp(), $12)",
						12, types),
			  values, NULL, 0);
	t->status = status;
}

/*
 * memtx.begin(tier, agent, namespace, isolation) → bigint
 *
 * A role begins only in a namespace it is a member of (or "default"); a
 * harness anywhere, for any agent; nobody for a fenced agent.
 */
PG_FUNCTION_INFO_V1(memtx_begin);
Datum
memtx_begin(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	char	   *agent;
	char	   *ns;
	int64		id;

	MemtxRequireArg(fcinfo, 2, "namespace");
	MemtxCheckText(PG_GETARG_TEXT_PP(2), "namespace", 256);
	ns = text_to_cstring(PG_GETARG_TEXT_PP(2));

	MemtxCallBegin(&call);
	if ((!PG_ARGISNULL(0) || !PG_ARGISNULL(1) || !PG_ARGISNULL(3)) &&
		!MemtxIsHarness(call.caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to choose tier, agent or isolation"),
				 errdetail("Role \"%s\" is not a harness; its tier comes from memtx.set_role_tier or memtx.default_tier.",
						   call.caller_name)));

	if (!PG_ARGISNULL(1))
	{
		MemtxCheckText(PG_GETARG_TEXT_PP(1), "agent", NAMEDATALEN - 1);
		agent = text_to_cstring(PG_GETARG_TEXT_PP(1));
		if (!OidIsValid(get_role_oid(agent, true)))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("role \"%s\" does not exist", agent),
					 errdetail("An agent is a PostgreSQL role.")));
	}
	else
		agent = call.caller_name;

	id = TxnBegin(&call, agent, !PG_ARGISNULL(1),
				  PG_ARGISNULL(0) ? -1 : CatalogEnumIndex(ME_TIER, PG_GETARG_DATUM(0)),
				  PG_ARGISNULL(3) ? -1 : CatalogEnumIndex(ME_ISOLATION, PG_GETARG_DATUM(3)),
				  ns);
	MemtxCallEnd(&call);
	PG_RETURN_INT64(id);
}
