DROP TABLE usage_assoc;
DROP TABLE usage_assocs;
DROP TABLE usage_cluster;
DROP TABLE usage_state;
DROP TABLE job_suspends;
ALTER TABLE node_events DROP COLUMN node_count;
ALTER TABLE node_events DROP COLUMN mem_mb;
