/*
 * permissions.c — principals and roles (SPEC §7).
 *
 * Principals are PostgreSQL roles.  Owners, readers and writers are stored
 * as role names and checked by role membership at the time of use, so
 * granting or revoking a role takes effect at once; a name that no longer
 * names a role matches nobody.  The harness is a superuser or a member of
 * the role named by memtx.harness_role.
 */
#include "api.h"

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
 * memtx.can_read(owner, readers, scope): whether the calling role may read a
 * record with this permission block.  Used by row-level security.
 */
PG_FUNCTION_INFO_V1(memtx_can_read);
Datum
memtx_can_read(PG_FUNCTION_ARGS)
{
	Oid			role = GetUserId();
	char	   *scope;

	if (!PG_ARGISNULL(2))
	{
		scope = DatumGetCString(DirectFunctionCall1(enum_out, PG_GETARG_DATUM(2)));
		if (strcmp(scope, "public") == 0)
			PG_RETURN_BOOL(true);
	}
	if (!PG_ARGISNULL(0) && MemtxRoleIsMember(role, TextDatumGetCString(PG_GETARG_DATUM(0))))
		PG_RETURN_BOOL(true);
	if (!PG_ARGISNULL(1) && MemtxRoleInAny(role, PG_GETARG_ARRAYTYPE_P(1)))
		PG_RETURN_BOOL(true);
	PG_RETURN_BOOL(false);
}
