/*
 * registry.c — the source, tool and role-tier registries (SPEC §1, §3, §5).
 *
 * All three are harness operations: a source's authority decides slot
 * adjudication, a tool's reversibility decides the gate, a role's tier its
 * isolation level.  Each call upserts one row.
 */
#include "api.h"

#include "catalog/pg_type.h"
#include "utils/acl.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(memtx_register_source);
Datum
memtx_register_source(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr plan;
	static const Oid types[] = {TEXTOID, FLOAT8OID};
	MemtxCall	call;
	Datum		values[2];

	MemtxRequireArg(fcinfo, 0, "source name");
	MemtxRequireArg(fcinfo, 1, "authority");
	MemtxCheckText(PG_GETARG_TEXT_PP(0), "source name", 256);
	MemtxCheckUnit(PG_GETARG_FLOAT8(1), "authority");

	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "register a source");
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	MemtxExec(MemtxPlan(&plan,
						"INSERT INTO memtx.sources AS s (name, authority) VALUES ($1, $2) "
						"ON CONFLICT (name) DO UPDATE SET authority = excluded.authority, "
						"registered_at = pg_catalog.now()",
						2, types),
			  values, NULL, 0);
	MemtxCallEnd(&call);
	PG_RETURN_VOID();
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
	MemtxCheckText(PG_GETARG_TEXT_PP(0), "tool name", 256);
	if (!PG_ARGISNULL(2))
		MemtxCheckText(PG_GETARG_TEXT_PP(2), "compensator", 256);

	MemtxCallBegin(&call);
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
