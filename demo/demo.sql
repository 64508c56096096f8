-- memtx demo: a memory write is not a belief commit.
\pset null '∅'
CREATE EXTENSION memtx CASCADE;
SELECT memtx.register_source('order_lookup', 0.8);
SELECT memtx.register_tool('issue_refund', false);
SELECT name, authority FROM memtx.sources;
SELECT name, reversible FROM memtx.tools;
