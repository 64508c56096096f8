/*
 * permissions.h — principals, roles, the harness and namespace tenancy
 * (SPEC §7), as the calls check them (permissions.c).
 */
#ifndef MEMTX_PERMISSIONS_H
#define MEMTX_PERMISSIONS_H

#include "call.h"

/* Role helpers. */
extern bool MemtxIsHarness(Oid role);
extern void MemtxRequireHarness(MemtxCall *call, const char *what);
extern bool MemtxRoleIsMember(Oid role, const char *rolename);
extern bool MemtxRoleInAny(Oid role, ArrayType *names);
extern void MemtxCheckRoleName(const char *rolename, const char *what);
extern void MemtxCheckRoleNames(ArrayType *arr, const char *name);

/* Namespace tenancy: "default" is open to every role. */
#define MEMTX_OPEN_NAMESPACE "default"
extern bool MemtxNamespaceMember(Oid role, const char *ns);
extern void MemtxRequireNamespaceReader(MemtxCall *call, const char *ns);

#endif							/* MEMTX_PERMISSIONS_H */
