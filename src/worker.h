/*
 * worker.h — the lease-expiry background workers.
 */
#ifndef MEMTX_WORKER_H
#define MEMTX_WORKER_H

#include "postgres.h"
#include "fmgr.h"

extern char *memtx_databases;
extern int	memtx_worker_naptime;

extern void WorkerInit(void);

extern PGDLLEXPORT void memtx_launcher_main(Datum main_arg);
extern PGDLLEXPORT void memtx_worker_main(Datum main_arg);

#endif							/* MEMTX_WORKER_H */
