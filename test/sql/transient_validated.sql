-- validated is transient (SPEC §1): the pipeline promotes a record from
-- tentative in one UPDATE (one row version, one history row), while every
-- other tentative -> committed or action_safe is still refused, for a
-- superuser too, right after a promotion in the same session and in the
-- same SQL transaction.
\i test/sql/include/prelude.psql
SELECT memtx.begin('external_action') AS tp \gset
SELECT memtx.stage(:tp, 'transient', 'a', '1') AS rp \gset
SELECT memtx.begin() AS tq \gset
SELECT memtx.stage(:tq, 'transient', 'b', '1') AS rq \gset
SELECT n_tup_upd AS upd_before FROM pg_stat_xact_user_tables WHERE relid = 'memtx.records'::regclass \gset
BEGIN;
SELECT state FROM memtx.commit(:tp);
SELECT n_tup_upd - :upd_before AS record_updates_of_the_commit
  FROM pg_stat_xact_user_tables WHERE relid = 'memtx.records'::regclass;
SELECT pg_temp.try(format('UPDATE memtx.records SET state = ''committed'' WHERE id = %s', :rq));
SELECT pg_temp.try(format('UPDATE memtx.records SET state = ''action_safe'' WHERE id = %s', :rq));
COMMIT;
SELECT state, reason FROM memtx.history WHERE record_id = :rp ORDER BY pos;
SELECT pg_temp.try(format('UPDATE memtx.records SET state = ''committed'' WHERE id = %s', :rq));
SELECT state FROM memtx.commit(:tq);
SELECT state, reason FROM memtx.history WHERE record_id = :rq ORDER BY pos;
