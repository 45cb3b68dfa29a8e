DROP TABLE job_het;
