/*
 * catalog.c — the contract between this library and the SQL catalog.
 *
 * The SQL objects come from sql/memtx.sql (a fresh install) or from the
 * frozen base sql/memtx--0.1.0.sql and the step scripts after it (an
 * upgraded store), which test/sql/upgrade.sql proves the same; the library is installed separately, so for a while
 * after a package upgrade the two can disagree: the new library runs over a
 * catalog still at an older version until ALTER EXTENSION memtx UPDATE.  The
 * library therefore names every catalog version it can run over
 * (CatalogVersions below) and refuses, with SQLSTATE 55000 and a hint, to run
 * over any other: an older catalog whose tables it no longer understands, or
 * a newer one written for a later library.  A version is listed only while
 * every query and row shape of this library holds on it; a step script that
 * changes a table the C code reads moves the oldest entry forward (or the C
 * code keeps both shapes), and a SQL signature change keeps the old C symbol
 * as well (the pg_stat_statements_1_x pattern).
 *
 * The enum label tables live here too: C uses their indexes as the enum
 * values, so they must equal pg_enum label for label and in order.
 * memtx.enum_labels() exposes them so the catalog lint test can compare.
 * A row's enum column is decoded without text: CatalogEnumIndex maps the
 * value's pg_enum OID to its index through a per-backend table of each
 * type's OIDs, filled from the syscache on first use and forgotten on any
 * invalidation of pg_enum (a DROP and CREATE EXTENSION in one session gets
 * new OIDs).  Reason codes are text in SQL, not an enum; their table is
 * here as well, and so is the one helper that turns a reason into text.
 */
#include "catalog.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "catalog/pg_enum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/rel.h"
#include "utils/syscache.h"

/* Catalog versions this library runs over, oldest first. */
/*
 * 0.3.0's queries use what the 0.2.0 -> 0.3.0 step creates, so older
 * catalogs are refused until they are updated.
 */
static const char *const CatalogVersions[] = {"0.3.0"};

const char *const MemtxStateNames[] = {
	"raw", "tentative", "validated", "committed", "action_safe",
	"quarantined", "superseded", "revoked"
};
const char *const MemtxTierNames[] = {
	"low", "medium", "high", "external_action"
};
const char *const MemtxIsolationNames[] = {
	"raw_read", "committed_read", "verified_read", "causally_stable_read",
	"action_safe_read"
};
const char *const MemtxKindNames[] = {
	"belief", "summary", "profile", "index_entry", "shared_copy", "tool_action"
};
const char *const MemtxScopeNames[] = {
	"private", "shared", "public"
};
const char *const MemtxTxStatusNames[] = {
	"open", "committed", "partially_committed", "aborted"
};
const char *const MemtxReasonNames[] = {
	"low_evidence", "outside_validity", "revoked_parent", "uncommitted_parent",
	"inactive_parent", "permission_laundering", "stale_late_write",
	"lower_authority", "write_not_permitted", "needs_review",
	"unstable_dependency", "invalidated", "in_flight_tentative",
	"no_action_safe_support", "input_not_visible", "input_not_action_safe",
	"inputs_required", "aborted", "revoked", "expired",
	"stale_head", "fenced", "erased"
};

/* The most labels of any memtx enum. */
#define CATALOG_MAX_LABELS 8

typedef struct CatalogEnum
{
	const char *type;
	const char *const *labels;
	int			nlabels;
} CatalogEnum;

/* Indexed by MemtxEnumType. */
static const CatalogEnum CatalogEnums[] = {
	[ME_STATE] = {"state", MemtxStateNames, lengthof(MemtxStateNames)},
	[ME_TIER] = {"risk_tier", MemtxTierNames, lengthof(MemtxTierNames)},
	[ME_ISOLATION] = {"isolation", MemtxIsolationNames, lengthof(MemtxIsolationNames)},
	[ME_KIND] = {"kind", MemtxKindNames, lengthof(MemtxKindNames)},
	[ME_SCOPE] = {"scope", MemtxScopeNames, lengthof(MemtxScopeNames)},
	[ME_TX_STATUS] = {"tx_status", MemtxTxStatusNames, lengthof(MemtxTxStatusNames)},
};

StaticAssertDecl(lengthof(CatalogEnums) == ME_NTYPES,
				 "CatalogEnums must list every MemtxEnumType");
StaticAssertDecl(lengthof(MemtxStateNames) == MS_NSTATES,
				 "MemtxStateNames must name every MemtxState");
StaticAssertDecl(lengthof(MemtxTierNames) == MT_EXTERNAL_ACTION + 1,
				 "MemtxTierNames must name every MemtxTier");
StaticAssertDecl(lengthof(MemtxIsolationNames) == MI_ACTION_SAFE_READ + 1,
				 "MemtxIsolationNames must name every MemtxIsolation");
StaticAssertDecl(lengthof(MemtxKindNames) == MK_NKINDS,
				 "MemtxKindNames must name every MemtxKind");
StaticAssertDecl(lengthof(MemtxScopeNames) == MSC_NSCOPES,
				 "MemtxScopeNames must name every MemtxScope");
StaticAssertDecl(lengthof(MemtxTxStatusNames) == MX_NSTATUSES,
				 "MemtxTxStatusNames must name every MemtxTxStatus");
StaticAssertDecl(lengthof(MemtxReasonNames) == MR_NREASONS,
				 "MemtxReasonNames must name every MemtxReason");
StaticAssertDecl(MS_NSTATES <= CATALOG_MAX_LABELS && MK_NKINDS <= CATALOG_MAX_LABELS,
				 "CATALOG_MAX_LABELS must hold the longest enum");

/* Per type: the pg_enum OID of each label, by index; filled on first use. */
static Oid	CatalogEnumOids[ME_NTYPES][CATALOG_MAX_LABELS];
static bool CatalogEnumFilled[ME_NTYPES];
static bool CatalogEnumCallback = false;

static void
CatalogEnumForget(Datum arg, int cacheid, uint32 hashvalue)
{
	memset(CatalogEnumFilled, 0, sizeof(CatalogEnumFilled));
}

/* Fill type's OID table from the syscache, given one value of the type. */
static void
CatalogEnumFill(MemtxEnumType type, Oid value)
{
	const CatalogEnum *e = &CatalogEnums[type];
	HeapTuple	tup;
	Oid			typid;

	if (!CatalogEnumCallback)
	{
		CacheRegisterSyscacheCallback(ENUMOID, CatalogEnumForget, (Datum) 0);
		CatalogEnumCallback = true;
	}
	tup = SearchSysCache1(ENUMOID, ObjectIdGetDatum(value));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for enum value %u", value);
	typid = ((Form_pg_enum) GETSTRUCT(tup))->enumtypid;
	ReleaseSysCache(tup);
	for (int i = 0; i < e->nlabels; i++)
	{
		tup = SearchSysCache2(ENUMTYPOIDNAME, ObjectIdGetDatum(typid),
							  CStringGetDatum(e->labels[i]));
		if (!HeapTupleIsValid(tup))
			elog(ERROR, "memtx.%s has no label \"%s\"", e->type, e->labels[i]);
		CatalogEnumOids[type][i] = ((Form_pg_enum) GETSTRUCT(tup))->oid;
		ReleaseSysCache(tup);
	}
	CatalogEnumFilled[type] = true;
}

int
CatalogEnumIndex(MemtxEnumType type, Datum value)
{
	Oid			oid = DatumGetObjectId(value);

	for (int pass = 0; pass < 2; pass++)
	{
		if (!CatalogEnumFilled[type] || pass > 0)
			CatalogEnumFill(type, oid);
		for (int i = 0; i < CatalogEnums[type].nlabels; i++)
			if (CatalogEnumOids[type][i] == oid)
				return i;
	}
	elog(ERROR, "enum value %u is not a label of memtx.%s", oid, CatalogEnums[type].type);
	return 0;
}

const char *
MemtxReasonName(MemtxReason reason)
{
	if (reason == MR_NONE)
		return NULL;
	Assert(reason >= 0 && reason < MR_NREASONS);
	return MemtxReasonNames[reason];
}

MemtxReason
MemtxReasonFromName(const char *name)
{
	for (int i = 0; i < MR_NREASONS; i++)
		if (strcmp(MemtxReasonNames[i], name) == 0)
			return (MemtxReason) i;
	return MR_NONE;
}

/*
 * The extversion of memtx in this database, palloc'd; NULL when not
 * installed.  *store is the OID of its pg_extension row.
 */
static char *
CatalogInstalledVersion(Oid *store)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char	   *version = NULL;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("memtx"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = text_to_cstring(DatumGetTextPP(d));
		*store = ((Form_pg_extension) GETSTRUCT(tup))->oid;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

/* The store CatalogCheckVersion found, in the SQL transaction it checked. */
static Oid	checked_store = InvalidOid;

void
CatalogCheckVersion(void)
{
	static LocalTransactionId checked_in = InvalidLocalTransactionId;
	char	   *version;
	int			i;

	if (checked_in == MyProc->lxid && checked_in != InvalidLocalTransactionId)
		return;

	version = CatalogInstalledVersion(&checked_store);
	if (version == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension memtx is not installed in this database")));
	for (i = 0; i < (int) lengthof(CatalogVersions); i++)
	{
		if (strcmp(version, CatalogVersions[i]) == 0)
		{
			checked_in = MyProc->lxid;
			return;
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("memtx library %s cannot run over catalog version %s",
					MEMTX_LIBRARY_VERSION, version),
			 lengthof(CatalogVersions) == 1
			 ? errdetail("This library runs over catalog version %s only.",
						 CatalogVersions[0])
			 : errdetail("This library runs over catalog versions %s to %s.",
						 CatalogVersions[0],
						 CatalogVersions[lengthof(CatalogVersions) - 1]),
			 errhint("Run ALTER EXTENSION memtx UPDATE, or install the memtx library that matches the catalog.")));
}

/*
 * The store: the OID of memtx's pg_extension row in this database, which a
 * DROP and CREATE EXTENSION changes (the transaction ids restart with it).
 */
Oid
CatalogStoreId(void)
{
	CatalogCheckVersion();
	return checked_store;
}

/* memtx.enum_labels(): the enum labels compiled into this library. */
PG_FUNCTION_INFO_V1(memtx_enum_labels);
Datum
memtx_enum_labels(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			t;

	InitMaterializedSRF(fcinfo, 0);
	for (t = 0; t < (int) lengthof(CatalogEnums); t++)
	{
		int			i;

		for (i = 0; i < CatalogEnums[t].nlabels; i++)
		{
			Datum		values[3];
			bool		nulls[3] = {false, false, false};

			values[0] = CStringGetTextDatum(CatalogEnums[t].type);
			values[1] = CStringGetTextDatum(CatalogEnums[t].labels[i]);
			values[2] = Int32GetDatum(i + 1);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}
