DROP TABLE knowledge;
DROP TABLE evals;
DROP TABLE metrics;
DROP TABLE memories;
DROP TABLE sessions;
