/*
 * catalog.h — what the library knows of the catalog it runs over: the
 * extension versions it supports.  The enum labels compiled into it and
 * CatalogEnumIndex are declared in memtx.h, which every subsystem includes.
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

#endif							/* MEMTX_CATALOG_H */
