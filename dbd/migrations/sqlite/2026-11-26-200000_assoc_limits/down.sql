DROP TABLE assoc_limits;
