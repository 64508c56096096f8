/*
 * locks.c — the locks memtx takes, and the one order it takes them in.
 *
 * Note about locking.  Every wait in memtx is a heavyweight-lock wait (a row
 * lock or a transaction-scoped advisory lock), so waits show in pg_locks,
 * end with the SQL transaction, respect lock_timeout and deadlock detection,
 * and are testable with isolationtester.  A call takes its locks in this
 * order, never going back to an earlier level:
 *
 *   0. the writer lock of a role (fence.c): shared by every call that writes
 *      as the role or in one of its transactions (begin of its transaction,
 *      stage, commit, act, abort of one, revoke by it, resolve accepting a
 *      record of one), taken before the call checks the role's writer epoch;
 *      exclusive by fence and unfence, which change the epoch.  So a call
 *      racing a fence of its role either holds the lock first and completes
 *      before the fence (which waits for it), or waits and then sees the new
 *      epoch and fails.  A call on a transaction learns the transaction's
 *      agent (immutable) from an unlocked read before it takes this lock.
 *      Probes (read, gate) take none: they write nothing that a fence could
 *      have to undo, and they check the epoch in the statement that reads
 *      the transaction.
 *   1. its memtx transaction's row, FOR UPDATE (txn.c, TxnLoad).  act also
 *      takes FOR SHARE the rows of the other transactions whose tentative
 *      records its inputs are or descend from (a raw_read pin), all these
 *      rows in one pass in id order (TxnLoadSharing): the commit of such a
 *      transaction waits for the act and then repairs its action if it
 *      quarantines the input, or the act waits for the commit.  Probes
 *      (read, gate) take no row lock; expiry takes the rows of expired
 *      transactions FOR UPDATE SKIP LOCKED, in (namespace, id) order.
 *   2. the namespace lock: shared by calls that write records (stage,
 *      commit, act, resolve accepting), exclusive by cascades (abort,
 *      revoke, resolve rejecting, expiry, and a commit with a tool action
 *      below its tentative records, which may repair it), so a
 *      cascade never interleaves with a commit in its namespace.  A
 *      cascade does not queue ahead of writers while the lock is held
 *      (LockNamespace): it waits for the holders of the moment to end, so a
 *      writer idle in its SQL transaction delays cascades of its namespace,
 *      never other writers.  Expiry waits at most lock_timeout per
 *      namespace and skips a namespace it cannot lock (the worker: a
 *      second; it retries next cycle), so one held namespace does not stop
 *      expiry elsewhere.
 *   3. the effect-key lock (act with an effect key), exclusive, so two
 *      calls with one key serialize and the second sees the first's log row;
 *      or the proposal lock (stage with a proposal id), exclusive, so two
 *      stages under one id serialize and the second sees the first's record
 *      (a retry) or, when the first rolled back, binds the id itself.  Like
 *      slot locks (level 4), proposal locks are taken after the namespace's
 *      proposal-intent lock, shared, in one pass sorted by key (stage_many
 *      locks the ids of its whole batch before staging any), and above
 *      LOCK_SLOTS_MAX distinct ids the proposal-intent lock is taken
 *      exclusive instead, so a batch holds a bounded number of locks.
 *   4. slot locks (commit, resolve): first the namespace's slot-intent
 *      lock, shared, then every slot of the call, exclusive, in one pass
 *      sorted by key, so rival commits serialize without deadlock and the
 *      second adjudicates against the first's result.  A call with more
 *      than LOCK_SLOTS_MAX distinct slots takes the slot-intent lock
 *      exclusive instead, and no slot lock: it conflicts with every slot
 *      holder of the namespace (they hold the intent lock shared) and with
 *      every other escalated call, so it serializes exactly where its slot
 *      locks would have, at the cost of also waiting for commits on other
 *      slots.  The namespace lock (level 2) is not upgraded for this: an
 *      upgrade of a lock that others hold shared deadlocks.
 *   5. record rows, FOR UPDATE, in id order (cascade roots and descendants,
 *      the record resolve settles).
 *   6. a namespace's receipt chain head (memtx.receipt_heads), FOR UPDATE,
 *      in namespace order: taken only by memtx.chain_receipts (the worker,
 *      verify_receipts), which takes no other lock.  Calls that make a
 *      disposition append their receipt without it (receipt.c), so no
 *      writer ever waits for the chain.
 *
 *   call                 0    1    2          3    4    5
 *   begin                s    -    -          -    -    -
 *   stage, stage_many    s    x    shared     x    -    -
 *   read, gate           -    -    -          -    -    -
 *   commit               s    x    shared/ex  -    x    x
 *   act                  s    x+s  shared     x    -    -
 *   resolve (accept)     s    -    shared     -    x    x
 *   resolve (reject)     -    -    exclusive  -    x    x
 *   abort, revoke        s    x/-  exclusive  -    -    x
 *   expire_transactions  -    x    exclusive  -    -    x
 *   fence                x    x    exclusive  -    -    x
 *   unfence              x    -    -          -    -    -
 *   embed (memtx_vector) s    -    shared     -    -    -
 *
 * Level 2 taken shared and later wanted exclusive in the same SQL
 * transaction (a commit, then a revoke) is an upgrade that can deadlock
 * against another session doing the same; PostgreSQL detects it (40P01).
 * So is a small commit followed by an escalated one in one SQL transaction
 * (the slot-intent lock, shared, then exclusive), and a call of one role
 * after a call of another in one SQL transaction racing a fence (level 0
 * after level 1).  A fence takes the namespace lock of each namespace where
 * the role has an open transaction, in namespace order.
 *
 * The shared lock table.  Every heavyweight lock held takes an entry in a
 * table shared by all databases of the cluster, sized max_locks_per_transaction
 * × (max_connections + ...); when it is full, every session of every database
 * that needs a new lock fails with 53200.  So no memtx call holds a number of
 * locks that grows with its input: a commit holds at most LOCK_SLOTS_MAX slot
 * locks plus its levels 0–3 and the relation locks of its statements (about
 * a dozen outside PostgreSQL's per-backend fast path), well under the default
 * max_locks_per_transaction of 64.  Row locks (levels 1 and 5: act's inputs,
 * a cascade's descendants, a stage's parents, checked by foreign keys FOR KEY
 * SHARE) live in the tuples, not in the lock table, however many rows a call
 * locks.
 *
 * All keys live in memtx's own advisory space: field1 the database, field2
 * 'mt' << 16 | kind (slot, namespace, effect key, slot intent, writer, proposal,
 * proposal intent), field3 a 32-bit hash of the names, field4 = 3, which
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
#define LOCK_SPACE_SLOT_INTENT	4
#define LOCK_SPACE_WRITER		5
#define LOCK_SPACE_PROPOSAL		6
#define LOCK_SPACE_PROPOSAL_INTENT	7

/*
 * The most slot locks one call takes; above it, the namespace's slot-intent
 * lock exclusive stands for all of them.  Commits of up to this many slots
 * (nearly all) keep per-slot concurrency.
 */
#define LOCK_SLOTS_MAX			16

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

/* The writer lock of a role: shared by its writing calls, exclusive by fence and unfence. */
void
LockWriter(const char *role, bool exclusive)
{
	LockKey(LOCK_SPACE_WRITER, MemtxHashStrings(role, NULL, NULL), exclusive);
}

bool
LockWriterHeld(const char *role)
{
	return LockKeyHeld(LOCK_SPACE_WRITER, MemtxHashStrings(role, NULL, NULL), false);
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

/*
 * Lock n keys of space (palloc'd; freed here) in one sorted pass of distinct
 * keys after the intent lock of their namespace, shared; or, above
 * LOCK_SLOTS_MAX distinct keys, the intent lock exclusive instead.
 */
static void
LockKeysOrIntent(int intent_space, uint32 intent, int space, uint32 *keys, int n)
{
	int			nkeys = 0;

	qsort(keys, n, sizeof(uint32), LockCompareKeys);
	for (int i = 0; i < n; i++)
		if (i == 0 || keys[i] != keys[i - 1])
			keys[nkeys++] = keys[i];
	if (nkeys > LOCK_SLOTS_MAX)
		LockKey(intent_space, intent, true);
	else
	{
		LockKey(intent_space, intent, false);
		for (int i = 0; i < nkeys; i++)
			LockKey(space, keys[i], true);
	}
	pfree(keys);
}

/*
 * Lock the distinct proposal ids of a call: the proposal-intent lock shared
 * and each id exclusive, or above LOCK_SLOTS_MAX the proposal-intent lock
 * exclusive.  Ids an escalated lock of this backend covers take nothing more.
 */
void
LockProposals(const char *ns, char **proposals, int n)
{
	uint32		intent = MemtxHashStrings(ns, NULL, NULL);
	uint32	   *keys;

	Assert(LockNamespaceHeld(ns, false));
	if (n == 0 || LockKeyHeld(LOCK_SPACE_PROPOSAL_INTENT, intent, true))
		return;
	keys = palloc(sizeof(uint32) * n);
	for (int i = 0; i < n; i++)
		keys[i] = MemtxHashStrings(ns, proposals[i], NULL);
	LockKeysOrIntent(LOCK_SPACE_PROPOSAL_INTENT, intent, LOCK_SPACE_PROPOSAL, keys, n);
}

void
LockProposal(const char *ns, const char *proposal)
{
	char	   *one = unconstify(char *, proposal);

	LockProposals(ns, &one, 1);
}

/*
 * Lock the distinct slots of the call: the slot-intent lock shared and each
 * slot exclusive, or above LOCK_SLOTS_MAX the slot-intent lock exclusive.
 */
void
LockSlots(const char *ns, char **entities, char **attributes, int n)
{
	uint32	   *keys = palloc(sizeof(uint32) * (n + 1));

	Assert(LockNamespaceHeld(ns, false));
	for (int i = 0; i < n; i++)
		keys[i] = MemtxHashStrings(ns, entities[i], attributes[i]);
	LockKeysOrIntent(LOCK_SPACE_SLOT_INTENT, MemtxHashStrings(ns, NULL, NULL),
					 LOCK_SPACE_SLOT, keys, n);
}

/* Whether this backend holds the slot's lock, or its namespace's escalated one. */
bool
LockSlotHeld(const char *ns, const char *entity, const char *attribute)
{
	uint32		intent = MemtxHashStrings(ns, NULL, NULL);

	if (LockKeyHeld(LOCK_SPACE_SLOT_INTENT, intent, true))
		return true;
	return LockKeyHeld(LOCK_SPACE_SLOT_INTENT, intent, false) &&
		LockKeyHeld(LOCK_SPACE_SLOT, MemtxHashStrings(ns, entity, attribute), true);
}
