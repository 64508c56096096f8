/*
 * memtx.c — module entry point.
 *
 * _PG_init only asks each subsystem to register itself; the protocol lives
 * in the files named after its parts.
 */
#include "memtx.h"

#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

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

void
_PG_init(void)
{
	GucInit();
	WorkerInit();
	/* after every subsystem defined its settings */
	MarkGUCPrefixReserved("memtx");
}
