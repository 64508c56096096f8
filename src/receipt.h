/*
 * receipt.h — receipts of terminal dispositions (SPEC §11).
 */
#ifndef MEMTX_RECEIPT_H
#define MEMTX_RECEIPT_H

#include "memtx.h"

extern void ReceiptCommits(const char *ns, int64 *ids, int32 *checks, char **superseded, int n, bool from_verdict);
extern void ReceiptAct(int64 log_id);
extern void ReceiptRetract(const char *ns, int64 subject, bool of_tx, MemtxReason reason,
						   Datum *repaired, int nrepaired);
extern void ReceiptFence(const char *role, int64 epoch);
extern void ReceiptForgetSalt(int64 record);

extern const char *const ReceiptVerifyQuery;

#endif							/* MEMTX_RECEIPT_H */
