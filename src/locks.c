/*
 * locks.c — the locks memtx takes, and the one order it takes them in.
 *
 * Note about locking.  Every wait in memtx is a heavyweight-lock wait (a row
 * lock or a transaction-scoped advisory lock), so waits show in pg_locks,
 * end with the SQL transaction, respect lock_timeout and deadlock detection,
 * and are testable with isolationtester.  A call takes its locks in this
 * order, never going back to an earlier level:
 *
 *   1. its memtx transaction's row, FOR UPDATE (txn.c, TxnLoad).  Probes
 *      (read, gate) take no row lock; expiry takes the rows of expired
 *      transactions FOR UPDATE SKIP LOCKED, in (namespace, id) order.
 *   2. the namespace lock: shared by calls that write records (stage,
 *      commit, act, resolve accepting), exclusive by cascades (abort,
 *      revoke, resolve rejecting, expiry, and a commit whose transaction
 *      acted on its own staging, which may repair those actions), so a
 *      cascade never interleaves with a commit in its namespace.  A
 *      cascade does not queue ahead of writers while the lock is held
 *      (LockNamespace): it waits for the holders of the moment to end, so a
 *      writer idle in its SQL transaction delays cascades of its namespace,
 *      never other writers.  Expiry waits at most lock_timeout per
 *      namespace and skips a namespace it cannot lock (the worker: a
 *      second; it retries next cycle), so one held namespace does not stop
 *      expiry elsewhere.
 *   3. the effect-key lock (act with an effect key), exclusive, so two
 *      calls with one key serialize and the second sees the first's log row.
 *   4. slot locks (commit, resolve), exclusive, every slot of the call in
 *      one pass sorted by key, so rival commits serialize without deadlock
 *      and the second adjudicates against the first's result.
 *   5. record rows, FOR UPDATE, in id order (cascade roots and descendants,
 *      the record resolve settles).
 *
 *   call                 1    2          3    4    5
 *   begin                -    -          -    -    -
 *   stage                x    shared     -    -    -
 *   read, gate           -    -          -    -    -
 *   commit               x    shared/ex  -    x    x
 *   act                  x    shared     x    -    -
 *   resolve (accept)     -    shared     -    x    x
 *   resolve (reject)     -    exclusive  -    x    x
 *   abort, revoke        x/-  exclusive  -    -    x
 *   expire_transactions  x    exclusive  -    -    x
 *
 * Level 2 taken shared and later wanted exclusive in the same SQL
 * transaction (a commit, then a revoke) is an upgrade that can deadlock
 * against another session doing the same; PostgreSQL detects it (40P01).
 *
 * All keys live in memtx's own advisory space: field1 the database, field2
 * 'mt' << 16 | level, field3 a 32-bit hash of the names, field4 = 3, which
 * keeps them apart from pg_advisory_lock's own keys (field4 1 and 2).  A hash
 * collision only makes two unrelated names share a lock: slower, never wrong.
 */
#include "locks.h"

#include "api.h"

#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"

#define LOCK_SPACE_SLOT			1
#define LOCK_SPACE_NAMESPACE	2
#define LOCK_SPACE_EFFECT		3

static void
LockTag(LOCKTAG *tag, int space, uint32 key)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, 0x6D74 << 16 | space, key, 3);
}

static void
LockKey(int space, uint32 key, bool exclusive)
{
	LOCKTAG		tag;

	LockTag(&tag, space, key);
	(void) LockAcquire(&tag, exclusive ? ExclusiveLock : ShareLock, false, false);
}

static bool
LockKeyHeld(int space, uint32 key, bool exclusive)
{
	LOCKTAG		tag;

	LockTag(&tag, space, key);
	if (LockHeldByMe(&tag, ExclusiveLock))
		return true;
	return !exclusive && LockHeldByMe(&tag, ShareLock);
}

/*
 * The namespace lock.  Shared requests queue like any lock.  An exclusive
 * request (a cascade) does not wait in the lock's queue while others hold
 * the lock: a queued exclusive request makes every later shared request
 * (stage, commit, act of the namespace) queue behind it, so one writer idle
 * in its SQL transaction would freeze the whole namespace.  Instead a cascade
 * takes the lock when it is free and otherwise waits for the transactions
 * holding it at that moment to end (WaitForLockers: a wait on their virtual
 * transaction ids, a heavyweight-lock wait like any other, so it shows in
 * pg_locks, respects lock_timeout and deadlock detection), while writers
 * arriving meanwhile go on.  A round waits for every holder to end, so only
 * continuous traffic of short transactions, never an idle holder, makes a
 * cascade go round more than once; after LOCK_CASCADE_ROUNDS rounds it
 * queues, so such traffic cannot starve it.
 */
#define LOCK_CASCADE_ROUNDS 3

void
LockNamespace(const char *ns, bool exclusive)
{
	uint32		key = MemtxHashStrings(ns, NULL, NULL);
	LOCKTAG		tag;

	if (!exclusive)
	{
		LockKey(LOCK_SPACE_NAMESPACE, key, false);
		return;
	}
	LockTag(&tag, LOCK_SPACE_NAMESPACE, key);
	for (int round = 0; round < LOCK_CASCADE_ROUNDS; round++)
	{
		if (LockAcquire(&tag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL)
			return;
		WaitForLockers(tag, ExclusiveLock, false);
	}
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/* Whether this backend holds the namespace lock (exclusive, or at least shared). */
bool
LockNamespaceHeld(const char *ns, bool exclusive)
{
	return LockKeyHeld(LOCK_SPACE_NAMESPACE, MemtxHashStrings(ns, NULL, NULL), exclusive);
}

void
LockEffectKey(const char *ns, const char *key)
{
	Assert(LockNamespaceHeld(ns, false));
	LockKey(LOCK_SPACE_EFFECT, MemtxHashStrings(ns, key, NULL), true);
}

static int
LockCompareKeys(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

void
LockSlots(const char *ns, char **entities, char **attributes, int n)
{
	uint32	   *keys = palloc(sizeof(uint32) * (n + 1));

	Assert(LockNamespaceHeld(ns, false));
	for (int i = 0; i < n; i++)
		keys[i] = MemtxHashStrings(ns, entities[i], attributes[i]);
	qsort(keys, n, sizeof(uint32), LockCompareKeys);
	for (int i = 0; i < n; i++)
		if (i == 0 || keys[i] != keys[i - 1])
			LockKey(LOCK_SPACE_SLOT, keys[i], true);
	pfree(keys);
}

/* Whether this backend holds the slot's lock. */
bool
LockSlotHeld(const char *ns, const char *entity, const char *attribute)
{
	return LockKeyHeld(LOCK_SPACE_SLOT, MemtxHashStrings(ns, entity, attribute), true);
}
