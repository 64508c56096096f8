EXTENSION  = memtx
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = memtx
OBJS       = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c)))
HEADERS    = $(wildcard src/*.h)

DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
DATA       = $(filter-out $(DATA_built) sql/$(EXTENSION).sql,$(wildcard sql/$(EXTENSION)--*.sql))

PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS   = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare

TESTS        = $(sort $(wildcard test/sql/*.sql))
REGRESS      = $(patsubst test/sql/%.sql,%,$(TESTS))
REGRESS_OPTS = --inputdir=test --outputdir=test --load-extension=btree_gist
ISOLATION    = $(patsubst test/specs/%.spec,%,$(sort $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test --outputdir=test/output_iso --load-extension=btree_gist

EXTRA_CLEAN = $(DATA_built) test/results test/regression.diffs test/regression.out test/output_iso

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# every object depends on the project's headers (PGXS tracks none by default)
$(OBJS): $(HEADERS)

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql
	cp $< $@

.PHONY: test demo
test:
	bash test/run

demo:
	bash demo/run
