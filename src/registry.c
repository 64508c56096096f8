/*
 * registry.c — the source, tool and role-tier registries (SPEC §1, §3, §5).
 *
 * All are harness operations: a source's authority decides slot
 * adjudication and its claimants who may stage with it, a tool's
 * reversibility decides the gate, a role's tier its isolation level, a
 * namespace grant who may begin in the namespace.  Each call upserts or
 * deletes one row.
 */
#include "call.h"
#include "permissions.h"

#include "catalog/pg_type.h"
#include "utils/acl.h"
#include "utils/builtins.h"

/*
 * memtx.register_source(name, authority, claimants DEFAULT NULL)
 *
 * The 0.1.0 catalog declared two arguments; the same symbol serves both
 * (claimants is read only when the call has it), as pg_stat_statements does.
 */
PG_FUNCTION_INFO_V1(memtx_register_source);
Datum
memtx_register_source(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, FLOAT8OID, TEXTARRAYOID};
	MemtxCall	call;
	Datum		values[3];
	char		nulls[3] = {' ', ' ', 'n'};

	MemtxRequireArg(fcinfo, 0, "source name");
	MemtxRequireArg(fcinfo, 1, "authority");
	MemtxCheckText(PG_GETARG_TEXT_PP(0), "source name", 256);
	MemtxCheckUnit(PG_GETARG_FLOAT8(1), "authority");
	values[2] = (Datum) 0;
	if (PG_NARGS() > 2 && !PG_ARGISNULL(2))
	{
		MemtxCheckRoleNames(PG_GETARG_ARRAYTYPE_P(2), "claimants");
		values[2] = PG_GETARG_DATUM(2);
		nulls[2] = ' ';
	}

	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "register a source");
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.sources AS s (name, authority, claimants) VALUES ($1, $2, $3) "
						"ON CONFLICT (name) DO UPDATE SET authority = excluded.authority, "
						"claimants = excluded.claimants, registered_at = pg_catalog.now()",
						3, types),
			  values, nulls, 0);
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}

/*
 * A tool name is what LLM providers accept as a function name and leaves
 * the memory_ prefix to memtx.tool_specs (SPEC §15): the rule is
 * memtx.is_tool_name, which tool_specs filters old names by too.
 */
static void
RegistryCheckToolName(Datum name)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID};

	MemtxExec(MemtxPlan(&plan, "SELECT memtx.is_tool_name($1)", 1, types), &name, NULL, 1);
	if (!MemtxGetBool(0, 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid tool name \"%s\"", TextDatumGetCString(name)),
				 errdetail("A tool name is 1 to 64 ASCII letters, digits, underscores or hyphens, and does not begin with \"memory_\"."),
				 errhint("LLM function-calling APIs accept no other names; memory_ names are memtx's own tools.")));
}

PG_FUNCTION_INFO_V1(memtx_register_tool);
Datum
memtx_register_tool(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, BOOLOID, TEXTOID};
	MemtxCall	call;
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};

	MemtxRequireArg(fcinfo, 0, "tool name");
	MemtxRequireArg(fcinfo, 1, "reversible");
	MemtxCallBegin(&call);
	RegistryCheckToolName(PG_GETARG_DATUM(0));
	if (!PG_ARGISNULL(2))
		MemtxCheckText(PG_GETARG_TEXT_PP(2), "compensator", 256);
	MemtxRequireHarness(&call, "register a tool");
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2);
	if (PG_ARGISNULL(2))
		nulls[2] = 'n';
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.tools (name, reversible, compensator) VALUES ($1, $2, $3) "
						"ON CONFLICT (name) DO UPDATE SET reversible = excluded.reversible, "
						"compensator = excluded.compensator, registered_at = pg_catalog.now()",
						3, types),
			  values, nulls, 0);
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(memtx_set_role_tier);
Datum
memtx_set_role_tier(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr upsert;
	static SPIPlanPtr remove;
	static const Oid types[] = {TEXTOID, TEXTOID};
	MemtxCall	call;
	Datum		values[2];
	char	   *rolename;

	MemtxRequireArg(fcinfo, 0, "role");
	rolename = text_to_cstring(PG_GETARG_TEXT_PP(0));

	/* the harness check first: a non-harness learns nothing about roles */
	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "set a role's tier");
	if (!OidIsValid(get_role_oid(rolename, true)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role \"%s\" does not exist", rolename)));
	values[0] = PG_GETARG_DATUM(0);
	if (PG_ARGISNULL(1))
		MemtxExec(MemtxPlan(&remove, "DELETE FROM memtx.role_tiers WHERE role_name = $1", 1, types),
				  values, NULL, 0);
	else
	{
		values[1] = DirectFunctionCall1(textin, DirectFunctionCall1(enum_out, PG_GETARG_DATUM(1)));
		MemtxExec(MemtxPlan(&upsert,
							"INSERT INTO memtx.role_tiers (role_name, tier) VALUES ($1, $2::memtx.risk_tier) "
							"ON CONFLICT (role_name) DO UPDATE SET tier = excluded.tier",
							2, types),
				  values, NULL, 0);
	}
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}

/*
 * Check the (namespace, role) arguments of grant_namespace and
 * revoke_namespace and return them as datums.
 */
static void
RegistryNamespaceArgs(FunctionCallInfo fcinfo, Datum *values)
{
	char	   *ns;

	MemtxRequireArg(fcinfo, 0, "namespace");
	MemtxRequireArg(fcinfo, 1, "role");
	MemtxCheckText(PG_GETARG_TEXT_PP(0), "namespace", 256);
	MemtxCheckText(PG_GETARG_TEXT_PP(1), "role", NAMEDATALEN - 1);
	ns = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (strcmp(ns, MEMTX_OPEN_NAMESPACE) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("namespace \"%s\" is open to every role", MEMTX_OPEN_NAMESPACE),
				 errdetail("It takes no grants.")));
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
}

/* memtx.grant_namespace(namespace, role): members of role may begin there. */
PG_FUNCTION_INFO_V1(memtx_grant_namespace);
Datum
memtx_grant_namespace(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, TEXTOID};
	MemtxCall	call;
	Datum		values[2];

	RegistryNamespaceArgs(fcinfo, values);
	MemtxCheckRoleName(TextDatumGetCString(values[1]), NULL);

	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "grant a namespace");
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.namespace_members (namespace, role_name) VALUES ($1, $2) "
						"ON CONFLICT (namespace, role_name) DO NOTHING",
						2, types),
			  values, NULL, 0);
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}

/*
 * memtx.revoke_namespace(namespace, role): later begins of its members there
 * are refused.  Open transactions run on, and records keep their own
 * permissions; revoking a grant that is not there does nothing.
 */
PG_FUNCTION_INFO_V1(memtx_revoke_namespace);
Datum
memtx_revoke_namespace(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, TEXTOID};
	MemtxCall	call;
	Datum		values[2];

	RegistryNamespaceArgs(fcinfo, values);

	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "revoke a namespace");
	MemtxExec(MemtxPlan(&plan,
						"DELETE FROM memtx.namespace_members WHERE namespace = $1 AND role_name = $2",
						2, types),
			  values, NULL, 0);
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}
