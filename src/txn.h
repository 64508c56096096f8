/*
 * txn.h — memtx transactions and their snapshots.
 */
#ifndef MEMTX_TXN_H
#define MEMTX_TXN_H

#include "api.h"

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
	char	   *status;			/* open, committed, partially_committed, aborted */
	int32		verifier_calls;
} MemtxTxn;

#define TXN_OPEN(t) (strcmp((t)->status, "open") == 0)
#define TXN_ABORTED(t) (strcmp((t)->status, "aborted") == 0)

/* What a call needs of the transaction it names. */
typedef enum TxnNeed
{
	TXN_NEED_OPEN,				/* stage: must be open */
	TXN_NEED_LIVE,				/* act: not aborted */
	TXN_NEED_LIVE_PROBE,		/* read, gate: not aborted, row not locked */
	TXN_NEED_ANY				/* commit, abort: any status */
} TxnNeed;

extern MemtxTxn *TxnLoad(MemtxCall *call, int64 id, TxnNeed need);
extern MemtxTxn *TxnLoadExpired(int64 id);
extern bool TxnSawCommit(MemtxTxn *t, Datum xid, bool xid_isnull, int64 seq);
extern void TxnEnd(MemtxTxn *t, const char *status, const char *why);

/* Positions: whether (xid, pos) happened before a snapshot taken at (sxid, spos). */
extern bool MemtxBefore(FullTransactionId xid, int64 pos, Datum snapshot,
						FullTransactionId sxid, int64 spos);

/* Namespace lock: shared for writers of records, exclusive for cascades. */
extern void MemtxLockNamespace(const char *ns, bool exclusive);

#endif							/* MEMTX_TXN_H */
