/*
 * subxact.h — run a piece of work in an internal subtransaction (subxact.c).
 */
#ifndef MEMTX_SUBXACT_H
#define MEMTX_SUBXACT_H

/* needs only postgres.h: a leaf of the include graph (scripts/include-graph) */

/* The work: returns true to keep what it did, false to roll it back. */
typedef bool (*SubxactBody) (void *arg);

/*
 * Run body(arg) in an internal subtransaction and leave it: released when
 * the body keeps its work, rolled back when it does not or when it fails.
 * An error whose SQLSTATE is catch_code (0: none is) is swallowed and false
 * returned; any other is re-thrown after the rollback.  Returns true when
 * the body ran to its end.  The caller's memory context and resource owner
 * are current again on every way out.
 */
extern bool SubxactRun(SubxactBody body, void *arg, int catch_code);

#endif							/* MEMTX_SUBXACT_H */
