/*
 * fenceadmit.h — the writer admission of fencing (SPEC §12): every write as
 * a role, and every load of a transaction for a call that writes, is
 * admitted here (fenceadmit.c).
 */
#ifndef MEMTX_FENCEADMIT_H
#define MEMTX_FENCEADMIT_H

#include "memtx.h"

/*
 * Take role's writer lock shared and refuse (42501) while the role is
 * fenced; returns its writer epoch.  Every write as a role calls this
 * before its first check (begin, and propose through it; revoke).
 */
extern int64 FenceAdmitWriter(const char *role);

/* Refuse a write by a session whose session user is fenced (42501). */
extern void FenceAdmitSession(const char *agent);

/*
 * Take the writer lock of transaction tx's agent shared, before the call
 * locks tx's row, and return the agent; nothing (NULL) when tx does not
 * exist (the load reports it).
 */
extern char *FenceLockTxnWriter(int64 tx);

/*
 * For resolve accepting record id: take its transaction's writer lock and
 * refuse (42501) when that transaction was opened under an older epoch.
 */
extern void FenceAdmitRecord(int64 id);

#endif							/* MEMTX_FENCEADMIT_H */
