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
 * The buffer itself (shared memory, this backend's list, the transaction
 * callbacks, the crash point) is readsetbuf.c, below the call machinery
 * that fixes the crash point and the transactions that end; this file is
 * what writes and checks read_set rows, above them.
 *
 * Locking: one LWLock guards the shared state (readsetbuf.c), held only to
 * look up, copy and account entries; no heavyweight lock is taken here
 * (locks.c).
 */
#include "readset.h"

#include "catalog.h"
#include "fault.h"
#include "permissions.h"
#include "readsetbuf.h"
#include "record.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/snapmgr.h"

static bool exit_flush_registered;

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
	LWLockAcquire(readset_shared->lock, LW_SHARED);
	t = ReadSetLostOf(store, tx);
	if (t)
		held += t->count;
	LWLockRelease(readset_shared->lock);
	if (readset_nlocal > 0)
	{
		hash_seq_init(&seq, readset_local);
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
	LWLockAcquire(readset_shared->lock, LW_EXCLUSIVE);
	charged = ReadSetCharge(slot, units, false);
	if (charged)
		readset_shared->pending += units;
	LWLockRelease(readset_shared->lock);
	if (!charged)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("this session holds too many records read in SQL transactions that have not committed or that rolled back"),
				 errdetail("Each session may keep memtx.read_set_reserved (%d) record ids of such reads, and at most a quarter of the common pool memtx.read_set_buffer (%d) beyond them.",
						   readset_shared->reserved, readset_shared->common),
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
		e = hash_search(readset_local, &key, HASH_ENTER, &found);
		if (found)
		{
			/* the same id twice in one read: one entry */
			if (!lost[i])
			{
				LWLockAcquire(readset_shared->lock, LW_EXCLUSIVE);
				ReadSetUncharge(slot, 1);
				readset_shared->pending--;
				LWLockRelease(readset_shared->lock);
			}
			continue;
		}
		e->subid = GetCurrentSubTransactionId();
		e->state = lost[i] ? RS_HEALS : state;
		readset_nlocal++;
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
	LWLockAcquire(readset_shared->lock, LW_SHARED);
	for (int i = 0; i < n; i++)
	{
		LocalKey	key;
		LostKey		lkey = ReadSetKey(MyDatabaseId, store, t->id, DatumGetInt64(ids[i]));

		memset(&key, 0, sizeof(key));
		key.store = store;
		key.tx = t->id;
		key.record = DatumGetInt64(ids[i]);
		if (readset_local && hash_search(readset_local, &key, HASH_FIND, NULL))
			continue;
		if (XactReadOnly && hash_search(readset_lost_reads, &lkey, HASH_FIND, NULL))
			continue;
		fresh[nfresh++] = ids[i];
	}
	LWLockRelease(readset_shared->lock);
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
	LWLockAcquire(readset_shared->lock, LW_SHARED);
	for (int i = 0; i < nwritten; i++)
	{
		LostKey		lkey = ReadSetKey(MyDatabaseId, store, t->id, DatumGetInt64(written[i]));

		lost[i] = hash_search(readset_lost_reads, &lkey, HASH_FIND, NULL) != NULL;
		nlost += lost[i] ? 1 : 0;
	}
	LWLockRelease(readset_shared->lock);
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

	if (!readset_shared)
		return;
	LWLockAcquire(readset_shared->lock, LW_SHARED);
	t = ReadSetLostOf(CatalogStoreId(), tx);
	if (t != NULL)
	{
		ids = palloc(sizeof(Datum) * t->count);
		for (LostRead *l = t->head; l != NULL; l = l->next)
			ids[n++] = Int64GetDatum(l->key.record);
	}
	LWLockRelease(readset_shared->lock);
	if (n > 0)
		(void) ReadSetWrite(tx, ids, n, &nnew);
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

	if (!readset_shared || MyBackendId == InvalidBackendId)
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

		LWLockAcquire(readset_shared->lock, LW_EXCLUSIVE);
		txs = palloc(sizeof(Datum) * (readset_shared->used[slot] + 1));
		recs = palloc(sizeof(Datum) * (readset_shared->used[slot] + 1));
		hash_seq_init(&seq, readset_lost_reads);
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
		LWLockRelease(readset_shared->lock);

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
		if (LWLockHeldByMe(readset_shared->lock))
			LWLockRelease(readset_shared->lock);
		LWLockAcquire(readset_shared->lock, LW_EXCLUSIVE);
		hash_seq_init(&seq, readset_lost_reads);
		while ((l = hash_seq_search(&seq)) != NULL)
			if (l->slot == slot)
			{
				ReadSetUncharge(slot, 1);
				ReadSetCharge(readset_shared->nslots - 1, 1, true);
				l->slot = readset_shared->nslots - 1;
			}
		LWLockRelease(readset_shared->lock);
		return;
	}
	PG_END_TRY();

	/* written: drop them (a taker may have dropped some meanwhile) */
	LWLockAcquire(readset_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < n; i++)
	{
		LostKey		key = ReadSetKey(MyDatabaseId, store, DatumGetInt64(txs[i]),
									 DatumGetInt64(recs[i]));
		LostRead   *found = hash_search(readset_lost_reads, &key, HASH_FIND, NULL);

		if (found && found->slot == slot)
			ReadSetLostRemove(ReadSetLostOf(store, key.tx), found);
	}
	LWLockRelease(readset_shared->lock);
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
	LWLockAcquire(readset_shared->lock, LW_SHARED);
	values[0] = Int64GetDatum(hash_get_num_entries(readset_lost_reads));
	values[1] = Int64GetDatum(readset_shared->pending);
	values[2] = Int32GetDatum(readset_shared->common);
	values[3] = Int32GetDatum(readset_shared->common_used);
	values[4] = Int32GetDatum(readset_shared->reserved);
	values[5] = Int32GetDatum(readset_shared->used[ReadSetMySlot()]);
	hash_seq_init(&seq, readset_lost_reads);
	while ((l = hash_seq_search(&seq)) != NULL)
		if (l->key.db == MyDatabaseId && l->key.store == store)
			store_lost++;
	LWLockRelease(readset_shared->lock);
	values[6] = Int64GetDatum(store_lost);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
