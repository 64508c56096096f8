/*
 * catalog.c — the contract between this library and the SQL catalog.
 *
 * The SQL objects come from sql/memtx--0.1.0.sql (the frozen base) and the
 * step scripts after it; the library is installed separately, so for a while
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
#include "utils/fmgroids.h"
#include "utils/rel.h"

/* Catalog versions this library runs over, oldest first. */
/*
 * 0.2.0's queries use the protocol predicates (memtx.is_active, rivals,
 * ancestors, descendants) that the 0.1.0 -> 0.2.0 step creates, so a 0.1.0
 * catalog is refused until it is updated.
 */
static const char *const CatalogVersions[] = {"0.2.0"};

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

typedef struct CatalogEnum
{
	const char *type;
	const char *const *labels;
	int			nlabels;
} CatalogEnum;

static const CatalogEnum CatalogEnums[] = {
	{"state", MemtxStateNames, MS_NSTATES},
	{"risk_tier", MemtxTierNames, lengthof(MemtxTierNames)},
	{"isolation", MemtxIsolationNames, lengthof(MemtxIsolationNames)},
	{"kind", MemtxKindNames, lengthof(MemtxKindNames)},
	{"scope", MemtxScopeNames, lengthof(MemtxScopeNames)},
	{"tx_status", MemtxTxStatusNames, lengthof(MemtxTxStatusNames)},
};

StaticAssertDecl(lengthof(MemtxStateNames) == MS_NSTATES,
				 "MemtxStateNames must name every MemtxState");

/* The extversion of memtx in this database, palloc'd; NULL when not installed. */
static char *
CatalogInstalledVersion(void)
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
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

void
CatalogCheckVersion(void)
{
	static LocalTransactionId checked_in = InvalidLocalTransactionId;
	char	   *version;
	int			i;

	if (checked_in == MyProc->lxid && checked_in != InvalidLocalTransactionId)
		return;

	version = CatalogInstalledVersion();
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
