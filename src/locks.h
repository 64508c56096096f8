/*
 * locks.h — every lock memtx takes, in the one order of locks.c.
 */
#ifndef MEMTX_LOCKS_H
#define MEMTX_LOCKS_H

#include "memtx.h"

extern void LockInit(void);

/* 0. The writer lock of a role: shared by its writing calls, exclusive by fence. */
extern void LockWriter(const char *role, bool exclusive);
extern bool LockWriterHeld(const char *role);

/* 2. The namespace lock: shared by writers, exclusive by cascades. */
extern void LockNamespace(const char *ns, bool exclusive);
extern bool LockNamespaceHeld(const char *ns, bool exclusive);

/* 3. The effect-key lock of act, exclusive. */
extern void LockEffectKey(const char *ns, const char *key);

/* 3. The proposal lock of stage, exclusive (SPEC §10); a batch's in one sorted pass. */
extern void LockProposal(const char *ns, const char *agent, const char *proposal);
extern void LockProposals(const char *ns, const char *agent, char **proposals, int n);

/* 4. Slot locks, exclusive, one sorted pass per call (escalated above a bound). */
extern void LockSlots(const char *ns, char **entities, char **attributes, int n);
extern bool LockSlotHeld(const char *ns, const char *entity, const char *attribute);

#endif							/* MEMTX_LOCKS_H */
