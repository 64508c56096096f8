/*
 * lifecycle.h — the legal moves of a record's state (SPEC §1), which the
 * trigger memtx.lifecycle_guard enforces (lifecycle.c).
 */
#ifndef MEMTX_LIFECYCLE_H
#define MEMTX_LIFECYCLE_H

#include "memtx.h"

extern bool LifecycleLegal(MemtxState from, MemtxState to);

/* Declare the pipeline's promotion of records ids[0..n) (n = 0: end it). */
extern void LifecyclePassValidated(const int64 *ids, int n);

#endif							/* MEMTX_LIFECYCLE_H */
