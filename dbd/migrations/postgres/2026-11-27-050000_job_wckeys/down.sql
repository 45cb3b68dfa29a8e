DROP TABLE job_wckeys;
