/*
 * permissions.c — principals and roles (SPEC §7).
 *
 * Principals are PostgreSQL roles.  Owners, readers and writers are stored
 * as role names and checked by role membership at the time of use, so
 * granting or revoking a role takes effect at once; a name that no longer
 * names a role matches nobody.  The harness is a superuser or a member of
 * the role named by memtx.harness_role.
 *
 * Namespaces are tenancy: a role may begin in a namespace only as a member
 * of a role granted it (memtx.namespace_members, kept by the harness), or as
 * a harness; namespace "default" is open to every role.  Errors never name
 * what the caller may not read, and a record id the caller may not read
 * answers like one that does not exist.
 */
#include "permissions.h"
#include "catalog.h"
#include "guc.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"

bool
MemtxRoleIsMember(Oid role, const char *rolename)
{
	Oid			target;

	if (rolename == NULL || rolename[0] == '\0')
		return false;
	target = get_role_oid(rolename, true);
	if (!OidIsValid(target))
		return false;
	return is_member_of_role(role, target);
}

bool
MemtxRoleInAny(Oid role, ArrayType *names)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (names == NULL)
		return false;
	deconstruct_array(names, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (!nulls[i] && MemtxRoleIsMember(role, TextDatumGetCString(elems[i])))
			return true;
	return false;
}

bool
MemtxIsHarness(Oid role)
{
	if (superuser_arg(role))
		return true;
	return MemtxRoleIsMember(role, memtx_harness_role);
}

/* memtx.is_harness() → boolean: whether the current role is a harness. */
PG_FUNCTION_INFO_V1(memtx_is_harness);
Datum
memtx_is_harness(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(MemtxIsHarness(GetUserId()));
}

/* Refuse a name that names no role (42704); "what", when given, says where it came from. */
void
MemtxCheckRoleName(const char *rolename, const char *what)
{
	if (OidIsValid(get_role_oid(rolename, true)))
		return;
	if (what)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role \"%s\" in %s does not exist", rolename, what)));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("role \"%s\" does not exist", rolename)));
}

/*
 * Check an array of role names (readers, writers, claimants): one dimension,
 * no NULLs, every name a role.
 */
void
MemtxCheckRoleNames(ArrayType *arr, const char *name)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", name)));
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain nulls", name)));
		MemtxCheckRoleName(TextDatumGetCString(elems[i]), name);
	}
}

void
MemtxRequireHarness(MemtxCall *call, const char *what)
{
	if (!MemtxIsHarness(call->caller))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to %s", what),
				 errdetail("Role \"%s\" is not a harness.", call->caller_name),
				 errhint("Only superusers and members of the role named by memtx.harness_role (\"%s\") may do this.",
						 memtx_harness_role ? memtx_harness_role : "")));
}

/*
 * Whether role may begin in namespace ns: it is "default", the role is a
 * harness, or a member of a role granted the namespace.  Runs inside an API
 * call (SPI connected, as the extension owner).
 */
bool
MemtxNamespaceMember(Oid role, const char *ns)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID};
	Datum		values[1];
	bool		isnull;
	Datum		members;

	if (strcmp(ns, MEMTX_OPEN_NAMESPACE) == 0 || MemtxIsHarness(role))
		return true;
	values[0] = CStringGetTextDatum(ns);
	MemtxExec(MemtxPlan(&plan,
						"SELECT pg_catalog.array_agg(role_name) FROM memtx.namespace_members "
						"WHERE namespace = $1",
						1, types),
			  values, NULL, 1);
	members = MemtxGet(0, 1, &isnull);
	return !isnull && MemtxRoleInAny(role, DatumGetArrayTypeP(members));
}

/*
 * Refuse a read of namespace ns by a role that may not begin there (SPEC
 * §17: namespaces are tenancy for reads too).  The error is the same
 * whether the namespace exists or not, and names it not.
 */
void
MemtxRequireNamespaceReader(MemtxCall *call, const char *ns)
{
	if (!MemtxNamespaceMember(call->caller, ns))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to read this namespace"),
				 errdetail("Role \"%s\" is not a member of the namespace.", call->caller_name),
				 errhint("A harness grants namespaces with memtx.grant_namespace.")));
}

/*
 * memtx.require_namespace_reader(namespace): the check above for the reads
 * written in SQL (memtx.read_as_of); returns nothing, or raises 42501.
 */
PG_FUNCTION_INFO_V1(memtx_require_namespace_reader);
Datum
memtx_require_namespace_reader(PG_FUNCTION_ARGS)
{
	MemtxCall	call;

	MemtxRequireArg(fcinfo, 0, "namespace");
	MemtxCallBeginAudit(&call);
	MemtxRequireNamespaceReader(&call, text_to_cstring(PG_GETARG_TEXT_PP(0)));
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}

/*
 * memtx.can_read(owner, readers, scope): whether the calling role may read a
 * record with this permission block.  Used by row-level security.
 */
PG_FUNCTION_INFO_V1(memtx_can_read);
Datum
memtx_can_read(PG_FUNCTION_ARGS)
{
	Oid			role = GetUserId();

	if (!PG_ARGISNULL(2) && CatalogEnumIndex(ME_SCOPE, PG_GETARG_DATUM(2)) == MSC_PUBLIC)
		PG_RETURN_BOOL(true);
	if (!PG_ARGISNULL(0) && MemtxRoleIsMember(role, TextDatumGetCString(PG_GETARG_DATUM(0))))
		PG_RETURN_BOOL(true);
	if (!PG_ARGISNULL(1) && MemtxRoleInAny(role, PG_GETARG_ARRAYTYPE_P(1)))
		PG_RETURN_BOOL(true);
	PG_RETURN_BOOL(false);
}
