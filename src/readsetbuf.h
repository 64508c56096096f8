/*
 * readsetbuf.h — the shared buffer under the durable read set
 * (readsetbuf.c): what call.c, txn.c and the module need of it, and what
 * readset.c, the durable read set over it, shares with it.
 */
#ifndef MEMTX_READSETBUF_H
#define MEMTX_READSETBUF_H

#include "memtx.h"

#include "storage/lwlock.h"
#include "utils/hsearch.h"

extern void ReadSetInit(void);

/* Errors unless the shared buffer exists (memtx preloaded): fn cannot run. */
extern void ReadSetRequire(const char *fn);

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

/*
 * The buffer as readset.c reads and charges it: the shared state (its
 * LWLock held), the table of lost reads and this backend's list.
 */

/*
 * A lost read: transaction tx of the store (memtx's pg_extension row) of
 * database db read record.  The store is part of the key because a DROP and
 * CREATE EXTENSION restarts the transaction ids while the buffer lives on.
 */
typedef struct LostKey
{
	Oid			db;
	Oid			store;
	int64		tx;
	int64		record;
} LostKey;

typedef struct LostRead
{
	LostKey		key;			/* first: the hash key */
	int32		slot;			/* the backend slot it is charged to */
	struct LostRead *next;		/* the transaction's next lost read */
} LostRead;

typedef struct LostTxKey
{
	Oid			db;
	Oid			store;
	int64		tx;
} LostTxKey;

typedef struct LostTx
{
	LostTxKey	key;			/* first: the hash key */
	int32		count;
	LostRead   *head;
} LostTx;

typedef struct ReadSetShared
{
	LWLock	   *lock;
	int			nslots;			/* MaxBackends, and one for the common pool */
	int			reserved;		/* units each backend slot is guaranteed */
	int			common;			/* units of the common pool */
	int			common_used;	/* units of the common pool in use */
	int64		pending;		/* units held by backends' lists */
	bool		lost_before_due;	/* reads may have been lost: set lost_before */
	pg_atomic_uint64 lost_before;	/* a FullTransactionId; 0: none */
	int			used[FLEXIBLE_ARRAY_MEMBER];	/* units charged per slot */
} ReadSetShared;

/* What an entry of this backend's list stands for. */
typedef enum ReadSetState
{
	RS_PENDING,					/* read, no row written: lost unless kept */
	RS_WRITTEN,					/* its read_set row is written in this xact */
	RS_HEALS					/* a row written in this xact for a lost read: no unit */
} ReadSetState;

typedef struct LocalKey
{
	Oid			store;
	int64		tx;
	int64		record;
} LocalKey;

typedef struct LocalRead
{
	LocalKey	key;			/* first: the hash key */
	SubTransactionId subid;
	ReadSetState state;
} LocalRead;

extern ReadSetShared *readset_shared;
extern HTAB *readset_lost_reads;
extern HTAB *readset_local;	/* this backend's reads not yet durable */
extern int	readset_nlocal;

extern int	ReadSetMySlot(void);
extern bool ReadSetCharge(int slot, int n, bool force);
extern void ReadSetUncharge(int slot, int n);
extern LostKey ReadSetKey(Oid db, Oid store, int64 tx, int64 record);
extern LostTx *ReadSetLostOf(Oid store, int64 tx);
extern void ReadSetLostRemove(LostTx *t, LostRead *l);
extern void ReadSetEnsureLocal(void);

#endif							/* MEMTX_READSETBUF_H */
