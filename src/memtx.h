/*
 * memtx.h — declarations shared by the memtx subsystems.
 */
#ifndef MEMTX_H
#define MEMTX_H

#include "postgres.h"
#include "executor/spi.h"
#include "fmgr.h"

/* Lifecycle states, in the order of the memtx.state enum. */
typedef enum MemtxState
{
	MS_RAW,
	MS_TENTATIVE,
	MS_VALIDATED,
	MS_COMMITTED,
	MS_ACTION_SAFE,
	MS_QUARANTINED,
	MS_SUPERSEDED,
	MS_REVOKED,
	MS_NSTATES
} MemtxState;

/* Risk tiers and isolation levels, in enum order. */
typedef enum MemtxTier
{
	MT_LOW,
	MT_MEDIUM,
	MT_HIGH,
	MT_EXTERNAL_ACTION
} MemtxTier;

typedef enum MemtxIsolation
{
	MI_RAW_READ,
	MI_COMMITTED_READ,
	MI_VERIFIED_READ,
	MI_CAUSALLY_STABLE_READ,
	MI_ACTION_SAFE_READ
} MemtxIsolation;

typedef enum MemtxFlowControl
{
	MF_READ_SET,
	MF_DECLARED
} MemtxFlowControl;

extern const char *const MemtxStateNames[];
extern const char *const MemtxTierNames[];
extern const char *const MemtxIsolationNames[];
extern const char *const MemtxKindNames[];
extern const char *const MemtxScopeNames[];

#define MEMTX_IS_ACTIVE(s) ((s) == MS_COMMITTED || (s) == MS_ACTION_SAFE)

/* guc.c */
extern double memtx_confidence_threshold;
extern double memtx_authority_bypass;
extern double memtx_default_authority;
extern int	memtx_default_tier;
extern char *memtx_harness_role;
extern int	memtx_flow_control;
extern int	memtx_lease_timeout;
extern bool memtx_notify;
extern char *memtx_logical_now;
extern int	memtx_max_staged;
extern void GucInit(void);

/* worker.c */
extern void WorkerInit(void);

/* clock.c */
extern bool memtx_logical_now_set;
extern TimestampTz memtx_logical_now_value;
extern bool ClockParseIso8601(const char *s, TimestampTz *result);
extern TimestampTz MemtxNow(void);

/* lifecycle.c */
extern bool LifecycleLegal(MemtxState from, MemtxState to);
extern MemtxState MemtxStateFromName(const char *name);

#endif							/* MEMTX_H */
