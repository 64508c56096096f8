/*
 * readset.h — the durable read set (readset.c): a read's records join its
 * transaction's read set; commit recovers its lost reads.  The shared buffer
 * under it, and what the call machinery and begin need of it, are in
 * readsetbuf.h.
 */
#ifndef MEMTX_READSET_H
#define MEMTX_READSET_H

#include "txn.h"

/* A read of t returned ids: they join its read set (durably, see readset.c). */
extern void ReadSetJoin(MemtxTxn *t, const Datum *ids, int n);

/* Commit: write tx's lost reads to memtx.read_set. */
extern void ReadSetRecover(int64 tx);

#endif							/* MEMTX_READSET_H */
