/*
 * clock.h — memtx.now(): the logical clock of tests, else the transaction
 * timestamp (clock.c).
 */
#ifndef MEMTX_CLOCK_H
#define MEMTX_CLOCK_H

#include "memtx.h"

#include "datatype/timestamp.h"

/* memtx.logical_now parsed (its check hook, guc.c) */
extern bool memtx_logical_now_set;
extern TimestampTz memtx_logical_now_value;

extern bool ClockParseIso8601(const char *s, TimestampTz *result);
extern TimestampTz MemtxNow(void);

#endif							/* MEMTX_CLOCK_H */
