DROP TABLE job_id_cursors;
DROP TABLE associations;
DROP TABLE users;
DROP TABLE accounts;
DROP TABLE clusters;
DROP TABLE federations;
