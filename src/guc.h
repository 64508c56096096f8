/*
 * guc.h — the memtx.* settings that no single subsystem owns (guc.c).
 */
#ifndef MEMTX_GUC_H
#define MEMTX_GUC_H

#include "memtx.h"

extern double memtx_confidence_threshold;
extern double memtx_authority_bypass;
extern double memtx_default_authority;
extern int	memtx_default_tier;
extern char *memtx_harness_role;
extern int	memtx_flow_control;
extern int	memtx_lease_timeout;
extern bool memtx_notify;
extern char *memtx_logical_now;
extern int	memtx_max_staged;

extern void GucInit(void);

#endif							/* MEMTX_GUC_H */
