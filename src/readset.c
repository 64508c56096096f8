/*
 * readset.c — the durable read set (SPEC §4 3c, §16 "Durable read set",
 * §17 "No tenant can starve another", "The durable read set survives
 * restarts").
 *
 * Under memtx.flow_control = read_set every record a memtx transaction has
 * read is an implicit parent of what it commits, so transcribing a private
 * value into a public record is caught as permission_laundering.  The read
 * set is the table memtx.read_set, written by memtx.read (and memtx.recall)
 * in the caller's SQL transaction.  That alone would not do: when the SQL
 * transaction (or a savepoint) that read rolls back, its read_set rows go
 * with it, yet the rows memtx.read returned have reached the client.  So a
 * read is never forgotten while its memtx transaction is open:
 *
 *   - A read's records that are new to the transaction's read set (neither
 *     a read_set row it can see, nor kept already) enter this backend's list
 *     of reads not yet durable, tagged with the subtransaction that read
 *     them, before the rows are returned.  Each holds one unit of the
 *     shared buffer, reserved at read time, so the buffer always has room
 *     for every read that may yet be lost.
 *   - When a (sub)transaction aborts, its entries become lost reads: entries
 *     of the shared table of lost reads, keyed (database, transaction,
 *     record), so a pair is kept once however often it is read (the abort
 *     callbacks cannot write tables, but shared memory outlives the
 *     transaction and the session).  When the top transaction commits,
 *     entries whose rows were written are durable and release their units;
 *     entries read in a READ ONLY transaction, which writes nothing (§16
 *     "Probes write nothing"), become lost reads too.
 *   - memtx.commit first writes its transaction's lost reads to
 *     memtx.read_set, so check 3c sees them; ending a memtx transaction
 *     (commit, abort, expiry, fence) drops them when the SQL transaction
 *     that ended it commits.
 *   - A backend that exits (a client that disconnects, a smart or fast
 *     shutdown) first writes the lost reads it holds to memtx.read_set in a
 *     transaction of its own, as PostgreSQL removes temporary relations; at
 *     a shutdown that is not a crash the postmaster writes whatever is left
 *     to $PGDATA/pg_stat/memtx_read_set.stat, which the next start loads.
 *   - After a crash (an immediate shutdown, a killed process, a start in
 *     recovery: a failover or a restore) the server cannot know every
 *     rolled-back read of a transaction that was open.  The first memtx call
 *     on the writable server records the next transaction id as the point
 *     before which reads may have been lost (memtx.read_set_lost_before());
 *     every open transaction begun before it counts as expired — a call on
 *     it fails as on a lease that ran out, and expiry aborts it — so no
 *     transaction ever commits on a possibly incomplete read set.  The
 *     point is kept across later clean restarts.
 *
 * Tenancy (SPEC §17).  A memtx transaction holds at most memtx.max_read_set
 * distinct records read (a read that would hold more fails, 54000).  The
 * buffer's units are accounted per backend: every backend has
 * memtx.read_set_reserved units no other backend can take, and beyond them
 * may use at most a quarter of the common pool (memtx.read_set_buffer), so
 * a backend that uses up its share fails its own reads (53400) and no one
 * else's.  Units are charged to the backend that read until its entries are
 * released, or its lost reads are written or dropped; a lost read loaded
 * at start, or one its backend could not write at exit, is charged to the
 * common pool.
 *
 * Reads of a transaction begun in the same (sub)transaction that rolls back
 * are dropped: that memtx transaction never existed.  memtx.begin drops any
 * lost reads under the id it hands out: they can only be those of a store
 * that is gone (the ids restart when the extension is created again).  Reads
 * of a transaction that is no longer open are not kept (it commits nothing
 * more).  A PREPAREd transaction that read is refused (0A000): its outcome
 * is not known when it ends here.  The buffer needs
 * shared_preload_libraries; without it memtx.read refuses to run.
 *
 * Locking: one LWLock guards the shared state, held only to look up, copy
 * and account entries; no heavyweight lock is taken here (locks.c).
 */
#include "readset.h"

#include "catalog.h"
#include "fault.h"
#include "record.h"

#include <unistd.h>

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_control.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/controldata_utils.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/xid8.h"

/* Where a clean shutdown leaves the lost reads for the next start. */
#define READSET_DUMP_FILE	PGSTAT_STAT_PERMANENT_DIRECTORY "/memtx_read_set.stat"
#define READSET_DUMP_MAGIC	0x6d747872	/* "mtxr" */
#define READSET_DUMP_VERSION 1

/* The share of the common pool one backend may use: 1 / READSET_COMMON_SHARE. */
#define READSET_COMMON_SHARE 4

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

/* A memtx transaction ended (forget) or begun (begun) in a subtransaction. */
typedef struct ReadSetMark
{
	Oid			store;
	int64		tx;
	SubTransactionId subid;
} ReadSetMark;

typedef struct ReadSetMarks
{
	ReadSetMark *marks;
	int			n;
	int			cap;
} ReadSetMarks;

static int	memtx_read_set_buffer = 65536;
static int	memtx_read_set_reserved = 512;
int			memtx_max_read_set = 100000;

static ReadSetShared *shared;
static HTAB *lost_reads;
static HTAB *lost_txs;
static shmem_request_hook_type prev_shmem_request;
static shmem_startup_hook_type prev_shmem_startup;

static HTAB *local;				/* this backend's reads not yet durable */
static int	nlocal;
static ReadSetMarks begun;
static ReadSetMarks forgets;
static bool exit_flush_registered;

static int
ReadSetCapacity(void)
{
	return Max(memtx_read_set_reserved * MaxBackends + memtx_read_set_buffer, 1);
}

/* This backend's slot: its BackendId, 1-based. */
static int
ReadSetMySlot(void)
{
	Assert(MyBackendId != InvalidBackendId && MyBackendId <= MaxBackends);
	return MyBackendId - 1;
}

static int
ReadSetCommonUse(int slot, int used)
{
	if (slot == shared->nslots - 1)
		return used;
	return Max(0, used - shared->reserved);
}

/* Charge n units to slot (LWLock held); false when its share does not allow. */
static bool
ReadSetCharge(int slot, int n, bool force)
{
	int			used = shared->used[slot];
	int			extra = ReadSetCommonUse(slot, used + n) - ReadSetCommonUse(slot, used);

	if (!force && extra > 0 &&
		(shared->common_used + extra > shared->common ||
		 ReadSetCommonUse(slot, used + n) > shared->common / READSET_COMMON_SHARE))
		return false;
	shared->used[slot] = used + n;
	shared->common_used += extra;
	return true;
}

static void
ReadSetUncharge(int slot, int n)
{
	int			used = shared->used[slot];

	Assert(used >= n);
	shared->common_used -= ReadSetCommonUse(slot, used) - ReadSetCommonUse(slot, used - n);
	shared->used[slot] = used - n;
}

static Size
ReadSetShmemSize(void)
{
	Size		size = add_size(offsetof(ReadSetShared, used),
								mul_size(sizeof(int), MaxBackends + 1));

	size = add_size(size, hash_estimate_size(ReadSetCapacity(), sizeof(LostRead)));
	return add_size(size, hash_estimate_size(ReadSetCapacity(), sizeof(LostTx)));
}

static void
ReadSetShmemRequest(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	RequestAddinShmemSpace(ReadSetShmemSize());
	RequestNamedLWLockTranche("memtx_read_set", 1);
}

/* The key of a lost read. */
static LostKey
ReadSetKey(Oid db, Oid store, int64 tx, int64 record)
{
	LostKey		key;

	memset(&key, 0, sizeof(key));
	key.db = db;
	key.store = store;
	key.tx = tx;
	key.record = record;
	return key;
}

/* Enter a lost read (LWLock held); false when the pair is kept already. */
static bool
ReadSetLostAdd(LostKey key, int slot)
{
	LostTxKey	txkey;
	LostRead   *l;
	LostTx	   *t;
	bool		found;

	l = hash_search(lost_reads, &key, HASH_ENTER_NULL, &found);
	if (l == NULL)
		return false;			/* cannot happen: units bound the entries */
	if (found)
		return false;
	memset(&txkey, 0, sizeof(txkey));
	txkey.db = key.db;
	txkey.store = key.store;
	txkey.tx = key.tx;
	t = hash_search(lost_txs, &txkey, HASH_ENTER_NULL, &found);
	if (t == NULL)
	{
		hash_search(lost_reads, &key, HASH_REMOVE, NULL);
		return false;
	}
	if (!found)
	{
		t->count = 0;
		t->head = NULL;
	}
	l->slot = slot;
	l->next = t->head;
	t->head = l;
	t->count++;
	return true;
}

/* The lost reads of transaction tx of store (in this database), or NULL (LWLock held). */
static LostTx *
ReadSetLostOf(Oid store, int64 tx)
{
	LostTxKey	txkey;

	memset(&txkey, 0, sizeof(txkey));
	txkey.db = MyDatabaseId;
	txkey.store = store;
	txkey.tx = tx;
	return hash_search(lost_txs, &txkey, HASH_FIND, NULL);
}

/* Remove lost read l of transaction t, charged to its slot (LWLock held). */
static void
ReadSetLostRemove(LostTx *t, LostRead *l)
{
	LostRead  **p = &t->head;

	while (*p != l)
		p = &(*p)->next;
	*p = l->next;
	ReadSetUncharge(l->slot, 1);
	hash_search(lost_reads, &l->key, HASH_REMOVE, NULL);
	if (--t->count == 0)
		hash_search(lost_txs, &t->key, HASH_REMOVE, NULL);
}

/* Drop every lost read of transaction tx of store (LWLock held). */
static void
ReadSetLostDropTx(Oid store, int64 tx)
{
	LostTx	   *t = ReadSetLostOf(store, tx);
	LostRead   *l;

	if (t == NULL)
		return;
	l = t->head;
	while (l != NULL)
	{
		LostRead   *next = l->next;

		ReadSetUncharge(l->slot, 1);
		hash_search(lost_reads, &l->key, HASH_REMOVE, NULL);
		l = next;
	}
	hash_search(lost_txs, &t->key, HASH_REMOVE, NULL);
}

static void ReadSetDump(int code, Datum arg);

/*
 * Whether the server last stopped cleanly, by its control file (postmaster):
 * a smart or fast shutdown leaves it shut down; an immediate shutdown, a
 * crash or a killed postmaster leave it in production.
 */
static bool
ReadSetStoppedCleanly(void)
{
	bool		crc_ok;
	ControlFileData *control = get_controlfile(DataDir, &crc_ok);
	bool		clean = crc_ok && (control->state == DB_SHUTDOWNED ||
								   control->state == DB_SHUTDOWNED_IN_RECOVERY);

	pfree(control);
	return clean;
}

/*
 * Load what the last clean shutdown left (postmaster, LWLock not needed
 * yet).  After any other stop the file, if there is one, is not to be
 * trusted: reads may have been lost.
 */
static void
ReadSetLoad(void)
{
	FILE	   *file;
	uint32		header[2];
	uint64		lost_before;
	int64		n;
	bool		complete = false;

	if (!ReadSetStoppedCleanly())
	{
		unlink(READSET_DUMP_FILE);
		shared->lost_before_due = true;
		return;
	}
	file = AllocateFile(READSET_DUMP_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", READSET_DUMP_FILE)));
		shared->lost_before_due = true;
		return;
	}
	if (fread(header, sizeof(header), 1, file) == 1 &&
		header[0] == READSET_DUMP_MAGIC && header[1] == READSET_DUMP_VERSION &&
		fread(&lost_before, sizeof(lost_before), 1, file) == 1 &&
		fread(&n, sizeof(n), 1, file) == 1 && n >= 0)
	{
		int64		i;

		pg_atomic_write_u64(&shared->lost_before, lost_before);
		for (i = 0; i < n && i < ReadSetCapacity(); i++)
		{
			LostKey		key;

			if (fread(&key, sizeof(key), 1, file) != 1)
				break;
			if (ReadSetLostAdd(key, shared->nslots - 1))
				ReadSetCharge(shared->nslots - 1, 1, true);
		}
		complete = i == n;
	}
	FreeFile(file);
	unlink(READSET_DUMP_FILE);
	if (!complete)
	{
		ereport(LOG,
				(errmsg("memtx read set file \"%s\" is incomplete or too large for memtx.read_set_buffer",
						READSET_DUMP_FILE),
				 errdetail("Open memtx transactions begun before this start will be expired.")));
		shared->lost_before_due = true;
	}
}

static void
ReadSetShmemStartup(void)
{
	bool		found;
	HASHCTL		info;

	if (prev_shmem_startup)
		prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("memtx read set",
							 add_size(offsetof(ReadSetShared, used),
									  mul_size(sizeof(int), MaxBackends + 1)),
							 &found);
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(LostKey);
	info.entrysize = sizeof(LostRead);
	lost_reads = ShmemInitHash("memtx lost reads", ReadSetCapacity(), ReadSetCapacity(),
							   &info, HASH_ELEM | HASH_BLOBS);
	info.keysize = sizeof(LostTxKey);
	info.entrysize = sizeof(LostTx);
	lost_txs = ShmemInitHash("memtx lost reads by transaction", ReadSetCapacity(), ReadSetCapacity(),
							 &info, HASH_ELEM | HASH_BLOBS);
	if (!found)
	{
		shared->lock = &(GetNamedLWLockTranche("memtx_read_set"))->lock;
		shared->nslots = MaxBackends + 1;
		shared->reserved = memtx_read_set_reserved;
		shared->common = memtx_read_set_buffer;
		shared->common_used = 0;
		shared->pending = 0;
		shared->lost_before_due = false;
		pg_atomic_init_u64(&shared->lost_before, 0);
		memset(shared->used, 0, sizeof(int) * shared->nslots);
		ReadSetLoad();
		/* a start in recovery (a standby, a restore) knows nothing of the old primary's reads */
		if (access("standby.signal", F_OK) == 0 || access("recovery.signal", F_OK) == 0)
			shared->lost_before_due = true;
	}
	LWLockRelease(AddinShmemInitLock);
	if (!IsUnderPostmaster)
		on_shmem_exit(ReadSetDump, (Datum) 0);
}

/*
 * At a shutdown that is not a crash (postmaster): keep the lost reads and
 * the crash point for the next start.  When a backend still held reads (an
 * immediate shutdown killed it), reads may be lost: write nothing, so the
 * next start treats the stop as the crash it was.
 */
static void
ReadSetDump(int code, Datum arg)
{
	FILE	   *file;
	HASH_SEQ_STATUS seq;
	LostRead   *l;
	uint32		header[2] = {READSET_DUMP_MAGIC, READSET_DUMP_VERSION};
	uint64		lost_before;
	int64		n;

	if (code != 0 || shared == NULL || shared->pending > 0 || shared->lost_before_due ||
		!ReadSetStoppedCleanly())
		return;
	file = AllocateFile(READSET_DUMP_FILE ".tmp", PG_BINARY_W);
	if (file == NULL)
		goto error;
	lost_before = pg_atomic_read_u64(&shared->lost_before);
	n = hash_get_num_entries(lost_reads);
	if (fwrite(header, sizeof(header), 1, file) != 1 ||
		fwrite(&lost_before, sizeof(lost_before), 1, file) != 1 ||
		fwrite(&n, sizeof(n), 1, file) != 1)
		goto error;
	hash_seq_init(&seq, lost_reads);
	while ((l = hash_seq_search(&seq)) != NULL)
	{
		if (fwrite(&l->key, sizeof(l->key), 1, file) != 1)
		{
			hash_seq_term(&seq);
			goto error;
		}
	}
	if (FreeFile(file) != 0)
	{
		file = NULL;
		goto error;
	}
	(void) durable_rename(READSET_DUMP_FILE ".tmp", READSET_DUMP_FILE, LOG);
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write file \"%s\": %m", READSET_DUMP_FILE ".tmp")));
	if (file)
		FreeFile(file);
	unlink(READSET_DUMP_FILE ".tmp");
}

static void
ReadSetMarkAdd(ReadSetMarks *m, Oid store, int64 tx)
{
	if (m->n == m->cap)
	{
		m->cap = Max(m->cap * 2, 16);
		m->marks = m->marks ? repalloc(m->marks, sizeof(ReadSetMark) * m->cap)
			: MemoryContextAlloc(TopMemoryContext, sizeof(ReadSetMark) * m->cap);
	}
	m->marks[m->n].store = store;
	m->marks[m->n].tx = tx;
	m->marks[m->n].subid = GetCurrentSubTransactionId();
	m->n++;
}

/* Whether m holds tx of store, marked in subid (InvalidSubTransactionId: in any). */
static bool
ReadSetMarked(ReadSetMarks *m, Oid store, int64 tx, SubTransactionId subid)
{
	for (int i = 0; i < m->n; i++)
		if (m->marks[i].store == store && m->marks[i].tx == tx &&
			(subid == InvalidSubTransactionId || m->marks[i].subid == subid))
			return true;
	return false;
}

/* A subtransaction ended: its marks go (abort) or pass to its parent (commit). */
static void
ReadSetMarksSubEnd(ReadSetMarks *m, SubTransactionId sub, SubTransactionId parent, bool abort)
{
	int			kept = 0;

	for (int i = 0; i < m->n; i++)
	{
		if (m->marks[i].subid == sub)
		{
			if (abort)
				continue;
			m->marks[i].subid = parent;
		}
		m->marks[kept++] = m->marks[i];
	}
	m->n = kept;
}

static void
ReadSetEnsureLocal(void)
{
	HASHCTL		info;

	if (local)
		return;
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(LocalKey);
	info.entrysize = sizeof(LocalRead);
	info.hcxt = TopMemoryContext;
	local = hash_create("memtx reads not yet durable", 256, &info,
						HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * Settle the entries of this backend's list that the ending (sub)transaction
 * owns (subid, or all when InvalidSubTransactionId): on abort they become
 * lost reads, unless their memtx transaction was begun in what aborts (it
 * never existed: its lost reads go too); on commit the pending ones become
 * lost reads and the written ones release their units.  Then, on commit,
 * the lost reads of the transactions ended in it go.  Runs in transaction callbacks: no errors,
 * no allocation.
 */
static void
ReadSetSettle(SubTransactionId subid, bool abort)
{
	HASH_SEQ_STATUS seq;
	LocalRead  *e;
	int			slot;
	int			released = 0;
	int			settled = 0;

	if (nlocal == 0 && (abort ? begun.n == 0 : forgets.n == 0))
		return;
	slot = ReadSetMySlot();
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	if (nlocal > 0)
	{
		hash_seq_init(&seq, local);
		while ((e = hash_seq_search(&seq)) != NULL)
		{
			LostKey		key = ReadSetKey(MyDatabaseId, e->key.store, e->key.tx, e->key.record);

			if (subid != InvalidSubTransactionId && e->subid != subid)
				continue;
			if (e->state == RS_HEALS)
			{
				/* its row is durable now: the lost read it stood for goes */
				LostRead   *l = abort ? NULL : hash_search(lost_reads, &key, HASH_FIND, NULL);

				if (l)
					ReadSetLostRemove(ReadSetLostOf(key.store, key.tx), l);
			}
			else
			{
				settled++;
				if (abort ? ReadSetMarked(&begun, key.store, key.tx, subid) : e->state == RS_WRITTEN)
					released++;
				else if (!ReadSetLostAdd(key, slot))
					released++;	/* kept already */
			}
			hash_search(local, &e->key, HASH_REMOVE, NULL);
			nlocal--;
		}
		shared->pending -= settled;
		ReadSetUncharge(slot, released);
	}
	if (!abort && subid == InvalidSubTransactionId)
		for (int i = 0; i < forgets.n; i++)
			ReadSetLostDropTx(forgets.marks[i].store, forgets.marks[i].tx);

	/*
	 * A memtx transaction begun in what aborts never existed: reads of it
	 * that an inner savepoint's rollback made lost reads go too (no commit
	 * or end of it will ever take them).
	 */
	if (abort)
		for (int i = 0; i < begun.n; i++)
			if (subid == InvalidSubTransactionId || begun.marks[i].subid == subid)
				ReadSetLostDropTx(begun.marks[i].store, begun.marks[i].tx);
	LWLockRelease(shared->lock);
}

static void
ReadSetXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (nlocal > 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot prepare a transaction that read through memtx.read"),
						 errdetail("Its read set must be kept whether the prepared transaction commits or not.")));
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			ReadSetSettle(InvalidSubTransactionId, false);
			begun.n = 0;
			forgets.n = 0;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			ReadSetSettle(InvalidSubTransactionId, true);
			begun.n = 0;
			forgets.n = 0;
			break;
		default:
			break;
	}
}

static void
ReadSetSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS seq;
	LocalRead  *e;

	switch (event)
	{
		case SUBXACT_EVENT_COMMIT_SUB:
			if (nlocal > 0)
			{
				hash_seq_init(&seq, local);
				while ((e = hash_seq_search(&seq)) != NULL)
					if (e->subid == mySubid)
						e->subid = parentSubid;
			}
			ReadSetMarksSubEnd(&begun, mySubid, parentSubid, false);
			ReadSetMarksSubEnd(&forgets, mySubid, parentSubid, false);
			break;
		case SUBXACT_EVENT_ABORT_SUB:
			ReadSetSettle(mySubid, true);
			ReadSetMarksSubEnd(&begun, mySubid, parentSubid, true);
			ReadSetMarksSubEnd(&forgets, mySubid, parentSubid, true);
			break;
		default:
			break;
	}
}

void
ReadSetInit(void)
{
	DefineCustomIntVariable("memtx.max_read_set",
							"Distinct records one memtx transaction may hold in its read set.",
							"A read that would hold more fails with SQLSTATE 54000.",
							&memtx_max_read_set,
							100000, 1, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	/* a server-start setting can be defined only while preloading */
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("memtx.read_set_buffer",
							"Entries of the common pool of the shared buffer that keeps reads of uncommitted and rolled-back SQL transactions.",
							"Beyond its memtx.read_set_reserved entries, a backend may use at most a quarter of this pool.",
							&memtx_read_set_buffer,
							65536, 0, INT_MAX / 4,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("memtx.read_set_reserved",
							"Entries of the shared read-set buffer reserved for each backend.",
							"No other backend can use them: a backend always has room for this many records read in SQL transactions that have not committed.",
							&memtx_read_set_reserved,
							512, 0, 1048576,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = ReadSetShmemRequest;
	prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = ReadSetShmemStartup;
	RegisterXactCallback(ReadSetXactCallback, NULL);
	RegisterSubXactCallback(ReadSetSubXactCallback, NULL);
}

void
ReadSetNoteBegin(int64 tx)
{
	if (shared)
		ReadSetMarkAdd(&begun, CatalogStoreId(), tx);
}

void
ReadSetRequire(const char *fn)
{
	if (!shared)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs memtx in shared_preload_libraries", fn),
				 errdetail("The read set of a memtx transaction is kept in shared memory when the SQL transaction that read rolls back."),
				 errhint("Add memtx to shared_preload_libraries and restart the server.")));
}

/*
 * The transaction id before which open transactions may have lost reads in
 * a crash, as a FullTransactionId value (0: none).  After a start that may
 * have lost reads it is fixed by the first call on the writable server: the
 * next transaction id then, or this SQL transaction's own id when it has one
 * already (it was assigned after the start).  A hot standby commits nothing
 * and fixes nothing.
 */
uint64
ReadSetLostBefore(void)
{
	uint64		value;

	if (!shared)
		return 0;
	if (shared->lost_before_due && !RecoveryInProgress())
	{
		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		if (shared->lost_before_due)
		{
			FullTransactionId next = ReadNextFullTransactionId();
			FullTransactionId own = GetTopFullTransactionIdIfAny();

			if (FullTransactionIdIsValid(own) && FullTransactionIdPrecedes(own, next))
				next = own;
			pg_atomic_write_u64(&shared->lost_before, U64FromFullTransactionId(next));
			shared->lost_before_due = false;
		}
		LWLockRelease(shared->lock);
	}
	value = pg_atomic_read_u64(&shared->lost_before);
	return value;
}

/* memtx.read_set_lost_before() → xid8: NULL when no read can have been lost. */
PG_FUNCTION_INFO_V1(memtx_read_set_lost_before);
Datum
memtx_read_set_lost_before(PG_FUNCTION_ARGS)
{
	uint64		value = ReadSetLostBefore();

	if (value == 0)
		PG_RETURN_NULL();
	PG_RETURN_FULLTRANSACTIONID(FullTransactionIdFromU64(value));
}

/*
 * Run sql (a plan kept in *plan) with $1 = tx and $2 = ids[0..n) and return
 * the ids it answers, one bigint column; *nnew of them.
 */
static Datum *
ReadSetIdsOf(SPIPlanPtr *plan, const char *sql, int64 tx, const Datum *ids, int n, int *nnew)
{
	static const Oid types[] = {INT8OID, INT8ARRAYOID};
	Datum		values[2];
	Datum	   *out;

	values[0] = Int64GetDatum(tx);
	values[1] = RecIdsDatum((Datum *) ids, n);
	MemtxExec(MemtxPlan(plan, sql, 2, types), values, NULL, 0);
	*nnew = (int) SPI_processed;
	out = palloc(sizeof(Datum) * (SPI_processed + 1));
	for (uint64 i = 0; i < SPI_processed; i++)
		out[i] = Int64GetDatum(MemtxGetInt64(i, 1));
	return out;
}

/* Write read-set rows: transaction tx read ids; returns the ids new to it. */
static Datum *
ReadSetWrite(int64 tx, const Datum *ids, int n, int *nnew)
{
	static SPIPlanPtr plan;

	return ReadSetIdsOf(&plan,
						"INSERT INTO memtx.read_set (tx_id, record_id, namespace) "
						"SELECT $1, unnest($2), "
						"       (SELECT t.namespace FROM memtx.transactions t WHERE t.id = $1) "
						"ON CONFLICT DO NOTHING RETURNING record_id",
						tx, ids, n, nnew);
}

/* The ids of ids[0..n) that are no read_set row of tx yet; *nnew of them. */
static Datum *
ReadSetUnwritten(int64 tx, const Datum *ids, int n, int *nnew)
{
	static SPIPlanPtr plan;

	return ReadSetIdsOf(&plan,
						"SELECT i FROM unnest($2) i WHERE NOT EXISTS "
						"(SELECT FROM memtx.read_set s WHERE s.tx_id = $1 AND s.record_id = i)",
						tx, ids, n, nnew);
}

/*
 * Refuse a read that would take transaction tx's read set past
 * memtx.max_read_set distinct records (54000): its read_set rows this call
 * can see, its lost reads (less those a row of this SQL transaction stands
 * for already) and the reads of this backend not yet written, plus nnew.
 */
static void
ReadSetCheckCap(Oid store, int64 tx, int nnew)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID};
	Datum		values[1];
	int64		held;
	LostTx	   *t;
	HASH_SEQ_STATUS seq;
	LocalRead  *e;

	values[0] = Int64GetDatum(tx);
	MemtxExec(MemtxPlan(&plan,
						"SELECT pg_catalog.count(*) FROM memtx.read_set WHERE tx_id = $1",
						1, types),
			  values, NULL, 1);
	held = MemtxGetInt64(0, 1) + nnew;
	LWLockAcquire(shared->lock, LW_SHARED);
	t = ReadSetLostOf(store, tx);
	if (t)
		held += t->count;
	LWLockRelease(shared->lock);
	if (nlocal > 0)
	{
		hash_seq_init(&seq, local);
		while ((e = hash_seq_search(&seq)) != NULL)
			if (e->key.store == store && e->key.tx == tx)
				held += e->state == RS_PENDING ? 1 : e->state == RS_HEALS ? -1 : 0;
	}
	if (held > memtx_max_read_set)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("memtx transaction %lld would hold more than memtx.max_read_set (%d) records read",
						(long long) tx, memtx_max_read_set),
				 errdetail("Its read set would hold %lld distinct records.", (long long) held),
				 errhint("Read less in one transaction (narrow the entity or attribute), or commit and begin a new one.")));
}

/* Run ReadSetExitFlush at backend exit, once it may have something to flush. */
static void ReadSetExitFlush(int code, Datum arg);

/*
 * Enter ids[0..n), read by transaction tx of store, in this backend's list:
 * those lost[i] says are lost reads as RS_HEALS (their rows were just
 * written), the others as state, charging each of those a unit of this
 * backend's share (53400 when it is used up).
 */
static void
ReadSetKeep(Oid store, int64 tx, const Datum *ids, const bool *lost, int n, ReadSetState state)
{
	int			slot = ReadSetMySlot();
	int			units = 0;
	bool		charged;

	if (n == 0)
		return;
	ReadSetEnsureLocal();
	if (!exit_flush_registered)
	{
		before_shmem_exit(ReadSetExitFlush, (Datum) 0);
		exit_flush_registered = true;
	}
	for (int i = 0; i < n; i++)
		units += lost[i] ? 0 : 1;
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	charged = ReadSetCharge(slot, units, false);
	if (charged)
		shared->pending += units;
	LWLockRelease(shared->lock);
	if (!charged)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("this session holds too many records read in SQL transactions that have not committed or that rolled back"),
				 errdetail("Each session may keep memtx.read_set_reserved (%d) record ids of such reads, and at most a quarter of the common pool memtx.read_set_buffer (%d) beyond them.",
						   shared->reserved, shared->common),
				 errhint("Commit the SQL transactions that read, end the memtx transactions whose reads rolled back, or raise the settings.")));
	for (int i = 0; i < n; i++)
	{
		LocalKey	key;
		LocalRead  *e;
		bool		found;

		memset(&key, 0, sizeof(key));
		key.store = store;
		key.tx = tx;
		key.record = DatumGetInt64(ids[i]);
		e = hash_search(local, &key, HASH_ENTER, &found);
		if (found)
		{
			/* the same id twice in one read: one entry */
			if (!lost[i])
			{
				LWLockAcquire(shared->lock, LW_EXCLUSIVE);
				ReadSetUncharge(slot, 1);
				shared->pending--;
				LWLockRelease(shared->lock);
			}
			continue;
		}
		e->subid = GetCurrentSubTransactionId();
		e->state = lost[i] ? RS_HEALS : state;
		nlocal++;
	}
}

/*
 * A read (memtx.read, memtx.recall) of transaction t returned ids: they join
 * its read set even if this SQL transaction rolls back, each (transaction,
 * record) pair once.  A READ ONLY transaction writes nothing and leaves the
 * records its read set holds in no form yet (no read_set row it can see, no
 * lost read, no entry of this backend) to the shared buffer.  Otherwise the
 * rows are written, which also makes lost reads of the same records durable
 * when this SQL transaction commits, and, since the call writes anyway, the
 * lease is renewed.  The reads of a transaction that is no longer open are
 * not kept (it commits nothing more).
 */
void
ReadSetJoin(MemtxTxn *t, const Datum *ids, int n)
{
	Oid			store = CatalogStoreId();
	Datum	   *fresh;
	bool	   *lost;
	int			nfresh = 0;
	Datum	   *written;
	int			nwritten = 0;
	int			nlost = 0;

	ReadSetRequire("memtx.read");
	if (n == 0)
		return;
	if (t->status != MX_OPEN)
	{
		if (!XactReadOnly)
			(void) ReadSetWrite(t->id, ids, n, &nwritten);
		return;
	}

	/* what this backend's list does not hold; which of them are lost reads */
	fresh = palloc(sizeof(Datum) * n);
	lost = palloc0(sizeof(bool) * n);
	LWLockAcquire(shared->lock, LW_SHARED);
	for (int i = 0; i < n; i++)
	{
		LocalKey	key;
		LostKey		lkey = ReadSetKey(MyDatabaseId, store, t->id, DatumGetInt64(ids[i]));

		memset(&key, 0, sizeof(key));
		key.store = store;
		key.tx = t->id;
		key.record = DatumGetInt64(ids[i]);
		if (local && hash_search(local, &key, HASH_FIND, NULL))
			continue;
		if (XactReadOnly && hash_search(lost_reads, &lkey, HASH_FIND, NULL))
			continue;
		fresh[nfresh++] = ids[i];
	}
	LWLockRelease(shared->lock);
	if (nfresh == 0)
	{
		if (!XactReadOnly)
			TxnRenewLease(t);
		return;
	}

	if (XactReadOnly)
	{
		written = ReadSetUnwritten(t->id, fresh, nfresh, &nwritten);
		if (nwritten > 0)
			ReadSetCheckCap(store, t->id, nwritten);
		ReadSetKeep(store, t->id, written, lost, nwritten, RS_PENDING);
		return;
	}
	written = ReadSetWrite(t->id, fresh, nfresh, &nwritten);
	LWLockAcquire(shared->lock, LW_SHARED);
	for (int i = 0; i < nwritten; i++)
	{
		LostKey		lkey = ReadSetKey(MyDatabaseId, store, t->id, DatumGetInt64(written[i]));

		lost[i] = hash_search(lost_reads, &lkey, HASH_FIND, NULL) != NULL;
		nlost += lost[i] ? 1 : 0;
	}
	LWLockRelease(shared->lock);
	if (nwritten > nlost)
		ReadSetCheckCap(store, t->id, -nlost);	/* a healed lost read is counted as its row */
	ReadSetKeep(store, t->id, written, lost, nwritten, RS_WRITTEN);
	TxnRenewLease(t);
}

void
ReadSetRecover(int64 tx)
{
	LostTx	   *t;
	Datum	   *ids = NULL;
	int			n = 0;
	int			nnew;

	if (!shared)
		return;
	LWLockAcquire(shared->lock, LW_SHARED);
	t = ReadSetLostOf(CatalogStoreId(), tx);
	if (t != NULL)
	{
		ids = palloc(sizeof(Datum) * t->count);
		for (LostRead *l = t->head; l != NULL; l = l->next)
			ids[n++] = Int64GetDatum(l->key.record);
	}
	LWLockRelease(shared->lock);
	if (n > 0)
		(void) ReadSetWrite(tx, ids, n, &nnew);
}

void
ReadSetForget(int64 tx)
{
	if (shared)
		ReadSetMarkAdd(&forgets, CatalogStoreId(), tx);
}

/*
 * At backend exit (before_shmem_exit): write the lost reads this backend is
 * charged with, of open transactions of the store of its database, to
 * memtx.read_set in a transaction of its own, and drop them from the buffer
 * (those of ended transactions go unwritten); lost reads of a store that is
 * gone (DROP EXTENSION) are dropped, whoever holds them.  When writing
 * fails, the reads stay in the buffer, charged to the common pool, and the
 * next start loads them.
 */
static void
ReadSetExitFlush(int code, Datum arg)
{
	HASH_SEQ_STATUS seq;
	LostRead   *l;
	Datum	   *volatile txs = NULL;
	Datum	   *volatile recs = NULL;
	volatile int n = 0;
	volatile Oid store = InvalidOid;
	int			slot;
	MemoryContext cxt = CurrentMemoryContext;

	if (!shared || MyBackendId == InvalidBackendId)
		return;
	/* settle this backend's list first: what its open transaction read is lost now */
	AbortOutOfAnyTransaction();
	slot = ReadSetMySlot();

	PG_TRY();
	{
		StartTransactionCommand();
		XactReadOnly = false;
		PushActiveSnapshot(GetTransactionSnapshot());
		store = get_extension_oid("memtx", true);

		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		txs = palloc(sizeof(Datum) * (shared->used[slot] + 1));
		recs = palloc(sizeof(Datum) * (shared->used[slot] + 1));
		hash_seq_init(&seq, lost_reads);
		while ((l = hash_seq_search(&seq)) != NULL)
		{
			if (l->key.db != MyDatabaseId)
				continue;
			if (l->key.store != store)
				ReadSetLostRemove(ReadSetLostOf(l->key.store, l->key.tx), l);
			else if (l->slot == slot)
			{
				txs[n] = Int64GetDatum(l->key.tx);
				recs[n] = Int64GetDatum(l->key.record);
				n++;
			}
		}
		LWLockRelease(shared->lock);

		if (n > 0)
		{
			static const Oid types[] = {INT8ARRAYOID, INT8ARRAYOID};
			Datum		values[2];
			MemtxCall	call;

			MemtxCallBeginAudit(&call);
			FaultPoint("readset:flush");
			values[0] = RecIdsDatum(txs, n);
			values[1] = RecIdsDatum(recs, n);
			/* one-shot plan: this runs once per backend */
			if (SPI_execute_with_args("INSERT INTO memtx.read_set (tx_id, record_id, namespace) "
									  "SELECT t.id, u.record, t.namespace "
									  "FROM unnest($1, $2) u(tx, record) "
									  "JOIN memtx.transactions t ON t.id = u.tx AND t.status = 'open' "
									  "ON CONFLICT DO NOTHING",
									  2, (Oid *) types, values, NULL, false, 0) < 0)
				elog(ERROR, "SPI_execute_with_args failed");
			MemtxCallEnd(&call);
		}
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		EmitErrorReport();
		FlushErrorState();
		AbortOutOfAnyTransaction();
		/* kept in the buffer, no longer this slot's: the next backend here starts clean */
		if (LWLockHeldByMe(shared->lock))
			LWLockRelease(shared->lock);
		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		hash_seq_init(&seq, lost_reads);
		while ((l = hash_seq_search(&seq)) != NULL)
			if (l->slot == slot)
			{
				ReadSetUncharge(slot, 1);
				ReadSetCharge(shared->nslots - 1, 1, true);
				l->slot = shared->nslots - 1;
			}
		LWLockRelease(shared->lock);
		return;
	}
	PG_END_TRY();

	/* written: drop them (a taker may have dropped some meanwhile) */
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n; i++)
	{
		LostKey		key = ReadSetKey(MyDatabaseId, store, DatumGetInt64(txs[i]),
									 DatumGetInt64(recs[i]));
		LostRead   *found = hash_search(lost_reads, &key, HASH_FIND, NULL);

		if (found && found->slot == slot)
			ReadSetLostRemove(ReadSetLostOf(store, key.tx), found);
	}
	LWLockRelease(shared->lock);
}

/*
 * memtx.read_set_usage() → (lost_reads, pending_reads, common_pool,
 * common_used, reserved_per_session, session_used, store_lost_reads): the
 * shared buffer of reads not yet durable, this session's part of it and the
 * lost reads of this database's store (harness).
 */
PG_FUNCTION_INFO_V1(memtx_read_set_usage);
Datum
memtx_read_set_usage(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[7];
	bool		nulls[7] = {false, false, false, false, false, false, false};
	MemtxCall	call;
	Oid			store;
	int64		store_lost = 0;
	HASH_SEQ_STATUS seq;
	LostRead   *l;

	ReadSetRequire("memtx.read_set_usage");
	MemtxCallBeginAudit(&call);
	MemtxRequireHarness(&call, "inspect the read-set buffer");
	MemtxCallEnd(&call);
	store = CatalogStoreId();
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "memtx.read_set_usage must return a composite type");
	LWLockAcquire(shared->lock, LW_SHARED);
	values[0] = Int64GetDatum(hash_get_num_entries(lost_reads));
	values[1] = Int64GetDatum(shared->pending);
	values[2] = Int32GetDatum(shared->common);
	values[3] = Int32GetDatum(shared->common_used);
	values[4] = Int32GetDatum(shared->reserved);
	values[5] = Int32GetDatum(shared->used[ReadSetMySlot()]);
	hash_seq_init(&seq, lost_reads);
	while ((l = hash_seq_search(&seq)) != NULL)
		if (l->key.db == MyDatabaseId && l->key.store == store)
			store_lost++;
	LWLockRelease(shared->lock);
	values[6] = Int64GetDatum(store_lost);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
