/*
 * cascade.h — retraction and typed repair of descendants (SPEC §6).
 */
#ifndef MEMTX_CASCADE_H
#define MEMTX_CASCADE_H

#include "memtx.h"
#include "txn.h"

#include "utils/tuplestore.h"

/*
 * Retract roots (all in namespace ns) with root_reason and repair their
 * descendants; log rows go to out when it is not NULL.  Returns the number
 * of log rows written.
 */
/* Which retract receipts a cascade appends (receipt.c). */
typedef enum CascadeReceipt
{
	CASCADE_RECEIPT_PER_ROOT,	/* one per root it revokes (revoke, resolve rejecting, erase) */
	CASCADE_RECEIPT_TX			/* one for the transaction it aborts */
} CascadeReceipt;

extern int	CascadeRun(const char *ns, int64 *roots, int nroots,
					   MemtxReason root_reason, const char *note,
					   Tuplestorestate *out, CascadeReceipt receipt, int64 tx);

/*
 * Abort transaction t, its row locked, with reason aborted, expired or
 * fenced: its tentative staging is revoked and repaired; log rows go to out
 * when it is not NULL.
 */
extern void CascadeAbort(MemtxTxn *t, MemtxReason reason, Tuplestorestate *out);

/*
 * Repair the tool actions below root, a record a commit has just quarantined,
 * and what descends from them (namespace lock held exclusive).
 */
extern void CascadeRepairActions(const char *ns, int64 root, MemtxReason reason);

/* Whether an allowed action of transaction tx derives from its tentative staging. */
extern bool CascadeStagingHasActions(int64 tx);
extern bool CascadeStagingPrivate(int64 tx);

#endif							/* MEMTX_CASCADE_H */
