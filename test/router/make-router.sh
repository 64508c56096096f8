#!/usr/bin/env bash
# Builds a memtx router over node databases of the server the PG* environment
# names (as a superuser), the way README "More than one server" sets one up:
#
#   bash test/router/make-router.sh ROUTER_DB NODE_DB0 [NODE_DB1 ...]
#
# Each NODE_DBi is made afresh with memtx and memtx.set_node(i); ROUTER_DB
# with memtx_router, the SQL/MED cluster memtx_nodes (partition i: NODE_DBi
# on this server, PGHOST/PGPORT), USAGE on it for every role, a user mapping
# for PUBLIC and one for the calling superuser with its password (PGPASSWORD,
# when set).  The number of nodes must be a power of two.  Agents need a
# LOGIN role and, where the server asks for passwords, a user mapping of
# their own (CREATE USER MAPPING FOR agent SERVER memtx_nodes OPTIONS
# (password '...')).
set -euo pipefail
router=$1; shift
nodes=("$@")
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
host=${PGHOST:-localhost}
port=${PGPORT:-5432}
options=()
for i in "${!nodes[@]}"; do
    db=${nodes[$i]}
    dropdb --if-exists --force "$db" 2>/dev/null || dropdb --if-exists "$db"
    createdb "$db"
    q -d "$db" -c "SET client_min_messages = warning" -c "CREATE EXTENSION memtx CASCADE" \
        -c "SELECT memtx.set_node($i)" >/dev/null
    options+=("p$i 'host=$host port=$port dbname=$db'")
done
dropdb --if-exists --force "$router" 2>/dev/null || dropdb --if-exists "$router"
createdb "$router"
mapping="CREATE USER MAPPING FOR CURRENT_USER SERVER memtx_nodes"
[ -n "${PGPASSWORD:-}" ] && mapping+=" OPTIONS (password '${PGPASSWORD//\'/\'\'}')"
q -d "$router" >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION memtx_router CASCADE;
CREATE SERVER memtx_nodes FOREIGN DATA WRAPPER plproxy OPTIONS ($(IFS=,; echo "${options[*]}"));
GRANT USAGE ON FOREIGN SERVER memtx_nodes TO PUBLIC;
CREATE USER MAPPING FOR PUBLIC SERVER memtx_nodes;
$mapping;
SQL
