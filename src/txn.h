/*
 * txn.h — memtx transactions and their snapshots.
 */
#ifndef MEMTX_TXN_H
#define MEMTX_TXN_H

#include "call.h"

#include "access/transam.h"

typedef struct MemtxTxn
{
	int64		id;
	char	   *agent;
	Oid			agent_oid;		/* InvalidOid if the role is gone */
	MemtxTier	tier;
	MemtxIsolation isolation;
	char	   *namespace;
	Datum		snapshot;		/* pg_snapshot at begin */
	FullTransactionId snapshot_xid;
	int64		snapshot_seq;
	MemtxTxStatus status;
	int32		verifier_calls;
	bool		fenced;			/* opened under an older writer epoch of its agent */
	bool		lease_due;		/* a call that writes should renew the lease */
} MemtxTxn;


/* What a call needs of the transaction it names. */
typedef enum TxnNeed
{
	TXN_NEED_OPEN,				/* stage: must be open */
	TXN_NEED_LIVE,				/* act: not aborted */
	TXN_NEED_LIVE_PROBE,		/* read, gate: not aborted, row not locked, lease not renewed */
	TXN_NEED_ANY				/* commit, abort: any status */
} TxnNeed;

/*
 * The transaction columns every load selects first, from memtx.transactions,
 * with parameters $1 (id), $2 and $3 filled by TxnFetchParams.
 */
#define TXN_FIELDS "agent, tier, isolation, namespace, snapshot, " \
	"snapshot_xid, snapshot_seq, status, " \
	"memtx.lease_expired(lease_expires_at, snapshot_xid), verifier_calls, " \
	"lease_expires_at < pg_catalog.clock_timestamp() " \
	"  + pg_catalog.make_interval(secs => $2) - pg_catalog.make_interval(secs => $3), " \
	"epoch < memtx.writer_epoch(agent)"
#define TXN_NFIELDS 12

extern int64 TxnBegin(MemtxCall *call, const char *agent, bool agent_named, int tier,
					  int isolation, const char *ns);
extern MemtxTxn *TxnLoad(MemtxCall *call, int64 id, TxnNeed need);
extern MemtxTxn *TxnLoadSharing(MemtxCall *call, int64 id, TxnNeed need,
								const int64 *others, int nothers);
extern void TxnFetchParams(int64 id, Datum *values);
extern MemtxTxn *TxnLoadFromProbe(MemtxCall *call, int64 id, SPITupleTable *tt, uint64 n);
extern MemtxTxn *TxnLoadExpired(int64 id);
extern bool TxnSawCommit(MemtxTxn *t, Datum xid, bool xid_isnull, int64 seq);
extern void TxnRenewLease(MemtxTxn *t);
extern void TxnEnd(MemtxTxn *t, MemtxTxStatus status, MemtxReason why);
extern MemtxTxn *TxnBeginPending(MemtxCall *call, const char *ns, int64 *epoch);
extern void TxnInsertClosed(MemtxTxn *t, int64 epoch, MemtxTxStatus status);

/* Positions: whether (xid, pos) happened before a snapshot taken at (sxid, spos). */
extern bool MemtxBefore(FullTransactionId xid, int64 pos, Datum snapshot,
						FullTransactionId sxid, int64 spos);

/* Namespace lock: shared for writers of records, exclusive for cascades. */
#endif							/* MEMTX_TXN_H */
