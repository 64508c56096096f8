-- CREATE EXTENSION / DROP EXTENSION, and what the extension consists of.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS memtx CASCADE;
RESET client_min_messages;
CREATE EXTENSION memtx;
SELECT extname, extversion FROM pg_extension WHERE extname = 'memtx';
SELECT c.relname, c.relkind
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = 'memtx' AND c.relkind IN ('r', 'v', 'S')
 ORDER BY c.relname;
-- every enum, labels in order
SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder) AS labels
  FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
  JOIN pg_namespace n ON n.oid = t.typnamespace
 WHERE n.nspname = 'memtx'
 GROUP BY t.typname ORDER BY t.typname;
-- scope is ordered
SELECT 'private'::memtx.scope < 'shared'::memtx.scope AND 'shared'::memtx.scope < 'public'::memtx.scope AS ordered;
-- unknown labels are refused
SELECT 'frozen'::memtx.state;
SELECT 'serializable'::memtx.isolation;
SELECT 'critical'::memtx.risk_tier;
SELECT 'note'::memtx.kind;
SELECT 'team'::memtx.scope;
-- records carry every column the spec names
SELECT attname, format_type(atttypid, atttypmod) AS type
  FROM pg_attribute WHERE attrelid = 'memtx.records'::regclass AND attnum > 0 AND NOT attisdropped
 ORDER BY attnum;
SELECT attname, format_type(atttypid, atttypmod) AS type
  FROM pg_attribute WHERE attrelid = 'memtx.edges'::regclass AND attnum > 0 AND NOT attisdropped
 ORDER BY attnum;
-- DROP EXTENSION removes the schema and everything in it
DROP EXTENSION memtx;
SELECT count(*) FROM pg_namespace WHERE nspname = 'memtx';
CREATE EXTENSION memtx;
