DROP TABLE assoc_fairshare;
