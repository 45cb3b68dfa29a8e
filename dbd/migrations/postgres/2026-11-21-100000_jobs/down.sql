DROP TABLE job_spans;
DROP TABLE record_cursors;
DROP TABLE node_events;
DROP TABLE job_steps;
DROP TABLE job_runs;
