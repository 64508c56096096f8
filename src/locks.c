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
 *      record of one), taken before the call checks the role's writer epoch
 *      — and then, when the session user is another role, the session
 *      user's, since a fence binds the session user too (SPEC §17);
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
 *      slot locks (level 4), both are taken after an intent lock of their
 *      namespace (effect-key intent, proposal intent), shared, in one pass
 *      sorted by key (stage_many locks the ids of its whole batch before
 *      staging any), and escalated the same way.
 *   4. slot locks (commit, resolve): first the namespace's slot-intent
 *      lock, shared, then every slot of the call, exclusive, in one pass
 *      sorted by key, so rival commits serialize without deadlock and the
 *      second adjudicates against the first's result.  A call that would
 *      make this backend hold more than LOCK_KEYS_MAX slot locks of the
 *      namespace in its SQL transaction (counting those earlier calls took)
 *      takes the slot-intent lock exclusive instead, and no slot lock: it
 *      conflicts with every slot holder of the namespace (they hold the
 *      intent lock shared) and with every other escalated call, so it
 *      serializes exactly where its slot locks would have, at the cost of
 *      also waiting for commits on other slots; later calls of the SQL
 *      transaction take no slot lock of the namespace at all.  The
 *      namespace lock (level 2) is not upgraded for this: an upgrade of a
 *      lock that others hold shared deadlocks.
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
 * that needs a new lock fails with 53200 (SPEC §17: no tenant may do that to
 * another).  So the keyed locks memtx holds do not grow with the calls of an
 * SQL transaction: per namespace it touches, a backend holds at most
 * LOCK_KEYS_MAX slot locks, as many proposal locks and as many effect-key
 * locks — a call that would exceed one of these bounds escalates to the
 * kind's intent lock, exclusive, which covers every later call of the SQL
 * transaction — besides one lock per level 0–2 and intent (at most
 * 3 × LOCK_KEYS_MAX + 5 = 53 advisory locks per namespace and role) and the
 * relation locks of its statements (outside PostgreSQL's per-backend fast
 * path: about a dozen, the same for every call).  Row locks (levels 1 and 5:
 * act's inputs, a cascade's descendants, a stage's parents, checked by
 * foreign keys FOR KEY SHARE) live in the tuples, not in the lock table,
 * however many rows a call locks.  Escalating when an SQL transaction
 * already holds the intent lock shared is an upgrade: two sessions
 * escalating in one namespace at once may deadlock, which PostgreSQL detects
 * (40P01); a turn of an agent, a few slots, never escalates.
 *
 * All keys live in memtx's own advisory space: field1 the database, field2
 * 'mt' << 16 | kind (slot, namespace, effect key, slot intent, writer, proposal,
 * proposal intent, effect-key intent), field3 a 32-bit hash of the names,
 * field4 = 3, which keeps them apart from pg_advisory_lock's own keys
 * (field4 1 and 2).  A hash collision only makes two unrelated names share a
 * lock: slower, never wrong.
 */
#include "locks.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/memutils.h"
#include "storage/lock.h"

#define LOCK_SPACE_SLOT			1
#define LOCK_SPACE_NAMESPACE	2
#define LOCK_SPACE_EFFECT		3
#define LOCK_SPACE_SLOT_INTENT	4
#define LOCK_SPACE_WRITER		5
#define LOCK_SPACE_PROPOSAL		6
#define LOCK_SPACE_PROPOSAL_INTENT	7
#define LOCK_SPACE_EFFECT_INTENT	8

/*
 * The most keyed locks of one kind (slots, proposal ids, effect keys) a
 * backend holds in one namespace in one SQL transaction; above it, the
 * namespace's intent lock of the kind, exclusive, stands for all of them.
 * Turns of up to this many slots (nearly all) keep per-slot concurrency.
 */
#define LOCK_KEYS_MAX			16

/*
 * The keyed locks this backend took in its SQL transaction, per kind and
 * namespace (its intent key), so calls escalate on what the backend holds,
 * not only on what one call takes.  Forgotten when the transaction ends; a
 * subtransaction that rolls back releases its locks but leaves the count,
 * which can only make escalation come early.
 */
typedef struct LockCount
{
	int			space;
	uint32		intent;
	int			held;
} LockCount;

static LockCount *counts;
static int	ncounts;
static int	capcounts;

static void
LockXactCallback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		ncounts = 0;
}

void
LockInit(void)
{
	RegisterXactCallback(LockXactCallback, NULL);
}

static LockCount *
LockCountOf(int space, uint32 intent)
{
	for (int i = 0; i < ncounts; i++)
		if (counts[i].space == space && counts[i].intent == intent)
			return &counts[i];
	if (ncounts == capcounts)
	{
		capcounts = Max(capcounts * 2, 8);
		counts = counts ? repalloc(counts, sizeof(LockCount) * capcounts)
			: MemoryContextAlloc(TopMemoryContext, sizeof(LockCount) * capcounts);
	}
	counts[ncounts].space = space;
	counts[ncounts].intent = intent;
	counts[ncounts].held = 0;
	return &counts[ncounts++];
}

/* A 32-bit hash of one to three names: the key of a lock on them. */
static uint32
MemtxHashStrings(const char *a, const char *b, const char *c)
{
	uint32		h = hash_bytes((const unsigned char *) a, strlen(a));

	if (b)
		h = hash_combine(h, hash_bytes((const unsigned char *) b, strlen(b)));
	if (c)
		h = hash_combine(h, hash_bytes((const unsigned char *) c, strlen(c)));
	return h;
}

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

static void LockKeysOrIntent(int intent_space, uint32 intent, int space, uint32 *keys, int n);

void
LockEffectKey(const char *ns, const char *key)
{
	uint32	   *keys = palloc(sizeof(uint32));

	Assert(LockNamespaceHeld(ns, false));
	keys[0] = MemtxHashStrings(ns, key, NULL);
	LockKeysOrIntent(LOCK_SPACE_EFFECT_INTENT, MemtxHashStrings(ns, NULL, NULL),
					 LOCK_SPACE_EFFECT, keys, 1);
}

static int
LockCompareKeys(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * Lock n keys of space (palloc'd; freed here) in one sorted pass of the
 * distinct keys this backend does not hold yet, after the intent lock of
 * their namespace, shared; or, when the backend would then hold more than
 * LOCK_KEYS_MAX keys of the kind in the namespace, the intent lock
 * exclusive instead.  Nothing when the backend holds that already.
 */
static void
LockKeysOrIntent(int intent_space, uint32 intent, int space, uint32 *keys, int n)
{
	LockCount  *count;
	int			nkeys = 0;

	if (LockKeyHeld(intent_space, intent, true))
	{
		pfree(keys);
		return;
	}
	qsort(keys, n, sizeof(uint32), LockCompareKeys);
	for (int i = 0; i < n; i++)
		if ((i == 0 || keys[i] != keys[i - 1]) && !LockKeyHeld(space, keys[i], true))
			keys[nkeys++] = keys[i];
	count = LockCountOf(space, intent);
	if (count->held + nkeys > LOCK_KEYS_MAX)
		LockKey(intent_space, intent, true);
	else if (nkeys > 0)
	{
		LockKey(intent_space, intent, false);
		for (int i = 0; i < nkeys; i++)
			LockKey(space, keys[i], true);
		count->held += nkeys;
	}
	pfree(keys);
}

/*
 * Lock the distinct proposal ids of agent of a call: the proposal-intent
 * lock shared and each id exclusive, or, escalated, the proposal-intent lock
 * exclusive.
 */
void
LockProposals(const char *ns, const char *agent, char **proposals, int n)
{
	uint32		intent = MemtxHashStrings(ns, NULL, NULL);
	uint32	   *keys;

	Assert(LockNamespaceHeld(ns, false));
	if (n == 0)
		return;
	keys = palloc(sizeof(uint32) * n);
	for (int i = 0; i < n; i++)
		keys[i] = MemtxHashStrings(ns, agent, proposals[i]);
	LockKeysOrIntent(LOCK_SPACE_PROPOSAL_INTENT, intent, LOCK_SPACE_PROPOSAL, keys, n);
}

void
LockProposal(const char *ns, const char *agent, const char *proposal)
{
	char	   *one = unconstify(char *, proposal);

	LockProposals(ns, agent, &one, 1);
}

/*
 * Lock the distinct slots of the call: the slot-intent lock shared and each
 * slot exclusive, or, escalated, the slot-intent lock exclusive.
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
