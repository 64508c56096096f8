/*
 * memtx.c — module entry point.
 *
 * _PG_init only asks each subsystem to register itself; the protocol lives
 * in the files named after its parts.
 */
#include "memtx.h"
#include "fault.h"
#include "locks.h"
#include "readset.h"

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
