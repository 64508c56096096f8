/*
 * clock.c — the memtx clock (SPEC §2, §16 "Clock").
 *
 * memtx.now() is memtx.logical_now when that is set, else the transaction
 * timestamp; validity and observation times are judged against it so tests
 * and replays are deterministic.
 *
 * The logical clock is read in exactly one notation, ISO 8601 with an
 * explicit UTC offset ("2026-01-15 12:00+00", "2026-01-15T12:00:00.5Z"), and
 * it is parsed once, when the setting is assigned (guc.c): the parser here
 * consults no session setting, so neither TimeZone nor DateStyle of whoever
 * calls memtx.now() can move it.  PostgreSQL's timestamptz input would read
 * a zone-less value in the caller's TimeZone and "01/02" by DateStyle.
 */
#include "clock.h"

#include "access/xact.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include <ctype.h>

bool		memtx_logical_now_set = false;
TimestampTz memtx_logical_now_value = 0;

/* Read exactly n digits at *p into *out, advancing *p. */
static bool
ClockDigits(const char **p, int n, int *out)
{
	int			v = 0;

	for (int i = 0; i < n; i++)
	{
		if (!isdigit((unsigned char) (*p)[i]))
			return false;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return true;
}

/*
 * Parse YYYY-MM-DD{ |T}HH:MM[:SS[.f{1,6}]]{Z|±HH[[:]MM]} into *result;
 * false for anything else, out-of-range fields and infinite results.
 */
bool
ClockParseIso8601(const char *s, TimestampTz *result)
{
	const char *p = s;
	struct pg_tm tm;
	fsec_t		fsec = 0;
	int			offset_h = 0;
	int			offset_m = 0;
	int			tz;
	Timestamp	ts;

	memset(&tm, 0, sizeof(tm));
	if (!ClockDigits(&p, 4, &tm.tm_year) || *p++ != '-' ||
		!ClockDigits(&p, 2, &tm.tm_mon) || *p++ != '-' ||
		!ClockDigits(&p, 2, &tm.tm_mday) || (*p != ' ' && *p != 'T'))
		return false;
	p++;
	if (!ClockDigits(&p, 2, &tm.tm_hour) || *p++ != ':' ||
		!ClockDigits(&p, 2, &tm.tm_min))
		return false;
	if (*p == ':')
	{
		p++;
		if (!ClockDigits(&p, 2, &tm.tm_sec))
			return false;
		if (*p == '.')
		{
			int			scale = 1000000;

			p++;
			if (!isdigit((unsigned char) *p))
				return false;
			while (isdigit((unsigned char) *p))
			{
				scale /= 10;
				if (scale == 0)
					return false;	/* more than microseconds */
				fsec += (*p++ - '0') * scale;
			}
		}
	}
	if (*p == 'Z')
		p++;
	else if (*p == '+' || *p == '-')
	{
		int			sign = *p++ == '+' ? 1 : -1;

		if (!ClockDigits(&p, 2, &offset_h))
			return false;
		if (*p == ':')
		{
			p++;
			if (!ClockDigits(&p, 2, &offset_m))
				return false;
		}
		else if (isdigit((unsigned char) *p) && !ClockDigits(&p, 2, &offset_m))
			return false;
		offset_h *= sign;
		offset_m *= sign;
	}
	else
		return false;			/* no offset: refuse rather than guess a zone */
	if (*p != '\0')
		return false;

	if (tm.tm_year < 1 || tm.tm_mon < 1 || tm.tm_mon > MONTHS_PER_YEAR ||
		tm.tm_mday < 1 || tm.tm_mday > day_tab[isleap(tm.tm_year)][tm.tm_mon - 1] ||
		tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 59 ||
		abs(offset_h) > MAX_TZDISP_HOUR || abs(offset_m) > 59)
		return false;

	/* PostgreSQL counts zone offsets in seconds west of Greenwich */
	tz = -(offset_h * SECS_PER_HOUR + offset_m * SECS_PER_MINUTE);
	if (tm2timestamp(&tm, fsec, &tz, &ts) != 0 || !IS_VALID_TIMESTAMP(ts))
		return false;
	*result = ts;
	return true;
}

TimestampTz
MemtxNow(void)
{
	if (memtx_logical_now_set)
		return memtx_logical_now_value;
	return GetCurrentTransactionStartTimestamp();
}

PG_FUNCTION_INFO_V1(memtx_now);
Datum
memtx_now(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(MemtxNow());
}
