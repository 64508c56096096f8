/*
 * module.c — the module's entry point.
 *
 * _PG_init only asks each subsystem to register itself; the protocol lives
 * in the files named after its parts.  It is the top of the include graph:
 * no file includes what this one declares (nothing), so it may include every
 * subsystem's header (scripts/include-graph).
 */
#include "memtx.h"
#include "fault.h"
#include "guc.h"
#include "locks.h"
#include "readsetbuf.h"
#include "worker.h"

#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	GucInit();
	ReadSetInit();
	LockInit();
	WorkerInit();
	FaultInit();
	/* after every subsystem defined its settings */
	MarkGUCPrefixReserved("memtx");
}
