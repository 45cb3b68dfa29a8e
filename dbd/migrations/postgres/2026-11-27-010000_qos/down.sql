DROP TABLE job_qos;
DROP TABLE assoc_qos;
DROP TABLE qos;
