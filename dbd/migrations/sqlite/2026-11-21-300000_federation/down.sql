DROP TABLE fed_controllers;
DROP TABLE fed_event_heads;
DROP TABLE fed_events;
DROP TABLE fed_jobs;
