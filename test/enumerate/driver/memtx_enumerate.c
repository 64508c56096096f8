/*
 * memtx_enumerate.c — exhaustive enumeration of memtx protocol states,
 * driven from inside the server.
 *
 * A test tool, not part of the product.  memtx_enumerate.run() searches,
 * depth first, every state that the calls of memtx_enum.actions() reach from
 * the current one within the bounds, and runs memtx.check_invariants() at
 * each state it has not seen before.  The graph is the one the Python driver
 * explores: both ask memtx_enum.actions(max_records, max_tx, alphabet) for
 * the calls enabled in a state and memtx_enum.state() for its canonical text.
 *
 * Checked against the model.  Every call is run as its probe (a statement
 * that returns the call's result in canonical form, ids as labels), and
 * every state keeps a fingerprint of its calls: the sum of a hash of (the
 * call's label, its result or "error SQLSTATE", the digest of the state it
 * leads to) over its calls.  At the end the states are written to a file,
 * one line each (digest, depth, expanded, calls, fingerprint), which
 * test/enumerate/model_enum.py compares with the same walk of the model of
 * SPEC.md: equal lines mean every transition taken here gave the result
 * and reached the state the model predicts.  Digests are the first 16 bytes
 * of the SHA-256 of the canonical text, which the model computes alike.
 *
 * Parts.  With parts > 1 the search below split_depth is shared out: of
 * the states reached at split_depth that the search would expand, part i
 * expands the n-th (in the order of its walk) when n mod parts = i.  Every
 * part runs every call above split_depth, so each state there gets its
 * whole fingerprint in every part; the parts' files together hold every
 * state within the bound (a state several parts reached has the same
 * fingerprint in each).  Two parts use two cores.
 *
 * A transition is one call: BeginInternalSubTransaction, switch to the
 * caller's role (SetUserIdAndSecContext: what GetUserId(), and so memtx,
 * sees), run the statement with SPI, switch back.  A call that raises is a
 * legitimate outcome (counted in errors, the state is unchanged); its
 * subtransaction is rolled back as PL/pgSQL's exception blocks do.  A call
 * that succeeds leads to the state memtx_enum.state() names; when that state
 * is new, or reached by a shorter path than before, the search goes on from
 * it unless at the depth bound.  Then the subtransaction is rolled back, which
 * restores the state the call started from, and the next call runs.
 *
 * Only the subtransactions of the current path are open (at most depth of
 * them, each with the few the call itself opened): PostgreSQL's cache of 64
 * subtransaction xids per backend never overflows, since every one of them
 * is rolled back, and beginning and rolling back one costs as much late in a
 * run as early.  What does grow is the heap: every
 * rolled-back call leaves dead row versions in memtx's tables (and index
 * entries to them), which every later scan reads, and which only VACUUM
 * removes, between SQL transactions; and so does PostgreSQL's memory of the
 * SQL transaction (combo command ids, after-trigger event chunks: tens of
 * bytes a transition, freed at its end).  Hence pause_after: after that many
 * transitions the search unwinds (rolling everything back), keeps the visited
 * set and the path (the position of each call on it) in session memory and
 * returns with done = false; the caller VACUUMs memtx's tables, and resume()
 * replays the path in fresh subtransactions, checking that each call of it
 * reaches the state it reached before, and goes on.
 *
 * Revisits: a depth-bounded depth-first search that prunes every state seen
 * before misses states when it first reaches a state by a long path and later
 * by a shorter one.  The visited set keeps the shortest depth a state was
 * expanded at and expands it again from a shorter one, so the states found
 * are exactly those within depth calls of the start (breadth-first's set);
 * invariants are checked once per state.
 *
 * The visited set holds the digest of each canonical text (128 bits of its
 * SHA-256) with its depth, calls and fingerprint, 40 bytes a state.  A
 * collision would prune a subtree silently: with 64 bits the chance is
 * about 1e-6 at 5.5 million states, with 128 bits it is negligible; the
 * texts themselves (hundreds of bytes each) would cost gigabytes at that
 * scale.  The states file is written at the end, after every
 * subtransaction is gone; the transitions file (one line per transition,
 * for small bounds) as the search goes.
 *
 * Memory: the search lives in a context of its own under TopMemoryContext
 * (it outlives a paused call), freed when it is done or the next run()
 * starts.  The calls of the state at depth d live in a context of that depth,
 * reset when the state is done; everything a transition allocates besides
 * goes to a scratch context reset per transition; SPI tuple tables are freed
 * after use (an aborted subtransaction frees its own).  Memory stays flat
 * however long the run, but for the visited set.
 *
 * Checkpoints.  A long search may outlive its session (a machine restarted,
 * a session ended): run() given a checkpoint file writes, at a pause when
 * checkpoint_seconds of searching have passed since the last one, what
 * resume() needs (the bounds, the figures, the path as call positions and
 * digests, the visited set: 40 bytes a state) to a temporary file renamed
 * over it, so the file always holds one whole checkpoint.  run() with the
 * same bounds and an existing checkpoint file loads it and goes on as
 * resume() does, replaying the path in its database (which must be at the
 * start state: a fresh database with the graph).  What was searched after
 * the last checkpoint is searched again; the figures, time included, are
 * the checkpoint's plus the new session's.  The file is removed when the
 * search is done.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/hashfn.h"
#include "common/sha2.h"
#include "storage/fd.h"
#include <unistd.h>
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

PG_MODULE_MAGIC;


PG_FUNCTION_INFO_V1(memtx_enumerate_run);
PG_FUNCTION_INFO_V1(memtx_enumerate_resume);

typedef struct EnumKey
{
	uint64		h1;
	uint64		h2;
} EnumKey;

typedef struct EnumEntry
{
	EnumKey		key;
	int32		depth;			/* shortest depth it was reached at */
	bool		expanded;		/* its calls were run (and counted) */
	int32		nout;			/* its calls */
	uint64		fp;				/* the sum of its calls' hashes */
	char		status;			/* simplehash's */
} EnumEntry;

#define SH_PREFIX enumset
#define SH_ELEMENT_TYPE EnumEntry
#define SH_KEY_TYPE EnumKey
#define SH_KEY key
#define SH_HASH_KEY(tb, k) ((uint32) (k).h1)
#define SH_EQUAL(tb, a, b) ((a).h1 == (b).h1 && (a).h2 == (b).h2)
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* One call enabled in a state. */
typedef struct EnumAction
{
	Oid			role;			/* InvalidOid: the driver's own */
	char	   *label;			/* the call in canonical form */
	char	   *stmt;			/* its probe */
} EnumAction;

/* Where a run's time goes (reported in a NOTICE at the end). */
typedef enum EnumPhase
{
	EP_ACTIONS,					/* memtx_enum.actions(), once per expanded state */
	EP_CALL,					/* the call itself */
	EP_STATE,					/* memtx_enum.state(), once per successful call */
	EP_CHECK,					/* memtx.check_invariants(), once per new state */
	EP_SUBXACT,					/* beginning and rolling back subtransactions */
	EP_REPLAY,					/* after a pause: the path again */
	EP_COUNT
} EnumPhase;

static const char *const EnumPhaseNames[EP_COUNT] = {
	"actions()", "calls", "state()", "check_invariants()", "subtransactions", "replays"
};

typedef struct Enum
{
	int32		max_records;
	int32		max_tx;
	int32		depth_bound;
	double		seconds;
	int32		parts;			/* the search is shared out among parts */
	int32		part;			/* this one's number, 0 .. parts - 1 */
	int32		split_depth;
	int64		shares;			/* states at split_depth to expand, met so far */
	char	   *states_file;	/* where the states go at the end */
	FILE	   *tfile;			/* every transition, when asked for */
	char	   *checkpoint;		/* where checkpoints go, or NULL */
	double		checkpoint_seconds; /* of searching between two */
	double		checkpoint_at;	/* elapsed at the last one */
	instr_time	start;
	bool		stopped;		/* the time bound was reached */
	int64		pause_after;	/* transitions per call (0: no pause) */
	int64		call_start;		/* transitions when this call began */
	double		elapsed_before; /* seconds spent in earlier calls */
	bool		paused;			/* this call pauses: unwind */
	bool		busy;			/* a call is running (left set by an error) */
	int32		resume_depth;	/* replay the path down to here (-1: none) */
	int32	   *pos;			/* per depth: the call in progress, or next */
	EnumKey    *keys;			/* per depth: the state on the current path */
	bool	   *counting;		/* per depth: its state's calls are counted */

	int64		states;
	int64		transitions;
	int64		errors;
	int64		violations;
	int32		max_depth;
	double		spent[EP_COUNT];	/* seconds per phase */
	int64		expanded;		/* actions() calls */
	instr_time	mark;			/* start of the current phase */

	Oid			user;			/* the driver's role and security context */
	int			sec_context;

	enumset_hash *seen;
	MemoryContext cxt;			/* the search's, in TopMemoryContext */
	MemoryContext *level;		/* per depth: the calls of the state there */
	MemoryContext scratch;		/* per transition */
	const char **path;			/* statements from the start to here */

	Datum		bounds[3];		/* actions()'s arguments */
} Enum;

static void EnumExpand(Enum *e, int depth);
static void EnumClose(Enum *e);

/*
 * The three queries of a transition, prepared once per session (a dropped and
 * re-created memtx_enum is re-planned by the plan cache).
 */
static SPIPlanPtr EnumActionsPlan;
static SPIPlanPtr EnumStatePlan;
static SPIPlanPtr EnumCheckPlan;

static void
EnumPrepare(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	SPIPlanPtr	plan;

	if (*slot != NULL)
		return;
	plan = SPI_prepare(sql, nargs, argtypes);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql,
			 SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	*slot = plan;
}

/*
 * SPI_execute_plan in the caller's memory context (SPI leaves its procedure
 * context current, which lives until SPI_finish).
 */
static int
EnumExec(SPIPlanPtr plan, Datum *args, long limit)
{
	MemoryContext cxt = CurrentMemoryContext;
	int			rc = SPI_execute_plan(plan, args, NULL, false, limit);

	MemoryContextSwitchTo(cxt);
	return rc;
}

static void
EnumMark(Enum *e)
{
	INSTR_TIME_SET_CURRENT(e->mark);
}

/* Adds the time since the last mark to a phase, and marks. */
static void
EnumSpend(Enum *e, EnumPhase phase)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	e->spent[phase] += INSTR_TIME_GET_DOUBLE(now) - INSTR_TIME_GET_DOUBLE(e->mark);
	e->mark = now;
}

/* Seconds spent searching, over every call of this search. */
static double
EnumElapsed(Enum *e)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, e->start);
	return e->elapsed_before + INSTR_TIME_GET_DOUBLE(now);
}

/* The first 16 bytes of the SHA-256 of a state's canonical text. */
static EnumKey
EnumHash(const char *state)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		sum[PG_SHA256_DIGEST_LENGTH];
	EnumKey		key;

	if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) state, strlen(state)) < 0 ||
		pg_cryptohash_final(ctx, sum, sizeof(sum)) < 0)
		elog(ERROR, "could not compute a SHA-256 digest");
	pg_cryptohash_free(ctx);
	key.h1 = pg_ntoh64(*(uint64 *) sum);
	key.h2 = pg_ntoh64(*(uint64 *) (sum + 8));
	return key;
}

/* The digest in hex, as the states file writes it (33 bytes). */
static void
EnumKeyHex(EnumKey key, char *out)
{
	snprintf(out, 33, "%016llx%016llx", (unsigned long long) key.h1,
			 (unsigned long long) key.h2);
}

/*
 * A transition's share of its state's fingerprint: the first 8 bytes (big
 * endian) of sha256(label TAB result TAB target digest in hex).
 */
static uint64
EnumTransitionHash(const char *label, const char *result, EnumKey target)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		sum[PG_SHA256_DIGEST_LENGTH];
	char		hex[33];

	EnumKeyHex(target, hex);
	if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) label, strlen(label)) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) "\t", 1) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) result, strlen(result)) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) "\t", 1) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) hex, 32) < 0 ||
		pg_cryptohash_final(ctx, sum, sizeof(sum)) < 0)
		elog(ERROR, "could not compute a SHA-256 digest");
	pg_cryptohash_free(ctx);
	return pg_ntoh64(*(uint64 *) sum);
}

/* The path of statements to the current state, one per line. */
static char *
EnumPathText(Enum *e, int depth)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < depth; i++)
		appendStringInfo(&buf, "%s%s;", i ? "\n" : "", e->path[i]);
	return buf.data;
}

/* The canonical text of the current state (in the scratch context). */
static char *
EnumState(Enum *e)
{
	char	   *state;

	EnumMark(e);
	if (EnumExec(EnumStatePlan, NULL, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "memtx_enum.state() returned no row");
	state = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (state == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("memtx_enum.state() returned null")));
	SPI_freetuptable(SPI_tuptable);
	EnumSpend(e, EP_STATE);
	return state;
}

/* check_invariants() at a new state; a violation is reported with its path. */
static void
EnumCheck(Enum *e, int depth, const char *state)
{
	bool		isnull;
	int64		n;

	EnumMark(e);
	if (EnumExec(EnumCheckPlan, NULL, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "memtx.check_invariants() count returned no row");
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	EnumSpend(e, EP_CHECK);
	if (n > 0)
	{
		char	   *rows = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);

		e->violations++;
		ereport(WARNING,
				(errmsg("memtx.check_invariants() returned %lld rows after %d calls",
						(long long) n, depth),
				 errdetail("Rows: %s\nState: %s\nPath:\n%s", rows ? rows : "",
						   state, EnumPathText(e, depth))));
	}
	SPI_freetuptable(SPI_tuptable);
}

/*
 * Records the state just reached at depth; returns whether the search goes
 * on from it (new, or reached by a shorter path than before, and, at the
 * split depth, this part's share).
 */
static bool
EnumVisit(Enum *e, int depth, const char *state, EnumKey key)
{
	EnumEntry  *entry;
	bool		found;

	e->keys[depth] = key;
	entry = enumset_insert(e->seen, key, &found);
	if (found)
	{
		if (entry->depth <= depth)
			return false;
		entry->depth = depth;
	}
	else
	{
		entry->depth = depth;
		entry->expanded = false;
		entry->nout = 0;
		entry->fp = 0;
		e->states++;
		if (depth > e->max_depth)
			e->max_depth = depth;
		EnumCheck(e, depth, state);
	}
	if (depth >= e->depth_bound)
		return false;
	if (e->parts > 1 && depth == e->split_depth)
		return (e->shares++ % e->parts) == e->part;
	return true;
}

/*
 * Counts a transition from the state at depth into that state's fingerprint
 * (unless its calls were counted already, when it was expanded before), and
 * writes it to the transitions file.
 */
static void
EnumCount(Enum *e, int depth, EnumAction *a, const char *result, EnumKey target)
{
	if (e->counting[depth])
	{
		EnumEntry  *entry = enumset_lookup(e->seen, e->keys[depth]);

		if (entry == NULL)
			elog(ERROR, "memtx_enumerate: a state on the path is not in the visited set");
		entry->nout++;
		entry->fp += EnumTransitionHash(a->label, result, target);
	}
	if (e->tfile && e->counting[depth])
	{
		char		from[33];
		char		to[33];

		EnumKeyHex(e->keys[depth], from);
		EnumKeyHex(target, to);
		fprintf(e->tfile, "%s\t%s\t%s\t%s\n", from, a->label, result, to);
	}
}

/*
 * Errors the driver must not swallow: a cancel or a shutdown, memory or disk
 * exhausted (the run could not go on meaningfully).
 */
static bool
EnumFatalError(int sqlerrcode)
{
	return ERRCODE_TO_CATEGORY(sqlerrcode) == ERRCODE_OPERATOR_INTERVENTION ||
		sqlerrcode == ERRCODE_OUT_OF_MEMORY || sqlerrcode == ERRCODE_DISK_FULL;
}

/*
 * Runs call a from the state at depth in a subtransaction, counts it, goes
 * on from the state it leads to, then rolls the subtransaction back.  A
 * replay (after a pause) runs a call of the path again: it must succeed and
 * reach the state it reached before, and counts as nothing but time.
 */
static void
EnumStep(Enum *e, int depth, EnumAction *a, bool replay)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	volatile bool ok = false;
	char	   *volatile result = NULL;
	bool		deeper;
	char	   *state;
	EnumKey		key;

	MemoryContextReset(e->scratch);
	if (!replay)
		e->transitions++;
	e->path[depth] = a->stmt;

	EnumMark(e);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(e->scratch);
	EnumSpend(e, replay ? EP_REPLAY : EP_SUBXACT);
	PG_TRY();
	{
		if (OidIsValid(a->role))
			SetUserIdAndSecContext(a->role, e->sec_context);
		if (SPI_execute(a->stmt, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("a probe returned no single row: %s", a->stmt)));
		MemoryContextSwitchTo(e->scratch);
		result = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		if (result == NULL)
			result = "";
		SetUserIdAndSecContext(e->user, e->sec_context);
		SPI_freetuptable(SPI_tuptable);
		EnumSpend(e, replay ? EP_REPLAY : EP_CALL);
		ok = true;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(e->scratch);
		edata = CopyErrorData();
		FlushErrorState();
		EnumSpend(e, EP_CALL);
		/* restores the role too */
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		EnumSpend(e, EP_SUBXACT);
		if (EnumFatalError(edata->sqlerrcode))
			ReThrowError(edata);
		if (replay)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("a call of the path failed when replayed: %s", edata->message),
					 errdetail("Path:\n%s", EnumPathText(e, depth + 1))));
		e->errors++;
		/* memtx never raises without a specific SQLSTATE */
		if (edata->sqlerrcode == ERRCODE_INTERNAL_ERROR ||
			edata->sqlerrcode == ERRCODE_RAISE_EXCEPTION)
		{
			e->violations++;
			ereport(WARNING,
					(errmsg("a call raised an error without a specific SQLSTATE: %s",
							edata->message),
					 errdetail("SQLSTATE %s after %d calls. Path:\n%s",
							   unpack_sql_state(edata->sqlerrcode), depth + 1,
							   EnumPathText(e, depth + 1))));
		}
		/* an error changes nothing: the transition leads back to the state */
		EnumCount(e, depth, a, psprintf("error %s", unpack_sql_state(edata->sqlerrcode)),
				  e->keys[depth]);
	}
	PG_END_TRY();
	if (!ok)
		return;

	state = EnumState(e);
	key = EnumHash(state);
	if (replay)
	{
		if (key.h1 != e->keys[depth + 1].h1 || key.h2 != e->keys[depth + 1].h2)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("a call of the path reached another state when replayed"),
					 errdetail("State: %s\nPath:\n%s", state, EnumPathText(e, depth + 1))));
		deeper = true;
	}
	else
	{
		EnumCount(e, depth, a, result, key);
		deeper = EnumVisit(e, depth + 1, state, key);
	}
	if (deeper && !e->stopped)
	{
		MemoryContextReset(e->scratch);
		MemoryContextSwitchTo(oldcxt);
		EnumExpand(e, depth + 1);
	}

	EnumMark(e);
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(oldcxt);
	CurrentResourceOwner = oldowner;
	EnumSpend(e, EP_SUBXACT);
}

/* Runs every call enabled in the current state, at depth. */
static void
EnumExpand(Enum *e, int depth)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	MemoryContext cxt = e->level[depth];
	EnumAction *actions;
	uint64		n;
	uint64		first = 0;

	CHECK_FOR_INTERRUPTS();
	if (e->seconds > 0 && EnumElapsed(e) >= e->seconds)
	{
		e->stopped = true;
		return;
	}
	/*
	 * After a pause: above its depth, from the call of the path (replayed);
	 * at its depth, from the next call.  A fresh expansion counts the
	 * state's calls unless an earlier one did.
	 */
	if (e->resume_depth >= depth)
		first = e->pos[depth];
	else
	{
		EnumEntry  *entry = enumset_lookup(e->seen, e->keys[depth]);

		e->counting[depth] = entry != NULL && !entry->expanded;
		if (entry != NULL)
			entry->expanded = true;
	}
	if (e->resume_depth == depth)
		e->resume_depth = -1;

	MemoryContextSwitchTo(cxt);
	EnumMark(e);
	e->expanded++;
	if (EnumExec(EnumActionsPlan, e->bounds, 0) != SPI_OK_SELECT)
		elog(ERROR, "memtx_enum.actions() failed");
	n = SPI_processed;
	actions = palloc(sizeof(EnumAction) * Max(n, 1));
	for (uint64 i = 0; i < n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		caller = SPI_getbinval(tup, desc, 1, &isnull);
		Datum		label;
		Datum		stmt;

		actions[i].role = isnull ? InvalidOid :
			get_role_oid(TextDatumGetCString(caller), false);
		label = SPI_getbinval(tup, desc, 2, &isnull);
		stmt = isnull ? (Datum) 0 : SPI_getbinval(tup, desc, 3, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("memtx_enum.actions() returned a null label or probe")));
		actions[i].label = TextDatumGetCString(label);
		actions[i].stmt = TextDatumGetCString(stmt);
	}
	SPI_freetuptable(SPI_tuptable);
	MemoryContextSwitchTo(oldcxt);
	EnumSpend(e, EP_ACTIONS);
	if (e->resume_depth > depth && first >= n)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("memtx_enum.actions() offers fewer calls when replayed")));

	for (uint64 i = first; i < n && !e->stopped && !e->paused; i++)
	{
		bool		replay = depth < e->resume_depth;

		if (!replay && e->pause_after > 0 &&
			e->transitions - e->call_start >= e->pause_after)
		{
			/* the calls above keep theirs: the path to come back to */
			e->paused = true;
			e->resume_depth = depth;
			e->pos[depth] = (int32) i;
			break;
		}
		e->pos[depth] = (int32) i;
		EnumStep(e, depth, &actions[i], replay);
	}
	MemoryContextReset(cxt);
}

/* A NOTICE with the time per transition of each phase. */
static void
EnumProfile(Enum *e, double elapsed)
{
	StringInfoData buf;
	double		rest = elapsed;
	double		per = e->transitions > 0 ? 1e6 / e->transitions : 0;

	initStringInfo(&buf);
	for (int i = 0; i < EP_COUNT; i++)
	{
		appendStringInfo(&buf, "%s %.1f us (%.0f%%), ", EnumPhaseNames[i],
						 e->spent[i] * per, elapsed > 0 ? 100 * e->spent[i] / elapsed : 0);
		rest -= e->spent[i];
	}
	appendStringInfo(&buf, "the driver %.1f us", rest * per);
	ereport(NOTICE,
			(errmsg("time per transition: %.1f us", elapsed * per),
			 errdetail("%s; actions() ran %lld times, check_invariants() %lld times, "
					   "state() %lld times.", buf.data, (long long) e->expanded,
					   (long long) e->states,
					   (long long) (e->transitions - e->errors + 1))));
}

/*
 * Opens a file the server writes, for the driver (a superuser's test tool).
 * One written and closed within a call is opened with AllocateFile, which
 * PostgreSQL closes if the call fails; one written across calls (the
 * transitions file: run() and resume() are separate SQL transactions, whose
 * ends close such files) with plain fopen.
 */
static FILE *
EnumOpen(const char *path, bool across_calls)
{
	FILE	   *f = across_calls ? fopen(path, PG_BINARY_W) : AllocateFile(path, PG_BINARY_W);

	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open \"%s\" for writing: %m", path)));
	return f;
}

/* Writes every state of the search: digest, depth, expanded, calls, fingerprint. */
static void
EnumWriteStates(Enum *e)
{
	FILE	   *f = EnumOpen(e->states_file, false);
	enumset_iterator it;
	EnumEntry  *entry;

	enumset_start_iterate(e->seen, &it);
	while ((entry = enumset_iterate(e->seen, &it)) != NULL)
	{
		char		hex[33];

		EnumKeyHex(entry->key, hex);
		fprintf(f, "%s %d %d %d %016llx\n", hex, entry->depth, entry->expanded ? 1 : 0,
				entry->expanded ? entry->nout : 0,
				(unsigned long long) (entry->expanded ? entry->fp : 0));
	}
	if (FreeFile(f) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write \"%s\": %m", e->states_file)));
}

/* Closes what a search holds open outside memory contexts. */
static void
EnumClose(Enum *e)
{
	if (e->tfile)
	{
		fclose(e->tfile);
		e->tfile = NULL;
	}
}

/*
 * A checkpoint's layout: this header, the alphabet's bytes, then per depth
 * 0 .. depth_bound the call position, the digest and whether the state's
 * calls are counted, then the visited set (EnumSaved each).
 */
#define ENUM_CHECKPOINT_MAGIC "memtx_enumerate checkpoint 1"

/* The fields of Enum a checkpoint carries over, each as X(field). */
#define ENUM_CARRIED(X) \
	X(resume_depth) X(max_depth) X(shares) X(states) X(transitions) X(errors) \
	X(violations) X(expanded)

typedef struct EnumCheckpointHeader
{
	char		magic[32];
	int32		max_records;
	int32		max_tx;
	int32		depth_bound;
	int32		parts;
	int32		part;
	int32		split_depth;
	int32		resume_depth;
	int32		max_depth;
	int32		alphabet_len;
	int64		shares;
	int64		states;
	int64		transitions;
	int64		errors;
	int64		violations;
	int64		expanded;
	int64		entries;
	double		elapsed;
	double		spent[EP_COUNT];
} EnumCheckpointHeader;

typedef struct EnumSaved
{
	EnumKey		key;
	uint64		fp;
	int32		depth;
	int32		nout;
	int32		expanded;
} EnumSaved;

static void
EnumWriteOrFail(FILE *f, const void *data, size_t size, const char *path)
{
	if (size > 0 && fwrite(data, size, 1, f) != 1)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write \"%s\": %m", path)));
}

static void
EnumReadOrFail(FILE *f, void *data, size_t size, const char *path)
{
	if (size > 0 && fread(data, size, 1, f) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("checkpoint file \"%s\" is truncated", path)));
}

/* The search paused, everything rolled back: its checkpoint, elapsed s in. */
static void
EnumWriteCheckpoint(Enum *e, double elapsed)
{
	char	   *tmp = psprintf("%s.tmp", e->checkpoint);
	FILE	   *f = EnumOpen(tmp, false);
	EnumCheckpointHeader h;
	text	   *alphabet = DatumGetTextPP(e->bounds[2]);
	int			n = e->depth_bound + 1;
	enumset_iterator it;
	EnumEntry  *entry;

	memset(&h, 0, sizeof(h));
	strlcpy(h.magic, ENUM_CHECKPOINT_MAGIC, sizeof(h.magic));
	h.max_records = e->max_records;
	h.max_tx = e->max_tx;
	h.depth_bound = e->depth_bound;
	h.parts = e->parts;
	h.part = e->part;
	h.split_depth = e->split_depth;
#define ENUM_SAVE(field) h.field = e->field;
	ENUM_CARRIED(ENUM_SAVE)
#undef ENUM_SAVE
	h.alphabet_len = VARSIZE_ANY_EXHDR(alphabet);
	h.entries = e->seen->members;
	h.elapsed = elapsed;
	memcpy(h.spent, e->spent, sizeof(h.spent));
	EnumWriteOrFail(f, &h, sizeof(h), tmp);
	EnumWriteOrFail(f, VARDATA_ANY(alphabet), h.alphabet_len, tmp);
	EnumWriteOrFail(f, e->pos, sizeof(int32) * n, tmp);
	EnumWriteOrFail(f, e->keys, sizeof(EnumKey) * n, tmp);
	EnumWriteOrFail(f, e->counting, sizeof(bool) * n, tmp);
	enumset_start_iterate(e->seen, &it);
	while ((entry = enumset_iterate(e->seen, &it)) != NULL)
	{
		EnumSaved	saved;

		memset(&saved, 0, sizeof(saved));
		saved.key = entry->key;
		saved.fp = entry->fp;
		saved.depth = entry->depth;
		saved.nout = entry->nout;
		saved.expanded = entry->expanded;
		EnumWriteOrFail(f, &saved, sizeof(saved), tmp);
	}
	if (fflush(f) != 0 || pg_fsync(fileno(f)) != 0 || FreeFile(f) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write \"%s\": %m", tmp)));
	if (rename(tmp, e->checkpoint) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rename \"%s\" to \"%s\": %m", tmp, e->checkpoint)));
	pfree(tmp);
	e->checkpoint_at = elapsed;
}

/*
 * Loads the checkpoint of a search started with e's bounds, if its file
 * exists; returns whether it did (the search then goes on as after a pause).
 */
static bool
EnumReadCheckpoint(Enum *e)
{
	FILE	   *f = AllocateFile(e->checkpoint, PG_BINARY_R);
	EnumCheckpointHeader h;
	char	   *alphabet;
	char	   *mine = text_to_cstring(DatumGetTextPP(e->bounds[2]));
	int			n = e->depth_bound + 1;

	if (f == NULL)
	{
		if (errno == ENOENT)
			return false;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open \"%s\": %m", e->checkpoint)));
	}
	EnumReadOrFail(f, &h, sizeof(h), e->checkpoint);
	if (strncmp(h.magic, ENUM_CHECKPOINT_MAGIC, sizeof(h.magic)) != 0 ||
		h.alphabet_len < 0 || h.alphabet_len > 1000 || h.entries < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("\"%s\" is not a checkpoint of memtx_enumerate", e->checkpoint)));
	alphabet = palloc0(h.alphabet_len + 1);
	EnumReadOrFail(f, alphabet, h.alphabet_len, e->checkpoint);
	if (h.max_records != e->max_records || h.max_tx != e->max_tx ||
		h.depth_bound != e->depth_bound || h.parts != e->parts || h.part != e->part ||
		h.split_depth != e->split_depth || strcmp(alphabet, mine) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("checkpoint file \"%s\" is of another search", e->checkpoint),
				 errdetail("It holds max_records %d, max_tx %d, depth %d, alphabet %s, part %d of %d split at %d.",
						   h.max_records, h.max_tx, h.depth_bound, alphabet, h.part,
						   h.parts, h.split_depth)));
	EnumReadOrFail(f, e->pos, sizeof(int32) * n, e->checkpoint);
	EnumReadOrFail(f, e->keys, sizeof(EnumKey) * n, e->checkpoint);
	EnumReadOrFail(f, e->counting, sizeof(bool) * n, e->checkpoint);
	for (int64 i = 0; i < h.entries; i++)
	{
		EnumSaved	saved;
		EnumEntry  *entry;
		bool		found;

		EnumReadOrFail(f, &saved, sizeof(saved), e->checkpoint);
		entry = enumset_insert(e->seen, saved.key, &found);
		entry->fp = saved.fp;
		entry->depth = saved.depth;
		entry->nout = saved.nout;
		entry->expanded = saved.expanded != 0;
	}
	if (fgetc(f) != EOF)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("checkpoint file \"%s\" has more than its states", e->checkpoint)));
	FreeFile(f);
	if (h.resume_depth < 0 || h.resume_depth > e->depth_bound)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("checkpoint file \"%s\" holds no paused path", e->checkpoint)));
#define ENUM_LOAD(field) e->field = h.field;
	ENUM_CARRIED(ENUM_LOAD)
#undef ENUM_LOAD
	e->elapsed_before = h.elapsed;
	e->checkpoint_at = h.elapsed;
	memcpy(e->spent, h.spent, sizeof(e->spent));
	e->paused = true;
	ereport(NOTICE,
			(errmsg("the search goes on from its checkpoint: %lld states, %lld transitions, %.1f s",
					(long long) h.states, (long long) h.transitions, h.elapsed)));
	return true;
}

/* The search of this session that paused, or whose call failed. */
static Enum *EnumSession;

/*
 * One call of a search: from the start, or after a pause from the path it
 * paused on (replayed in fresh subtransactions).  Returns the row of figures
 * so far; a search that is done is freed.
 */
static Datum
EnumCall(Enum *e, FunctionCallInfo fcinfo)
{
	MemoryContext callercxt = CurrentMemoryContext;
	bool		resume = e->paused;
	TupleDesc	desc;
	Datum		values[8];
	bool		nulls[8] = {false};
	double		elapsed;
	bool		done;
	Oid			argtypes[3] = {INT4OID, INT4OID, TEXTOID};
	char	   *state;
	HeapTuple	tuple;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("memtx_enumerate needs a READ COMMITTED transaction"),
				 errdetail("memtx refuses calls in a transaction with a transaction snapshot.")));
	e->busy = true;
	e->paused = false;
	e->call_start = e->transitions;
	GetUserIdAndSecContext(&e->user, &e->sec_context);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	MemoryContextSwitchTo(e->cxt);
	EnumPrepare(&EnumActionsPlan,
				"SELECT caller, label, probe FROM memtx_enum.actions($1, $2, $3)",
				3, argtypes);
	EnumPrepare(&EnumStatePlan, "SELECT memtx_enum.state()", 0, NULL);
	EnumPrepare(&EnumCheckPlan,
				"SELECT pg_catalog.count(*), pg_catalog.string_agg("
				"pg_catalog.concat_ws(' ', invariant, record_id, detail), '; ') "
				"FROM memtx.check_invariants()", 0, NULL);

	INSTR_TIME_SET_CURRENT(e->start);
	MemoryContextSwitchTo(e->scratch);
	state = EnumState(e);
	MemoryContextSwitchTo(e->cxt);
	if (!resume)
	{
		if (EnumVisit(e, 0, state, EnumHash(state)))
			EnumExpand(e, 0);
	}
	else
	{
		EnumKey		key = EnumHash(state);

		if (key.h1 != e->keys[0].h1 || key.h2 != e->keys[0].h2)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the start state changed since the search paused"),
					 errdetail("State: %s", state)));
		EnumExpand(e, 0);
	}
	elapsed = EnumElapsed(e);
	e->elapsed_before = elapsed;
	done = !e->paused;
	if (done)
	{
		if (e->stopped)
			ereport(NOTICE,
					(errmsg("the search stopped at the time bound of %g s", e->seconds),
					 errdetail("The figures count what was explored until then.")));
		EnumProfile(e, elapsed);
		EnumClose(e);
		if (e->states_file)
			EnumWriteStates(e);
		if (e->checkpoint && !e->stopped && unlink(e->checkpoint) != 0 && errno != ENOENT)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not remove \"%s\": %m", e->checkpoint)));
	}
	else
	{
		if (e->tfile)
			fflush(e->tfile);
		if (e->checkpoint && elapsed - e->checkpoint_at >= e->checkpoint_seconds)
			EnumWriteCheckpoint(e, elapsed);
	}
	SPI_finish();
	MemoryContextSwitchTo(callercxt);

	values[0] = Int64GetDatum(e->states);
	values[1] = Int64GetDatum(e->transitions);
	values[2] = Int64GetDatum(e->errors);
	values[3] = Int64GetDatum(e->violations);
	values[4] = Int32GetDatum(e->max_depth);
	values[5] = Float8GetDatum(elapsed);
	values[6] = Float8GetDatum(elapsed > 0 ? e->transitions / elapsed : 0);
	values[7] = BoolGetDatum(done);
	tuple = heap_form_tuple(desc, values, nulls);
	e->busy = false;
	if (done)
	{
		MemoryContextDelete(e->cxt);
		EnumSession = NULL;
	}
	return HeapTupleGetDatum(tuple);
}

/*
 * memtx_enumerate.run(max_records, max_tx, depth, seconds, pause_after,
 *                     alphabet, states_file, transitions_file, parts, part,
 *                     split_depth, checkpoint, checkpoint_seconds)
 */
Datum
memtx_enumerate_run(PG_FUNCTION_ARGS)
{
	MemoryContext cxt;
	Enum	   *e;
	int32		depth;
	int32		parts;
	int32		part;
	int32		split;

	for (int i = 0; i <= 12; i++)
		if (PG_ARGISNULL(i) && i != 6 && i != 7 && i != 11)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("argument %d of memtx_enumerate.run() must not be null", i + 1)));
	depth = PG_GETARG_INT32(2);
	parts = PG_GETARG_INT32(8);
	part = PG_GETARG_INT32(9);
	split = PG_GETARG_INT32(10);
	if (PG_GETARG_INT32(0) < 0 || PG_GETARG_INT32(1) < 0 || depth < 0 || depth > 1000 ||
		PG_GETARG_INT64(4) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bounds out of range"),
				 errdetail("max_records, max_tx and pause_after must not be negative, depth must be between 0 and 1000.")));
	if (parts < 1 || part < 0 || part >= parts || split < 1 || split > depth)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("parts out of range"),
				 errdetail("parts must be at least 1, part between 0 and parts - 1, split_depth between 1 and depth.")));
	if (!PG_ARGISNULL(11) && (!PG_ARGISNULL(7) || PG_GETARG_INT64(4) <= 0 ||
							  PG_GETARG_FLOAT8(12) < 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a checkpoint needs pause_after > 0, checkpoint_seconds >= 0 and no transitions_file"),
				 errdetail("Checkpoints are written at pauses; a transitions file would repeat what was searched after the last one.")));
	if (EnumSession != NULL)
	{
		EnumClose(EnumSession);
		MemoryContextDelete(EnumSession->cxt);
		EnumSession = NULL;
	}

	cxt = AllocSetContextCreate(TopMemoryContext, "memtx_enumerate",
								ALLOCSET_DEFAULT_SIZES);
	e = MemoryContextAllocZero(cxt, sizeof(Enum));
	e->cxt = cxt;
	e->max_records = PG_GETARG_INT32(0);
	e->max_tx = PG_GETARG_INT32(1);
	e->depth_bound = depth;
	e->seconds = PG_GETARG_FLOAT8(3);
	e->pause_after = PG_GETARG_INT64(4);
	e->parts = parts;
	e->part = part;
	e->split_depth = split;
	e->resume_depth = -1;
	e->bounds[0] = Int32GetDatum(e->max_records);
	e->bounds[1] = Int32GetDatum(e->max_tx);
	e->bounds[2] = PointerGetDatum(MemoryContextAlloc(cxt, VARSIZE_ANY(PG_GETARG_TEXT_PP(5))));
	memcpy(DatumGetPointer(e->bounds[2]), PG_GETARG_TEXT_PP(5), VARSIZE_ANY(PG_GETARG_TEXT_PP(5)));
	if (!PG_ARGISNULL(6))
		e->states_file = MemoryContextStrdup(cxt, text_to_cstring(PG_GETARG_TEXT_PP(6)));
	if (!PG_ARGISNULL(7))
		e->tfile = EnumOpen(text_to_cstring(PG_GETARG_TEXT_PP(7)), true);
	e->seen = enumset_create(cxt, 1024, NULL);
	e->level = MemoryContextAllocZero(cxt, sizeof(MemoryContext) * (depth + 1));
	for (int i = 0; i <= depth; i++)
		e->level[i] = AllocSetContextCreate(cxt, "memtx_enumerate level",
											ALLOCSET_SMALL_SIZES);
	e->scratch = AllocSetContextCreate(cxt, "memtx_enumerate transition",
									   ALLOCSET_DEFAULT_SIZES);
	e->path = MemoryContextAllocZero(cxt, sizeof(char *) * (depth + 1));
	e->pos = MemoryContextAllocZero(cxt, sizeof(int32) * (depth + 1));
	e->keys = MemoryContextAllocZero(cxt, sizeof(EnumKey) * (depth + 1));
	e->counting = MemoryContextAllocZero(cxt, sizeof(bool) * (depth + 1));
	EnumSession = e;
	if (!PG_ARGISNULL(11))
	{
		e->checkpoint = MemoryContextStrdup(cxt, text_to_cstring(PG_GETARG_TEXT_PP(11)));
		e->checkpoint_seconds = PG_GETARG_FLOAT8(12);
		EnumReadCheckpoint(e);
	}
	return EnumCall(e, fcinfo);
}

Datum
memtx_enumerate_resume(PG_FUNCTION_ARGS)
{
	if (EnumSession == NULL || EnumSession->busy || !EnumSession->paused)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no paused search in this session"),
				 errdetail(EnumSession == NULL ? "No search ran, or the last one is done." :
						   "The last call of the search failed."),
				 errhint("Start one with memtx_enumerate.run(..., pause_after => N).")));
	return EnumCall(EnumSession, fcinfo);
}
