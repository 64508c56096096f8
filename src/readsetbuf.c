/*
 * readsetbuf.c — the shared buffer under the durable read set (SPEC §16
 * "Durable read set", §17 "The durable read set survives restarts").
 *
 * The mechanism that readset.c's essay describes, without its SQL: the
 * shared memory of lost reads (keyed by database, store, transaction and
 * record, and listed per transaction), the units of the buffer charged per
 * backend, this backend's list of reads not yet durable, the
 * (sub)transaction callbacks that settle that list, the file a clean
 * shutdown leaves for the next start, and the point before which a crash
 * may have lost reads (ReadSetLostBefore).  Nothing here runs a query, loads
 * a memtx transaction or checks a role, so the call machinery (call.c) and
 * the transactions (txn.c) can use it; the writes of read_set rows, the cap
 * of a transaction's read set and the exit flush are readset.c's, above
 * them.
 *
 * Locking: one LWLock guards the shared state, held only to look up, copy
 * and account entries; no heavyweight lock is taken here (locks.c).
 */
#include "readsetbuf.h"

#include "catalog.h"

#include <unistd.h>

#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/xid8.h"

/* Where a clean shutdown leaves the lost reads for the next start. */
#define READSET_DUMP_FILE	PGSTAT_STAT_PERMANENT_DIRECTORY "/memtx_read_set.stat"
#define READSET_DUMP_MAGIC	0x6d747872	/* "mtxr" */
#define READSET_DUMP_VERSION 1

/* The share of the common pool one backend may use: 1 / READSET_COMMON_SHARE. */
#define READSET_COMMON_SHARE 4

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

ReadSetShared *readset_shared;
HTAB	   *readset_lost_reads;
static HTAB *lost_txs;
static shmem_request_hook_type prev_shmem_request;
static shmem_startup_hook_type prev_shmem_startup;

HTAB	   *readset_local;		/* this backend's reads not yet durable */
int			readset_nlocal;
static ReadSetMarks begun;
static ReadSetMarks forgets;

static int
ReadSetCapacity(void)
{
	return Max(memtx_read_set_reserved * MaxBackends + memtx_read_set_buffer, 1);
}

/* This backend's slot: its BackendId, 1-based. */
int
ReadSetMySlot(void)
{
	Assert(MyBackendId != InvalidBackendId && MyBackendId <= MaxBackends);
	return MyBackendId - 1;
}

static int
ReadSetCommonUse(int slot, int used)
{
	if (slot == readset_shared->nslots - 1)
		return used;
	return Max(0, used - readset_shared->reserved);
}

/* Charge n units to slot (LWLock held); false when its share does not allow. */
bool
ReadSetCharge(int slot, int n, bool force)
{
	int			used = readset_shared->used[slot];
	int			extra = ReadSetCommonUse(slot, used + n) - ReadSetCommonUse(slot, used);

	if (!force && extra > 0 &&
		(readset_shared->common_used + extra > readset_shared->common ||
		 ReadSetCommonUse(slot, used + n) > readset_shared->common / READSET_COMMON_SHARE))
		return false;
	readset_shared->used[slot] = used + n;
	readset_shared->common_used += extra;
	return true;
}

void
ReadSetUncharge(int slot, int n)
{
	int			used = readset_shared->used[slot];

	Assert(used >= n);
	readset_shared->common_used -= ReadSetCommonUse(slot, used) - ReadSetCommonUse(slot, used - n);
	readset_shared->used[slot] = used - n;
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
LostKey
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

	l = hash_search(readset_lost_reads, &key, HASH_ENTER_NULL, &found);
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
		hash_search(readset_lost_reads, &key, HASH_REMOVE, NULL);
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
LostTx *
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
void
ReadSetLostRemove(LostTx *t, LostRead *l)
{
	LostRead  **p = &t->head;

	while (*p != l)
		p = &(*p)->next;
	*p = l->next;
	ReadSetUncharge(l->slot, 1);
	hash_search(readset_lost_reads, &l->key, HASH_REMOVE, NULL);
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
		hash_search(readset_lost_reads, &l->key, HASH_REMOVE, NULL);
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
		readset_shared->lost_before_due = true;
		return;
	}
	file = AllocateFile(READSET_DUMP_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", READSET_DUMP_FILE)));
		readset_shared->lost_before_due = true;
		return;
	}
	if (fread(header, sizeof(header), 1, file) == 1 &&
		header[0] == READSET_DUMP_MAGIC && header[1] == READSET_DUMP_VERSION &&
		fread(&lost_before, sizeof(lost_before), 1, file) == 1 &&
		fread(&n, sizeof(n), 1, file) == 1 && n >= 0)
	{
		int64		i;

		pg_atomic_write_u64(&readset_shared->lost_before, lost_before);
		for (i = 0; i < n && i < ReadSetCapacity(); i++)
		{
			LostKey		key;

			if (fread(&key, sizeof(key), 1, file) != 1)
				break;
			if (ReadSetLostAdd(key, readset_shared->nslots - 1))
				ReadSetCharge(readset_shared->nslots - 1, 1, true);
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
		readset_shared->lost_before_due = true;
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
	readset_shared = ShmemInitStruct("memtx read set",
							 add_size(offsetof(ReadSetShared, used),
									  mul_size(sizeof(int), MaxBackends + 1)),
							 &found);
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(LostKey);
	info.entrysize = sizeof(LostRead);
	readset_lost_reads = ShmemInitHash("memtx lost reads", ReadSetCapacity(), ReadSetCapacity(),
							   &info, HASH_ELEM | HASH_BLOBS);
	info.keysize = sizeof(LostTxKey);
	info.entrysize = sizeof(LostTx);
	lost_txs = ShmemInitHash("memtx lost reads by transaction", ReadSetCapacity(), ReadSetCapacity(),
							 &info, HASH_ELEM | HASH_BLOBS);
	if (!found)
	{
		readset_shared->lock = &(GetNamedLWLockTranche("memtx_read_set"))->lock;
		readset_shared->nslots = MaxBackends + 1;
		readset_shared->reserved = memtx_read_set_reserved;
		readset_shared->common = memtx_read_set_buffer;
		readset_shared->common_used = 0;
		readset_shared->pending = 0;
		readset_shared->lost_before_due = false;
		pg_atomic_init_u64(&readset_shared->lost_before, 0);
		memset(readset_shared->used, 0, sizeof(int) * readset_shared->nslots);
		ReadSetLoad();
		/* a start in recovery (a standby, a restore) knows nothing of the old primary's reads */
		if (access("standby.signal", F_OK) == 0 || access("recovery.signal", F_OK) == 0)
			readset_shared->lost_before_due = true;
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

	if (code != 0 || readset_shared == NULL || readset_shared->pending > 0 || readset_shared->lost_before_due ||
		!ReadSetStoppedCleanly())
		return;
	file = AllocateFile(READSET_DUMP_FILE ".tmp", PG_BINARY_W);
	if (file == NULL)
		goto error;
	lost_before = pg_atomic_read_u64(&readset_shared->lost_before);
	n = hash_get_num_entries(readset_lost_reads);
	if (fwrite(header, sizeof(header), 1, file) != 1 ||
		fwrite(&lost_before, sizeof(lost_before), 1, file) != 1 ||
		fwrite(&n, sizeof(n), 1, file) != 1)
		goto error;
	hash_seq_init(&seq, readset_lost_reads);
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

void
ReadSetEnsureLocal(void)
{
	HASHCTL		info;

	if (readset_local)
		return;
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(LocalKey);
	info.entrysize = sizeof(LocalRead);
	info.hcxt = TopMemoryContext;
	readset_local = hash_create("memtx reads not yet durable", 256, &info,
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

	if (readset_nlocal == 0 && (abort ? begun.n == 0 : forgets.n == 0))
		return;
	slot = ReadSetMySlot();
	LWLockAcquire(readset_shared->lock, LW_EXCLUSIVE);
	if (readset_nlocal > 0)
	{
		hash_seq_init(&seq, readset_local);
		while ((e = hash_seq_search(&seq)) != NULL)
		{
			LostKey		key = ReadSetKey(MyDatabaseId, e->key.store, e->key.tx, e->key.record);

			if (subid != InvalidSubTransactionId && e->subid != subid)
				continue;
			if (e->state == RS_HEALS)
			{
				/* its row is durable now: the lost read it stood for goes */
				LostRead   *l = abort ? NULL : hash_search(readset_lost_reads, &key, HASH_FIND, NULL);

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
			hash_search(readset_local, &e->key, HASH_REMOVE, NULL);
			readset_nlocal--;
		}
		readset_shared->pending -= settled;
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
	LWLockRelease(readset_shared->lock);
}

static void
ReadSetXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (readset_nlocal > 0)
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
			if (readset_nlocal > 0)
			{
				hash_seq_init(&seq, readset_local);
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
	if (readset_shared)
		ReadSetMarkAdd(&begun, CatalogStoreId(), tx);
}

void
ReadSetRequire(const char *fn)
{
	if (!readset_shared)
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

	if (!readset_shared)
		return 0;
	if (readset_shared->lost_before_due && !RecoveryInProgress())
	{
		LWLockAcquire(readset_shared->lock, LW_EXCLUSIVE);
		if (readset_shared->lost_before_due)
		{
			FullTransactionId next = ReadNextFullTransactionId();
			FullTransactionId own = GetTopFullTransactionIdIfAny();

			if (FullTransactionIdIsValid(own) && FullTransactionIdPrecedes(own, next))
				next = own;
			pg_atomic_write_u64(&readset_shared->lost_before, U64FromFullTransactionId(next));
			readset_shared->lost_before_due = false;
		}
		LWLockRelease(readset_shared->lock);
	}
	value = pg_atomic_read_u64(&readset_shared->lost_before);
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

void
ReadSetForget(int64 tx)
{
	if (readset_shared)
		ReadSetMarkAdd(&forgets, CatalogStoreId(), tx);
}
