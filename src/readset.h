/*
 * readset.h — the durable read set (readset.c).
 */
#ifndef MEMTX_READSET_H
#define MEMTX_READSET_H

#include "txn.h"

extern void ReadSetInit(void);

/* Errors unless the shared buffer exists (memtx preloaded): fn cannot run. */
extern void ReadSetRequire(const char *fn);

/* A read of memtx transaction tx returned ids; written: their rows are inserted. */
extern void ReadSetRemember(int64 tx, const Datum *ids, int n, bool written);

/* A read of t returned ids: they join its read set (durably, see readset.c). */
extern void ReadSetJoin(MemtxTxn *t, const Datum *ids, int n);

/* Commit: write tx's lost reads to memtx.read_set. */
extern void ReadSetRecover(int64 tx);

/* Ending tx: drop its lost reads. */
extern void ReadSetForget(int64 tx);

/* begin: tx is created in the current subtransaction. */
extern void ReadSetNoteBegin(int64 tx);

/*
 * The transaction id (a FullTransactionId value) before which open memtx
 * transactions may have lost reads in a crash; 0: none.
 */
extern uint64 ReadSetLostBefore(void);

extern int	memtx_max_read_set;

#endif							/* MEMTX_READSET_H */
