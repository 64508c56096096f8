-- The catalog lint (test/sql/catalog_lint.sql) with memtx_vector installed too: its rules hold
-- for memtx_vector's functions, tables and triggers as for memtx's.
\set with_vector 1
\i test/sql/catalog_lint.sql
