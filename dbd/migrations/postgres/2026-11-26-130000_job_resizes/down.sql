DROP TABLE job_resizes;
