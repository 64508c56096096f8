/*
 * events.h — protocol events sent with NOTIFY on channel memtx.
 */
#ifndef MEMTX_EVENTS_H
#define MEMTX_EVENTS_H

#include "memtx.h"

extern void MemtxNotify(const char *event, const char *ns, int64 tx, int64 record,
						const char *reason, int64 count);

#endif							/* MEMTX_EVENTS_H */
