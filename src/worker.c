/*
 * worker.c — background workers that expire abandoned memtx transactions.
 *
 * The gate blocks every irreversible tool call while a tentative record is in
 * flight, so an agent that dies mid-transaction would stall every other agent.
 * Each open transaction therefore holds a lease (SPEC §3), and something must
 * abort the transactions whose lease ran out: memtx.expire_transactions().
 * Anyone may run it on demand (cron, pg_cron); with
 * shared_preload_libraries = 'memtx' these workers run it on their own.
 *
 * Two kinds of process:
 *
 *   launcher   one static worker, registered at preload.  It connects to no
 *              database (shared catalogs only), reads memtx.databases and
 *              keeps one per-database worker running for each listed
 *              database: it starts missing ones, stops unlisted ones after a
 *              reload, and restarts a worker that exited, at most once per
 *              MEMTX_WORKER_RESTART_DELAY.  bgw_restart_time brings the
 *              launcher itself back if it fails.
 *   worker     one dynamic worker per database.  Every memtx.worker_naptime
 *              seconds, if the extension is installed in its database, it
 *              lists the namespaces with expired transactions and runs
 *              memtx.expire_transactions(namespace) for each in its own
 *              transaction, waiting at most MEMTX_WORKER_LOCK_WAIT for a
 *              namespace's lock (a writer idle in its SQL transaction holds
 *              it; that namespace is retried next cycle), and logs what it
 *              expired.
 *
 * Per-database workers are registered with BGW_NEVER_RESTART: the launcher
 * supervises them (bgw_notify_pid wakes it when one starts or stops), so
 * after a crash-and-restart of the server the postmaster forgets them and the
 * restarted launcher starts a fresh set, never a duplicate.  When the
 * launcher exits it asks its workers to stop for the same reason.
 *
 * Before expiry, each cycle chains the receipts committed since the last
 * one (memtx.chain_receipts, one transaction), so receipts get their seq and
 * hashes within a naptime of their commit without any writer waiting.
 *
 * An error in an expiry run (a lock timeout, a missing function after a
 * partial upgrade) is reported and the run is retried one naptime later; it
 * does not bring the worker down.  Expiry is one SQL transaction per
 * namespace, so a run interrupted by a crash leaves nothing half done, and
 * writers of a namespace wait for no other namespace's expiry.
 */
#include "memtx.h"
#include "worker.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

/* A worker that exited is started again no sooner than this after its start. */
#define MEMTX_WORKER_RESTART_DELAY	5000	/* ms */
/* The launcher looks again for listed databases that did not exist. */
#define MEMTX_LAUNCHER_RECHECK		60000	/* ms */
/* How long an expiry waits for a namespace's lock before skipping it. */
#define MEMTX_WORKER_LOCK_WAIT		"1s"
/* How many expired ids one log line lists. */
#define MEMTX_WORKER_LOG_IDS		50

char	   *memtx_databases = NULL;
int			memtx_worker_naptime = 10;

/* The launcher's view of one listed database. */
typedef struct WorkerSlot
{
	char		dbname[NAMEDATALEN];
	BackgroundWorkerHandle *handle; /* NULL while no worker is registered */
	TimestampTz started_at;
	bool		listed;			/* in memtx.databases right now */
	bool		stopping;		/* asked to stop, not gone yet */
	bool		warned_missing;
} WorkerSlot;

static List *launcher_slots = NIL;

/* Accept what SplitIdentifierString accepts, as search_path does. */
static bool
WorkerCheckDatabases(char **newval, void **extra, GucSource source)
{
	char	   *raw;
	List	   *names;
	bool		ok;

	raw = pstrdup(*newval ? *newval : "");
	ok = SplitIdentifierString(raw, ',', &names);
	list_free(names);
	pfree(raw);
	if (!ok)
	{
		GUC_check_errdetail("List syntax is invalid.");
		return false;
	}
	return true;
}

/* Defines the worker settings and, at preload, registers the launcher. */
void
WorkerInit(void)
{
	BackgroundWorker bgw;

	DefineCustomStringVariable("memtx.databases",
							   "Databases in which a background worker expires abandoned memtx transactions and chains receipts.",
							   "Comma-separated database names; needs shared_preload_libraries = 'memtx'. Empty: no workers.",
							   &memtx_databases,
							   "",
							   PGC_SIGHUP, GUC_LIST_INPUT,
							   WorkerCheckDatabases, NULL, NULL);

	DefineCustomIntVariable("memtx.worker_naptime",
							"Time between two expiry runs of a memtx background worker.",
							NULL,
							&memtx_worker_naptime,
							10, 1, 24 * 3600,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);

	if (!process_shared_preload_libraries_in_progress)
		return;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 10;
	strlcpy(bgw.bgw_library_name, "memtx", BGW_MAXLEN);
	strlcpy(bgw.bgw_function_name, "memtx_launcher_main", BGW_MAXLEN);
	strlcpy(bgw.bgw_name, "memtx launcher", BGW_MAXLEN);
	strlcpy(bgw.bgw_type, "memtx launcher", BGW_MAXLEN);
	bgw.bgw_main_arg = (Datum) 0;
	bgw.bgw_notify_pid = 0;
	RegisterBackgroundWorker(&bgw);
}

/* ---------------------------------------------------------------- launcher */

static WorkerSlot *
LauncherFindSlot(const char *dbname)
{
	ListCell   *lc;

	foreach(lc, launcher_slots)
	{
		WorkerSlot *slot = (WorkerSlot *) lfirst(lc);

		if (strcmp(slot->dbname, dbname) == 0)
			return slot;
	}
	return NULL;
}

/* Marks exactly the databases named in memtx.databases as listed. */
static void
LauncherReadDatabases(void)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	char	   *raw = pstrdup(memtx_databases ? memtx_databases : "");
	List	   *names;
	ListCell   *lc;

	foreach(lc, launcher_slots)
		((WorkerSlot *) lfirst(lc))->listed = false;

	/* The check hook has vetted the syntax. */
	if (!SplitIdentifierString(raw, ',', &names))
		names = NIL;

	foreach(lc, names)
	{
		const char *name = (const char *) lfirst(lc);
		WorkerSlot *slot = LauncherFindSlot(name);

		if (name[0] == '\0')
			continue;
		if (slot == NULL)
		{
			slot = palloc0(sizeof(WorkerSlot));
			strlcpy(slot->dbname, name, NAMEDATALEN);
			launcher_slots = lappend(launcher_slots, slot);
		}
		slot->listed = true;
	}
	list_free(names);
	pfree(raw);
	MemoryContextSwitchTo(oldcxt);
}

/*
 * The database's OID, or InvalidOid when it does not exist or does not allow
 * connections.  Without a database of its own the launcher can only scan
 * the shared catalog sequentially, as the autovacuum launcher does.
 */
static Oid
LauncherDatabaseOid(const char *dbname)
{
	Oid			dboid = InvalidOid;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (strcmp(NameStr(db->datname), dbname) == 0 && db->datallowconn)
		{
			dboid = db->oid;
			break;
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
	return dboid;
}

/* Registers the worker for one database; false when no slot was free. */
static bool
LauncherStartWorker(WorkerSlot *slot, Oid dboid)
{
	BackgroundWorker bgw;
	BackgroundWorkerHandle *handle;
	MemoryContext oldcxt;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(bgw.bgw_library_name, "memtx", BGW_MAXLEN);
	strlcpy(bgw.bgw_function_name, "memtx_worker_main", BGW_MAXLEN);
	snprintf(bgw.bgw_name, BGW_MAXLEN, "memtx worker for database %s", slot->dbname);
	strlcpy(bgw.bgw_type, "memtx worker", BGW_MAXLEN);
	bgw.bgw_main_arg = ObjectIdGetDatum(dboid);
	StaticAssertStmt(NAMEDATALEN <= BGW_EXTRALEN, "database name does not fit in bgw_extra");
	strlcpy(bgw.bgw_extra, slot->dbname, NAMEDATALEN);
	bgw.bgw_notify_pid = MyProcPid;

	oldcxt = MemoryContextSwitchTo(TopMemoryContext);
	if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
	{
		MemoryContextSwitchTo(oldcxt);
		return false;
	}
	MemoryContextSwitchTo(oldcxt);

	slot->handle = handle;
	slot->started_at = GetCurrentTimestamp();
	slot->stopping = false;
	return true;
}

/*
 * Brings the running workers in line with memtx.databases; returns how long
 * the launcher may sleep before something needs doing again.
 */
static long
LauncherReconcile(void)
{
	long		sleep_ms = MEMTX_LAUNCHER_RECHECK;
	TimestampTz now = GetCurrentTimestamp();
	ListCell   *lc;

	foreach(lc, launcher_slots)
	{
		WorkerSlot *slot = (WorkerSlot *) lfirst(lc);
		pid_t		pid;

		if (slot->handle != NULL &&
			GetBackgroundWorkerPid(slot->handle, &pid) == BGWH_STOPPED)
		{
			pfree(slot->handle);
			slot->handle = NULL;
			slot->stopping = false;
		}

		if (!slot->listed)
		{
			if (slot->handle == NULL)
			{
				launcher_slots = foreach_delete_current(launcher_slots, lc);
				pfree(slot);
			}
			else if (!slot->stopping)
			{
				ereport(LOG,
						(errmsg("memtx launcher stopping the worker for database \"%s\"",
								slot->dbname),
						 errdetail("The database is no longer listed in memtx.databases.")));
				TerminateBackgroundWorker(slot->handle);
				slot->stopping = true;
			}
		}
		else if (slot->handle == NULL)
		{
			long		since = TimestampDifferenceMilliseconds(slot->started_at, now);
			Oid			dboid;

			if (slot->started_at != 0 && since < MEMTX_WORKER_RESTART_DELAY)
				sleep_ms = Min(sleep_ms, MEMTX_WORKER_RESTART_DELAY - since);
			else if (!OidIsValid(dboid = LauncherDatabaseOid(slot->dbname)))
			{
				if (!slot->warned_missing)
					ereport(WARNING,
							(errcode(ERRCODE_UNDEFINED_DATABASE),
							 errmsg("database \"%s\" listed in memtx.databases does not exist or does not allow connections",
									slot->dbname),
							 errhint("The memtx launcher starts its worker once the database exists.")));
				slot->warned_missing = true;
			}
			else if (!LauncherStartWorker(slot, dboid))
			{
				ereport(WARNING,
						(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
						 errmsg("could not start the memtx worker for database \"%s\"",
								slot->dbname),
						 errhint("Raise max_worker_processes.")));
				slot->started_at = now;
				sleep_ms = Min(sleep_ms, MEMTX_WORKER_RESTART_DELAY);
			}
			else
				slot->warned_missing = false;
		}
	}
	return Max(sleep_ms, 1);
}

/* On exit, the launcher's workers go too, so a restarted launcher starts no duplicates. */
static void
LauncherStopWorkers(int code, Datum arg)
{
	ListCell   *lc;

	foreach(lc, launcher_slots)
	{
		WorkerSlot *slot = (WorkerSlot *) lfirst(lc);

		if (slot->handle != NULL)
			TerminateBackgroundWorker(slot->handle);
	}
}

void
memtx_launcher_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/* No database: shared catalogs only, and a row in pg_stat_activity. */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("memtx launcher");
	before_shmem_exit(LauncherStopWorkers, (Datum) 0);

	ereport(LOG, (errmsg("memtx launcher started")));
	LauncherReadDatabases();

	for (;;)
	{
		long		sleep_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			LauncherReadDatabases();
		}

		pgstat_report_activity(STATE_RUNNING, "reconciling memtx workers");
		sleep_ms = LauncherReconcile();
		pgstat_report_activity(STATE_IDLE, NULL);

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* ------------------------------------------------------------------ worker */

/* Starts a worker transaction; false (and nothing open) when memtx is not installed. */
static bool
WorkerBegin(const char *what)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (!OidIsValid(get_extension_oid("memtx", true)))
	{
		CommitTransactionCommand();
		return false;
	}
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, what);
	return true;
}

static void
WorkerEnd(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_stat(true);
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* The namespaces that have open transactions whose lease ran out. */
pg_noinline static List *
WorkerExpiredNamespaces(void)
{
	static const char *query =
		"SELECT DISTINCT namespace FROM memtx.transactions "
		"WHERE status = 'open' AND memtx.lease_expired(lease_expires_at, snapshot_xid) "
		"ORDER BY 1";
	List	   *nss = NIL;
	MemoryContext cxt = CurrentMemoryContext;

	if (!WorkerBegin(query))
		return NIL;
	if (SPI_execute(query, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the namespaces to expire");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		nss = lappend(nss, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
		MemoryContextSwitchTo(old);
	}
	WorkerEnd();
	return nss;
}

/* Expires one namespace in its own transaction and logs what it expired. */
static void
WorkerExpireNamespace(const char *dbname, const char *ns)
{
	static const char *query =
		"SELECT id FROM memtx.expire_transactions($1) AS e(id) ORDER BY id";
	Oid			types[1] = {TEXTOID};
	Datum		values[1];

	if (!WorkerBegin(query))
		return;
	values[0] = CStringGetTextDatum(ns);
	if (SPI_execute_with_args(query, 1, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not run memtx.expire_transactions()");

	if (SPI_processed > 0)
	{
		StringInfoData ids;
		uint64		i;

		initStringInfo(&ids);
		for (i = 0; i < SPI_processed && i < MEMTX_WORKER_LOG_IDS; i++)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(SPI_tuptable->vals[i],
										  SPI_tuptable->tupdesc, 1, &isnull);

			if (isnull)
				continue;
			appendStringInfo(&ids, "%s" INT64_FORMAT,
							 ids.len > 0 ? ", " : "", DatumGetInt64(d));
		}
		if (SPI_processed > MEMTX_WORKER_LOG_IDS)
			appendStringInfoString(&ids, ", ...");

		ereport(LOG,
				(errmsg_plural("memtx worker expired %llu transaction in database \"%s\": %s",
							   "memtx worker expired %llu transactions in database \"%s\": %s",
							   SPI_processed,
							   (unsigned long long) SPI_processed, dbname, ids.data),
				 errdetail("Their lease (memtx.lease_timeout) ran out, or they were open across a crash that may have lost their reads; their staged records were revoked with reason \"expired\".")));
	}
	WorkerEnd();
}

/*
 * Chains the receipts committed since the last run (receipt.c), in one
 * transaction; a store whose extension predates receipts is left alone.
 */
static void
WorkerChainReceipts(void)
{
	static const char *query = "SELECT memtx.chain_receipts()";

	if (!WorkerBegin(query))
		return;
	if (SPI_execute("SELECT pg_catalog.to_regprocedure('memtx.chain_receipts(text)') IS NOT NULL",
					true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look for memtx.chain_receipts()");
	if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &(bool) {false})) &&
		SPI_execute(query, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not run memtx.chain_receipts()");
	WorkerEnd();
}

/* After an error in a run: report it and clean up the transaction. */
static void
WorkerRecover(MemoryContext cxt)
{
	HOLD_INTERRUPTS();
	MemoryContextSwitchTo(cxt);
	EmitErrorReport();
	AbortCurrentTransaction();
	FlushErrorState();
	pgstat_report_activity(STATE_IDLE, NULL);
	RESUME_INTERRUPTS();
}

/*
 * One expiry run: every namespace with expired transactions, one transaction
 * each; an error in one namespace is reported and the others go on.
 */
static void
WorkerExpireRun(const char *dbname)
{
	MemoryContext cxt = CurrentMemoryContext;
	List	   *nss = WorkerExpiredNamespaces();
	ListCell   *lc;

	foreach(lc, nss)
	{
		PG_TRY();
		{
			WorkerExpireNamespace(dbname, (const char *) lfirst(lc));
		}
		PG_CATCH();
		{
			WorkerRecover(cxt);
		}
		PG_END_TRY();
		MemoryContextSwitchTo(cxt);
	}
}

void
memtx_worker_main(Datum main_arg)
{
	Oid			dboid = DatumGetObjectId(main_arg);
	char		dbname[NAMEDATALEN];
	MemoryContext runcxt;

	strlcpy(dbname, MyBgworkerEntry->bgw_extra, NAMEDATALEN);

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	pgstat_report_appname("memtx worker");

	/*
	 * memtx runs at READ COMMITTED only (call.c): a server-wide default of
	 * another level must not stop expiry.  Autovacuum does the same.
	 */
	SetConfigOption("default_transaction_isolation", "read committed",
					PGC_SUSET, PGC_S_OVERRIDE);

	ereport(LOG,
			(errmsg("memtx worker started for database \"%s\"", dbname)));

	/* expiry skips a namespace whose lock it cannot have in this time */
	SetConfigOption("lock_timeout", MEMTX_WORKER_LOCK_WAIT, PGC_SUSET, PGC_S_OVERRIDE);

	runcxt = AllocSetContextCreate(TopMemoryContext, "memtx worker run",
								   ALLOCSET_DEFAULT_SIZES);

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		MemoryContextSwitchTo(runcxt);
		PG_TRY();
		{
			WorkerChainReceipts();
		}
		PG_CATCH();
		{
			/* Report, clean up the transaction, and try again next time. */
			WorkerRecover(runcxt);
		}
		PG_END_TRY();
		PG_TRY();
		{
			WorkerExpireRun(dbname);
		}
		PG_CATCH();
		{
			WorkerRecover(runcxt);
		}
		PG_END_TRY();
		MemoryContextSwitchTo(TopMemoryContext);
		MemoryContextReset(runcxt);

		(void) WaitLatch(MyLatch,
						 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 memtx_worker_naptime * 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
