#!/usr/bin/env bash
# Regenerates sql/memtx_router.sql from the catalog of the memtx built in
# this tree (make router-sql): installs the build (into MEMTX_DESTDIR when
# set, as test/run does), starts a throwaway cluster with pg_virtualenv,
# creates memtx there and runs scripts/gen-router.py against it.  Run it after
# any change to memtx's functions, types or views, and commit the result;
# test/router/run fails while the committed file is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
bash scripts/install.sh >/dev/null
opts=()
if [ -n "${MEMTX_DESTDIR:-}" ]; then
    libdir=$("$PG_CONFIG" --pkglibdir)
    opts=(-o "extension_destdir=$MEMTX_DESTDIR" -o "dynamic_library_path=$MEMTX_DESTDIR$libdir:\$libdir")
fi
out=$(pwd)/sql/memtx_router.sql
# the throwaway cluster runs as postgres: it writes to a file of its own
tmp=$(mktemp /tmp/memtx-router-sql.XXXXXX)
chmod 0666 "$tmp"
trap 'rm -f "$tmp"' EXIT
pg_virtualenv -t "${opts[@]}" bash -c '
    psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION memtx CASCADE" >/dev/null &&
    /usr/bin/python3 scripts/gen-router.py --output "$1"' gen "$tmp"
cp "$tmp" "$out"
echo "wrote sql/memtx_router.sql"
