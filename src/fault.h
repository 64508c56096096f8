/*
 * fault.h — named fault points of the test build (fault.c).
 */
#ifndef MEMTX_FAULT_H
#define MEMTX_FAULT_H

#include "memtx.h"

#ifdef MEMTX_TESTING
extern void FaultInit(void);
extern void FaultPoint(const char *name);
#else
#define FaultInit() ((void) 0)
#define FaultPoint(name) ((void) 0)
#endif

#endif							/* MEMTX_FAULT_H */
