/*
 * memtx 0.2.0 -> 0.3.0.
 *
 * A step brings a store installed at 0.2.0 to the catalog of sql/memtx.sql
 * (what CREATE EXTENSION memtx runs); test/sql/upgrade.sql compares the two.
 * Sections are labelled with the SPEC section they serve, like
 * sql/memtx.sql.
 */
\echo Use "ALTER EXTENSION memtx UPDATE TO '0.3.0'" to load this file. \quit

-- §7, §9: the 0.1.0 -> 0.2.0 step redefined memtx.review_queue with CREATE
-- OR REPLACE VIEW, which dropped its security_invoker option: the view read
-- memtx.records with its owner's rights, so any role saw every record
-- quarantined for review, values included.  It applies the reader's
-- row-level security again, as memtx.in_flight does.
ALTER VIEW memtx.review_queue SET (security_invoker = true);
