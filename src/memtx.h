/*
 * memtx.h — the vocabulary every memtx file shares: the enums of the SQL
 * catalog in pg_enum order, and the macros over them.  It is the bottom of
 * the include graph: it declares no function and includes no memtx header,
 * so every file can include it (scripts/include-graph; src/README.md).
 * What a file defines is declared in that file's own header: the enum
 * labels in catalog.h, the settings in guc.h, memtx.now() in clock.h.
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

/* Record kinds, in the order of the memtx.kind enum. */
typedef enum MemtxKind
{
	MK_BELIEF,
	MK_SUMMARY,
	MK_PROFILE,
	MK_INDEX_ENTRY,
	MK_SHARED_COPY,
	MK_TOOL_ACTION,
	MK_NKINDS
} MemtxKind;

/* Record scopes, in the order of the memtx.scope enum. */
typedef enum MemtxScope
{
	MSC_PRIVATE,
	MSC_SHARED,
	MSC_PUBLIC,
	MSC_NSCOPES
} MemtxScope;

/* Transaction statuses, in the order of the memtx.tx_status enum. */
typedef enum MemtxTxStatus
{
	MX_OPEN,
	MX_COMMITTED,
	MX_PARTIALLY_COMMITTED,
	MX_ABORTED,
	MX_NSTATUSES
} MemtxTxStatus;

/*
 * Reason codes (SPEC §6), in the order of that list; the last three are
 * reserved for v2.  MR_NONE is "no reason": a check passed.  A reason is a
 * text column in SQL, so it becomes text only where it is written or
 * returned (MemtxReasonName).
 */
typedef enum MemtxReason
{
	MR_NONE = -1,
	MR_LOW_EVIDENCE,
	MR_OUTSIDE_VALIDITY,
	MR_REVOKED_PARENT,
	MR_UNCOMMITTED_PARENT,
	MR_INACTIVE_PARENT,
	MR_PERMISSION_LAUNDERING,
	MR_STALE_LATE_WRITE,
	MR_LOWER_AUTHORITY,
	MR_WRITE_NOT_PERMITTED,
	MR_NEEDS_REVIEW,
	MR_UNSTABLE_DEPENDENCY,
	MR_INVALIDATED,
	MR_IN_FLIGHT_TENTATIVE,
	MR_NO_ACTION_SAFE_SUPPORT,
	MR_INPUT_NOT_VISIBLE,
	MR_INPUT_NOT_ACTION_SAFE,
	MR_INPUTS_REQUIRED,
	MR_ABORTED,
	MR_REVOKED,
	MR_EXPIRED,
	MR_STALE_HEAD,
	MR_FENCED,
	MR_ERASED,
	MR_NREASONS
} MemtxReason;

/* The SQL enums whose labels C knows (catalog.c), in memtx.enum_labels() order. */
typedef enum MemtxEnumType
{
	ME_STATE,
	ME_TIER,
	ME_ISOLATION,
	ME_KIND,
	ME_SCOPE,
	ME_TX_STATUS,
	ME_NTYPES
} MemtxEnumType;

#define MEMTX_IS_ACTIVE(s) ((s) == MS_COMMITTED || (s) == MS_ACTION_SAFE)

#endif							/* MEMTX_H */
