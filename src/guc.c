/*
 * guc.c — memtx settings.
 *
 * Settings are trusted configuration (SPEC §2): every one is PGC_SUSET, so
 * only a superuser can change it, per session or per role with ALTER ROLE
 * ... SET.  An agent that could lower the confidence threshold, move the
 * logical clock, relax flow control or name itself harness would bypass the
 * protocol.
 *
 * memtx.logical_now is parsed once, by its check hook, in the one notation
 * clock.c reads (ISO 8601 with an explicit UTC offset); the assign hook keeps
 * the instant, so memtx.now() never re-reads the text in a caller's TimeZone
 * or DateStyle.
 */
#include "guc.h"
#include "clock.h"

#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

double		memtx_confidence_threshold = 0.6;
double		memtx_authority_bypass = 0.9;
double		memtx_default_authority = 0.5;
int			memtx_default_tier = MT_MEDIUM;
char	   *memtx_harness_role = NULL;
int			memtx_flow_control = MF_READ_SET;
int			memtx_lease_timeout = 300;
char	   *memtx_logical_now = NULL;
bool		memtx_notify = true;
int			memtx_max_staged = 10000;

static const struct config_enum_entry tier_options[] = {
	{"low", MT_LOW, false},
	{"medium", MT_MEDIUM, false},
	{"high", MT_HIGH, false},
	{"external_action", MT_EXTERNAL_ACTION, false},
	{NULL, 0, false}
};

static const struct config_enum_entry flow_control_options[] = {
	{"read_set", MF_READ_SET, false},
	{"declared", MF_DECLARED, false},
	{NULL, 0, false}
};

/*
 * Accept an empty string (the clock follows the transaction) or an ISO 8601
 * timestamp with an explicit UTC offset, parsed here once (clock.c) so that
 * no session setting of a later caller changes what it means.
 */
static bool
GucCheckLogicalNow(char **newval, void **extra, GucSource source)
{
	TimestampTz ts;
	TimestampTz *parsed;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!ClockParseIso8601(*newval, &ts))
	{
		GUC_check_errcode(ERRCODE_INVALID_DATETIME_FORMAT);
		GUC_check_errmsg("invalid value for memtx.logical_now: \"%s\"", *newval);
		GUC_check_errdetail("The logical clock must be an ISO 8601 timestamp with an explicit UTC offset.");
		GUC_check_errhint("Write it like 2026-01-15 12:00+00, or set an empty string to follow the transaction clock.");
		return false;
	}
	parsed = malloc(sizeof(TimestampTz));
	if (parsed == NULL)
		return false;
	*parsed = ts;
	*extra = parsed;
	return true;
}

static void
GucAssignLogicalNow(const char *newval, void *extra)
{
	memtx_logical_now_set = extra != NULL;
	memtx_logical_now_value = extra != NULL ? *(TimestampTz *) extra : 0;
}

void
GucInit(void)
{
	DefineCustomRealVariable("memtx.confidence_threshold",
							 "Minimum confidence a record needs to pass the evidence check.",
							 "Inclusive; sources at or above memtx.authority_bypass skip it.",
							 &memtx_confidence_threshold,
							 0.6, 0.0, 1.0,
							 PGC_SUSET, 0, NULL, NULL, NULL);

	DefineCustomRealVariable("memtx.authority_bypass",
							 "Source authority at or above which the evidence check passes regardless of confidence.",
							 NULL,
							 &memtx_authority_bypass,
							 0.9, 0.0, 1.0,
							 PGC_SUSET, 0, NULL, NULL, NULL);

	DefineCustomRealVariable("memtx.default_authority",
							 "Authority given to records from unregistered sources.",
							 NULL,
							 &memtx_default_authority,
							 0.5, 0.0, 1.0,
							 PGC_SUSET, 0, NULL, NULL, NULL);

	DefineCustomEnumVariable("memtx.default_tier",
							 "Risk tier of transactions begun by roles without a configured tier.",
							 NULL,
							 &memtx_default_tier,
							 MT_MEDIUM, tier_options,
							 PGC_SUSET, 0, NULL, NULL, NULL);

	DefineCustomStringVariable("memtx.harness_role",
							   "Role whose members (and superusers) are trusted as the harness.",
							   "Only a harness may pass tier, agent or isolation to memtx.begin and call the registry functions.",
							   &memtx_harness_role,
							   "memtx_harness",
							   PGC_SUSET, 0, NULL, NULL, NULL);

	DefineCustomEnumVariable("memtx.flow_control",
							 "Which parents the permission-laundering rule considers.",
							 "read_set: declared parents plus every record the transaction read; declared: declared parents only.",
							 &memtx_flow_control,
							 MF_READ_SET, flow_control_options,
							 PGC_SUSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("memtx.lease_timeout",
							"How long an open memtx transaction lives without a call on it.",
							"Each call on the transaction renews the lease; expired transactions are aborted.",
							&memtx_lease_timeout,
							300, 1, 7 * 24 * 3600,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);

	DefineCustomStringVariable("memtx.logical_now",
							   "Logical clock for validity and observation checks (empty: transaction timestamp).",
							   "An ISO 8601 timestamp with an explicit UTC offset, e.g. 2026-01-15 12:00+00.",
							   &memtx_logical_now,
							   "",
							   PGC_SUSET, 0, GucCheckLogicalNow, GucAssignLogicalNow, NULL);

	DefineCustomBoolVariable("memtx.notify",
							 "Announce commits, cascades, reviews and expiries with NOTIFY on channel memtx.",
							 "PostgreSQL serializes the commits of all transactions that sent a notification; "
							 "a store with many concurrent writers and no listeners may turn this off.",
							 &memtx_notify,
							 true,
							 PGC_SUSET, 0, NULL, NULL, NULL);

	DefineCustomIntVariable("memtx.max_staged",
							"Most records one memtx transaction may stage.",
							"Staging one more fails with SQLSTATE 54000.",
							&memtx_max_staged,
							10000, 1, INT_MAX,
							PGC_SUSET, 0, NULL, NULL, NULL);
}
