/*
 * node.c — a store's node number (SPEC §20).
 *
 * A store that outgrows one server is split by namespace across N memtx
 * nodes behind a router (the companion extension memtx_router, PL/Proxy).
 * A call that names a transaction or a record id is routed by the id alone,
 * so every id a node allocates carries the node's number: the five bits
 * above the low 48 (id = node << 48 | local, local from 1).  Nodes are
 * 0..31, each with 2^48 - 1 ids per sequence, and every id stays below 2^53,
 * so JSON and JavaScript clients (the Node client reads ids as numbers) keep
 * them exact.  Node 0's ids are the ids of a single server: a store that
 * never calls set_node, or an upgraded one, is node 0 and nothing about its
 * ids changes.
 *
 * memtx.set_node(n) (harness) moves the id sequences of transactions,
 * records (tool actions included), the action log, the rollback log and the
 * compensations into node n's range: MINVALUE n << 48 | 1, MAXVALUE
 * (n + 1) << 48 - 1, RESTART at the minimum, so an exhausted range fails
 * instead of spilling into the next node's.  The sequences are the record
 * of the number (memtx.node() reads it back from the record sequence):
 * pg_dump keeps their values with the store, and an upgraded store, whose
 * values are small, is node 0 without a step of its own.  The clock and the
 * receipt order are positions, not ids, and stay as they are.  It runs only
 * on an empty store (no transaction, no record), under a lock that keeps
 * begin and stage out until it commits; on a store that has rows, set_node
 * with the store's own number re-applies the bounds without restarting
 * (pg_restore keeps the sequences' values but not their bounds), any other
 * number is refused with 55000.
 *
 * The routing functions are SQL: memtx.id_node(id) is id >> 48, and
 * memtx.node_of(namespace) is the namespace's stable hash — the first four
 * bytes of the SHA-256 of its UTF-8 text, big-endian, as a non-negative
 * 31-bit integer — which the router masks with N - 1 (N a power of two).
 * SHA-256 and UTF-8 are fixed definitions, so the placement is the same on
 * every node, platform and release (hashtext is not promised to be).
 */
#include "call.h"
#include "permissions.h"

#define NODE_ID_BITS	48
#define NODE_MAX		31

/* The sequences whose values are ids; the clock and receipt order are not. */
static const char *const NodeIdSequences[] = {
	"memtx.transaction_id_seq", "memtx.record_id_seq", "memtx.action_log_id_seq",
	"memtx.rollback_log_id_seq", "memtx.compensation_id_seq"
};

/* The store's node number, as its record sequence holds it (memtx.node()). */
static int
NodeRecorded(void)
{
	static SPIPlanPtr plan;

	MemtxExec(MemtxPlan(&plan, "SELECT memtx.node()", 0, NULL), NULL, NULL, 1);
	return (int) MemtxGetInt64(0, 1);
}

/* Whether the store holds a transaction or a record. */
static bool
NodeStoreHasRows(void)
{
	static SPIPlanPtr plan;

	MemtxExec(MemtxPlan(&plan,
						"SELECT EXISTS (SELECT 1 FROM memtx.transactions) "
						"OR EXISTS (SELECT 1 FROM memtx.records)",
						0, NULL),
			  NULL, NULL, 1);
	return MemtxGetBool(0, 1);
}

/*
 * Bound every id sequence to node's range; restart it at the range's start
 * when restart, else check that its current value lies in the range.  The
 * statements are built from two integers computed here, never from input.
 */
static void
NodeBoundSequences(int node, bool restart)
{
	int64		lo = ((int64) node << NODE_ID_BITS) | 1;
	int64		hi = (((int64) node + 1) << NODE_ID_BITS) - 1;

	for (int i = 0; i < (int) lengthof(NodeIdSequences); i++)
	{
		char	   *sql;
		int			rc;

		if (!restart)
		{
			sql = psprintf("SELECT last_value FROM %s", NodeIdSequences[i]);
			rc = SPI_execute(sql, false, 1);
			if (rc != SPI_OK_SELECT)
				elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(rc));
			if (MemtxGetInt64(0, 1) < lo - 1 || MemtxGetInt64(0, 1) > hi)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("sequence %s holds ids outside node %d's range", NodeIdSequences[i], node),
						 errdetail("Its last value is " INT64_FORMAT "; node %d allocates " INT64_FORMAT " to " INT64_FORMAT ".",
								   MemtxGetInt64(0, 1), node, lo, hi)));
		}
		sql = psprintf("ALTER SEQUENCE %s MINVALUE " INT64_FORMAT " MAXVALUE " INT64_FORMAT
					   " START " INT64_FORMAT "%s NO CYCLE",
					   NodeIdSequences[i], lo, hi, lo, restart ? " RESTART" : "");
		rc = SPI_execute(sql, false, 0);
		if (rc != SPI_OK_UTILITY)
			elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(rc));
	}
}

/*
 * memtx.set_node(node integer) → void (harness): the store's node number,
 * once, on an empty store.
 */
PG_FUNCTION_INFO_V1(memtx_set_node);
Datum
memtx_set_node(PG_FUNCTION_ARGS)
{
	MemtxCall	call;
	int32		node;

	MemtxRequireArg(fcinfo, 0, "node");
	node = PG_GETARG_INT32(0);
	if (node < 0 || node > NODE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("node must be between 0 and %d, got %d", NODE_MAX, node),
				 errdetail("A node's number takes the five bits above the low 48 of every id it allocates.")));

	MemtxCallBegin(&call);
	MemtxRequireHarness(&call, "set the node number");

	/* keep begin and stage out until this SQL transaction ends */
	if (SPI_execute("LOCK TABLE memtx.transactions, memtx.records IN SHARE ROW EXCLUSIVE MODE",
					false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "LOCK TABLE failed");

	if (NodeStoreHasRows())
	{
		int			current = NodeRecorded();

		if (current != node)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot make a store of node %d node %d: it has transactions or records", current, node),
					 errdetail("Their ids carry node %d.", current),
					 errhint("Set a node's number on its empty store, before its first transaction.")));
		NodeBoundSequences(node, false);
	}
	else
		NodeBoundSequences(node, true);

	MemtxCallEnd(&call);
	PG_RETURN_VOID();
}
