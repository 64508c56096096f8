/*
 * events.h — protocol events sent with NOTIFY on channel memtx.
 */
#ifndef MEMTX_EVENTS_H
#define MEMTX_EVENTS_H

#include "memtx.h"

/* Payloads carry ids, counts and protocol codes only (events.c). */
extern void MemtxNotify(const char *event, int64 tx, int64 record, const char *reason,
						int64 count);

#endif							/* MEMTX_EVENTS_H */
