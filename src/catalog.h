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

/* An enum value (a pg_enum OID) as its index in the C enum. */
extern int	CatalogEnumIndex(MemtxEnumType type, Datum value);

/* A reason's code, NULL for MR_NONE; a code's reason, MR_NONE if unknown. */
extern const char *MemtxReasonName(MemtxReason reason);
extern MemtxReason MemtxReasonFromName(const char *name);

#endif							/* MEMTX_CATALOG_H */
