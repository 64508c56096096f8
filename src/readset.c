/*
 * readset.c — the durable read set (SPEC §4 3c, §16 "Durable read set").
 *
 * Under memtx.flow_control = read_set every record a memtx transaction has
 * read is an implicit parent of what it commits, so transcribing a private
 * value into a public record is caught as permission_laundering.  The read
 * set is the table memtx.read_set, written by memtx.read (and memtx.recall)
 * in the caller's SQL transaction.  That alone would not do: when the SQL transaction (or a
 * savepoint) that read rolls back, its read_set rows go with it, yet the
 * rows memtx.read returned have reached the client.  So a read is never
 * forgotten:
 *
 *   - Every record id a read returns is also entered in this backend's list
 *     of reads not yet durable, tagged with the subtransaction that read it,
 *     before the rows are returned.  Each entry holds one unit of a shared
 *     buffer (memtx.read_set_buffer entries), reserved at read time, so the
 *     buffer always has room for every read that may yet be lost; when it is
 *     full the read fails (53400) instead of returning rows it could not
 *     keep.
 *   - When a (sub)transaction aborts, its entries move into the shared
 *     buffer of lost reads (the abort callbacks cannot write tables, but
 *     shared memory outlives the transaction and the session).  When the top
 *     transaction commits, entries whose rows were written are durable and
 *     release their units; entries read in a READ ONLY transaction, which
 *     writes nothing (§16 "Probes write nothing"), move to the buffer too.
 *   - memtx.commit first takes its transaction's lost reads from the buffer
 *     and writes them to memtx.read_set, so check 3c sees them; ending a
 *     transaction (commit, abort, expiry) drops the rest.  Taken entries
 *     join the taker's list, so a taker that rolls back puts them back.
 *
 * Reads of a transaction begun in the same (sub)transaction that rolls back
 * are dropped, from this backend's list and from the buffer (where an inner
 * savepoint's rollback may have put them): that memtx transaction never
 * existed.  memtx.begin drops any
 * lost reads under the id it hands out: they can only be those of a store
 * that is gone (the ids restart when the extension is created again).  A PREPAREd transaction
 * that read is refused (0A000): its outcome is not known when it ends here.
 * What a crash of the server loses is what any shared memory loses; a
 * backend killed by a signal still runs its abort callbacks.  The buffer
 * needs shared_preload_libraries; without it memtx.read refuses to run.
 *
 * Locking: one LWLock guards the buffer, held only to copy entries; no
 * heavyweight lock is taken here (locks.c).
 */
#include "readset.h"

#include "record.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"

typedef struct ReadSetLost
{
	Oid			db;
	int64		tx;
	int64		record;
} ReadSetLost;

typedef struct ReadSetShared
{
	LWLock	   *lock;
	int			capacity;
	int			reserved;		/* units held by backends' lists + nlost */
	int			nlost;
	ReadSetLost lost[FLEXIBLE_ARRAY_MEMBER];
} ReadSetShared;

/* What an entry of this backend's list stands for. */
typedef enum ReadSetState
{
	RS_PENDING,					/* read, no row written: lost unless kept */
	RS_WRITTEN,					/* its read_set row is written in this xact */
	RS_TAKEN					/* taken from the buffer to be dropped */
} ReadSetState;

typedef struct ReadSetLocal
{
	int64		tx;
	int64		record;
	SubTransactionId subid;
	ReadSetState state;
} ReadSetLocal;

typedef struct ReadSetBegun
{
	int64		tx;
	SubTransactionId subid;
} ReadSetBegun;

static int	memtx_read_set_buffer = 131072;
static ReadSetShared *shared;
static shmem_request_hook_type prev_shmem_request;
static shmem_startup_hook_type prev_shmem_startup;

static ReadSetLocal *local;
static int	nlocal;
static int	caplocal;
static ReadSetBegun *begun;
static int	nbegun;
static int	capbegun;

static int	ReadSetTake(int64 tx, ReadSetState state, Datum **ids);

static Size
ReadSetShmemSize(void)
{
	return add_size(offsetof(ReadSetShared, lost),
					mul_size(sizeof(ReadSetLost), memtx_read_set_buffer));
}

static void
ReadSetShmemRequest(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	RequestAddinShmemSpace(ReadSetShmemSize());
	RequestNamedLWLockTranche("memtx_read_set", 1);
}

static void
ReadSetShmemStartup(void)
{
	bool		found;

	if (prev_shmem_startup)
		prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("memtx read set", ReadSetShmemSize(), &found);
	if (!found)
	{
		shared->lock = &(GetNamedLWLockTranche("memtx_read_set"))->lock;
		shared->capacity = memtx_read_set_buffer;
		shared->reserved = 0;
		shared->nlost = 0;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* Room for n more entries in this backend's list (no error: callbacks use it too). */
static void
ReadSetGrowLocal(int n)
{
	if (nlocal + n <= caplocal)
		return;
	caplocal = Max(caplocal * 2, nlocal + n);
	caplocal = Max(caplocal, 64);
	local = local ? repalloc(local, sizeof(ReadSetLocal) * caplocal)
		: MemoryContextAlloc(TopMemoryContext, sizeof(ReadSetLocal) * caplocal);
}

static bool
ReadSetBegunIn(int64 tx, SubTransactionId subid)
{
	for (int i = 0; i < nbegun; i++)
		if (begun[i].tx == tx && (subid == InvalidSubTransactionId || begun[i].subid == subid))
			return true;
	return false;
}

/*
 * Settle the entries that ends(entry) says the ending (sub)transaction
 * owns: on abort they move to the buffer, unless their memtx transaction was
 * begun in what aborts (it never existed); on commit the pending ones move
 * and the others are released.  Other entries stay in the list.  Runs in
 * transaction callbacks: no errors, no allocation.
 */
static void
ReadSetSettle(bool (*ends) (ReadSetLocal *e, SubTransactionId subid),
			  SubTransactionId subid, bool abort)
{
	int			kept = 0;
	int			released = 0;

	if (nlocal == 0)
		return;
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < nlocal; i++)
	{
		ReadSetLocal *e = &local[i];

		if (!ends(e, subid))
		{
			local[kept++] = *e;
			continue;
		}
		if (abort ? !ReadSetBegunIn(e->tx, subid) : e->state == RS_PENDING)
		{
			ReadSetLost *l = &shared->lost[shared->nlost++];

			Assert(shared->nlost <= shared->reserved);
			l->db = MyDatabaseId;
			l->tx = e->tx;
			l->record = e->record;
		}
		else
			released++;
	}
	shared->reserved -= released;
	LWLockRelease(shared->lock);
	nlocal = kept;
}

/*
 * Drop from the buffer the lost reads of the memtx transactions begun in
 * the (sub)transaction that aborts (subid; InvalidSubTransactionId: the top
 * transaction): that memtx transaction never existed.  Reads of it that an
 * inner savepoint lost earlier are in the buffer already, and no commit or
 * abort of the transaction will ever take them.  Runs in transaction
 * callbacks: no errors, no allocation.
 */
static void
ReadSetDropBegun(SubTransactionId subid)
{
	int			kept = 0;
	int			dropped = 0;
	bool		any = false;

	for (int i = 0; i < nbegun && !any; i++)
		any = subid == InvalidSubTransactionId || begun[i].subid == subid;
	if (!any || shared == NULL)
		return;
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < shared->nlost; i++)
	{
		ReadSetLost *l = &shared->lost[i];

		if (l->db == MyDatabaseId && ReadSetBegunIn(l->tx, subid))
			dropped++;
		else
			shared->lost[kept++] = *l;
	}
	shared->nlost = kept;
	shared->reserved -= dropped;
	LWLockRelease(shared->lock);
}

static bool
ReadSetAll(ReadSetLocal *e, SubTransactionId subid)
{
	return true;
}

static bool
ReadSetOfSub(ReadSetLocal *e, SubTransactionId subid)
{
	return e->subid == subid;
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
			ReadSetSettle(ReadSetAll, InvalidSubTransactionId, false);
			nbegun = 0;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			ReadSetSettle(ReadSetAll, InvalidSubTransactionId, true);
			ReadSetDropBegun(InvalidSubTransactionId);
			nbegun = 0;
			break;
		default:
			break;
	}
}

static void
ReadSetSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	switch (event)
	{
		case SUBXACT_EVENT_COMMIT_SUB:
			for (int i = 0; i < nlocal; i++)
				if (local[i].subid == mySubid)
					local[i].subid = parentSubid;
			for (int i = 0; i < nbegun; i++)
				if (begun[i].subid == mySubid)
					begun[i].subid = parentSubid;
			break;
		case SUBXACT_EVENT_ABORT_SUB:
			ReadSetSettle(ReadSetOfSub, mySubid, true);
			ReadSetDropBegun(mySubid);
			{
				int			kept = 0;

				for (int i = 0; i < nbegun; i++)
					if (begun[i].subid != mySubid)
						begun[kept++] = begun[i];
				nbegun = kept;
			}
			break;
		default:
			break;
	}
}

void
ReadSetInit(void)
{
	/* a server-start setting can be defined only while preloading */
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomIntVariable("memtx.read_set_buffer",
							"Entries of the shared buffer that keeps reads of rolled-back SQL transactions.",
							"Every record id memtx.read returns holds one entry until the SQL transaction "
							"that read commits; a read that would not fit fails.",
							&memtx_read_set_buffer,
							131072, 1024, INT_MAX / 2,
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
	if (!shared)
		return;
	if (nbegun == capbegun)
	{
		capbegun = Max(capbegun * 2, 16);
		begun = begun ? repalloc(begun, sizeof(ReadSetBegun) * capbegun)
			: MemoryContextAlloc(TopMemoryContext, sizeof(ReadSetBegun) * capbegun);
	}
	begun[nbegun].tx = tx;
	begun[nbegun].subid = GetCurrentSubTransactionId();
	nbegun++;

	/*
	 * A transaction just begun has read nothing: lost reads under its id
	 * belong to a store that is gone (DROP EXTENSION, then CREATE, restarts
	 * the ids while the buffer lives on).
	 */
	(void) ReadSetTake(tx, RS_TAKEN, NULL);
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

void
ReadSetRemember(int64 tx, const Datum *ids, int n, bool written)
{
	ReadSetRequire("memtx.read");
	if (n == 0)
		return;
	ReadSetGrowLocal(n);
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	if (shared->reserved > shared->capacity - n)
	{
		LWLockRelease(shared->lock);
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many records read in SQL transactions that have not committed"),
				 errdetail("memtx.read_set_buffer (%d) keeps every record id read until the SQL transaction that read it commits.",
						   shared->capacity),
				 errhint("Commit the SQL transactions that read, or raise memtx.read_set_buffer.")));
	}
	shared->reserved += n;
	LWLockRelease(shared->lock);
	for (int i = 0; i < n; i++)
	{
		ReadSetLocal *e = &local[nlocal++];

		e->tx = tx;
		e->record = DatumGetInt64(ids[i]);
		e->subid = GetCurrentSubTransactionId();
		e->state = written ? RS_WRITTEN : RS_PENDING;
	}
}

/* Write read-set rows: transaction tx read ids. */
static void
ReadSetWrite(int64 tx, const Datum *ids, int n)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {INT8OID, INT8ARRAYOID};
	Datum		values[2];

	values[0] = Int64GetDatum(tx);
	values[1] = RecIdsDatum((Datum *) ids, n);
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.read_set (tx_id, record_id, namespace) "
						"SELECT $1, unnest($2), "
						"       (SELECT t.namespace FROM memtx.transactions t WHERE t.id = $1) "
						"ON CONFLICT DO NOTHING",
						2, types),
			  values, NULL, 0);
}

/*
 * A read (memtx.read, memtx.recall) of transaction t returned ids: they join
 * its read set even if this SQL transaction rolls back.  A READ ONLY one
 * writes nothing and leaves them to the shared buffer; otherwise their rows
 * are written and, since the call writes anyway, the lease is renewed.
 */
void
ReadSetJoin(MemtxTxn *t, const Datum *ids, int n)
{
	ReadSetRemember(t->id, ids, n, !XactReadOnly);
	if (n == 0 || XactReadOnly)
		return;
	ReadSetWrite(t->id, ids, n);
	TxnRenewLease(t);
}

/* Move transaction tx's lost reads into this backend's list as state; how many. */
static int
ReadSetTake(int64 tx, ReadSetState state, Datum **ids)
{
	int			first = nlocal;

	if (!shared)
		return 0;
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	if (shared->nlost == 0)
	{
		LWLockRelease(shared->lock);
		return 0;
	}
	for (int i = 0; i < shared->nlost;)
	{
		ReadSetLost *l = &shared->lost[i];

		if (l->db != MyDatabaseId || l->tx != tx)
		{
			i++;
			continue;
		}
		if (nlocal == caplocal)
		{
			/* grow outside the lock; the entry stays until the next pass */
			LWLockRelease(shared->lock);
			ReadSetGrowLocal(Max(shared->nlost, 64));
			LWLockAcquire(shared->lock, LW_EXCLUSIVE);
			continue;
		}
		local[nlocal].tx = tx;
		local[nlocal].record = l->record;
		local[nlocal].subid = GetCurrentSubTransactionId();
		local[nlocal].state = state;
		nlocal++;
		*l = shared->lost[--shared->nlost];
	}
	LWLockRelease(shared->lock);
	if (ids && nlocal > first)
	{
		*ids = palloc(sizeof(Datum) * (nlocal - first));
		for (int i = first; i < nlocal; i++)
			(*ids)[i - first] = Int64GetDatum(local[i].record);
	}
	return nlocal - first;
}

void
ReadSetRecover(int64 tx)
{
	Datum	   *ids = NULL;
	int			first = nlocal;
	int			n = ReadSetTake(tx, RS_PENDING, &ids);

	if (n == 0)
		return;
	ReadSetWrite(tx, ids, n);
	for (int i = first; i < nlocal; i++)
		local[i].state = RS_WRITTEN;
}

void
ReadSetForget(int64 tx)
{
	(void) ReadSetTake(tx, RS_TAKEN, NULL);
}
