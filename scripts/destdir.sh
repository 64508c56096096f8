# Sourced by test/run and demo/run: where memtx is installed for them.
#
# By default memtx goes into a private tree, $MEMTX_DESTDIR (default
# /tmp/memtx-inst-<checksum of this checkout's path>), which the clusters
# they start load it from through Debian's extension_destdir and
# dynamic_library_path: nothing of the system's PostgreSQL is touched, and
# several checkouts can test side by side.  MEMTX_INSTALL=system installs
# into the system's PostgreSQL directories instead (make install; root or
# sudo).  Sets MEMTX_DESTDIR (exported; unset for a system install) and
# memtx_cluster_opts, the pg_virtualenv options that load that build.
if [ "${MEMTX_INSTALL:-private}" = system ]; then
    unset MEMTX_DESTDIR
    memtx_cluster_opts=()
else
    export MEMTX_DESTDIR=${MEMTX_DESTDIR:-/tmp/memtx-inst-$(pwd | cksum | cut -d' ' -f1)}
    memtx_libdir=$("${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}" --pkglibdir)
    memtx_cluster_opts=(-o "extension_destdir=$MEMTX_DESTDIR"
                        -o "dynamic_library_path=$MEMTX_DESTDIR$memtx_libdir:\$libdir")
fi
