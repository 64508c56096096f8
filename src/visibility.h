/*
 * visibility.h — what a memtx transaction may see (SPEC §3).  What a role
 * may read (SPEC §7, VisReadable) is in record.h.
 */
#ifndef MEMTX_VISIBILITY_H
#define MEMTX_VISIBILITY_H

#include "record.h"
#include "txn.h"

extern bool VisVisible(MemtxTxn *t, MemtxRec *rec);
extern void VisVisibleMany(MemtxTxn *t, MemtxRec *recs, int n, bool *visible);
extern MemtxTxn *VisReadBegin(FunctionCallInfo fcinfo, MemtxCall *call, const char *fn);

#endif							/* MEMTX_VISIBILITY_H */
