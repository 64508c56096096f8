/*
 * catalog.h — what the library knows of the catalog it runs over: the
 * extension versions it supports, the enum labels compiled into it, and
 * reason codes as text.
 */
#ifndef MEMTX_CATALOG_H
#define MEMTX_CATALOG_H

#include "memtx.h"

/*
 * Refuse to run over a catalog whose version this library does not know
 * (an ALTER EXTENSION memtx UPDATE is pending, or the library is older than
 * the catalog).  Called by every API entry point; costs one catalog probe per
 * SQL transaction.
 */
extern void CatalogCheckVersion(void);

/* The OID of memtx's pg_extension row: a DROP and CREATE EXTENSION changes it. */
extern Oid	CatalogStoreId(void);

/* The labels of the SQL enums, in pg_enum order (the C enums of memtx.h). */
extern const char *const MemtxStateNames[];
extern const char *const MemtxTierNames[];
extern const char *const MemtxIsolationNames[];
extern const char *const MemtxKindNames[];
extern const char *const MemtxScopeNames[];
extern const char *const MemtxTxStatusNames[];
extern const char *const MemtxReasonNames[];

/*
 * SQL: whether the row alias of memtx.records is retracted (SPEC §4 3a, §6:
 * revoked, or in the revocation registry), as the view memtx.retracted
 * answers for it.  The state is the row's own, not probed again through the
 * view: a probe "retracted.id = alias.id" implies the predicate of the
 * partial index of revoked records, which the planner may then scan whole
 * for the id, its last column, a scan that grows with every revocation (a
 * fresh or unanalysed store: a commit's parent check 0.08 -> 1.6 ms after
 * 4,000 revocations).  A condition with an OR implies no index predicate.
 */
#define MEMTX_IS_RETRACTED(alias) \
	"(" alias ".state = 'revoked' OR EXISTS (" \
	"  SELECT FROM memtx.revocation_registry rr WHERE rr.record_id = " alias ".id))"

/* An enum value (a pg_enum OID) as its index in the C enum. */
extern int	CatalogEnumIndex(MemtxEnumType type, Datum value);

/* A reason's code, NULL for MR_NONE; a code's reason, MR_NONE if unknown. */
extern const char *MemtxReasonName(MemtxReason reason);
extern MemtxReason MemtxReasonFromName(const char *name);

#endif							/* MEMTX_CATALOG_H */
