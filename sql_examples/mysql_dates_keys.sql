-- MySQL users lose nothing (docs/compatibility.md#mysql, docs/types.md): declared keys keep 0,
-- DATE/DATETIME are dates, a timestamp compares with a date string, DDL commits, db.table works.
CREATE TABLE tab0 (pk INTEGER PRIMARY KEY, col0 INTEGER);
INSERT INTO tab0 VALUES (0, 10), (1, 11);
SELECT * FROM tab0 ORDER BY pk;

CREATE TABLE counters (k INT PRIMARY KEY AUTO_INCREMENT, label VARCHAR(20));
INSERT INTO counters VALUES (0, 'generated'), (NULL, 'generated too'), (10, 'given');
SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO';
INSERT INTO counters VALUES (0, 'kept as 0');
SET sql_mode = DEFAULT;
SELECT k, label FROM counters ORDER BY k;

CREATE TABLE events (name VARCHAR(20), created_at DATETIME, day DATE, took TIME, ts TIMESTAMP);
INSERT INTO events (name, created_at, day, took, ts) VALUES
  ('launch', '2025-06-01 10:00:00', '2025-06-01', '01:30:00', '2025-06-01 10:00:00'),
  ('beta', '2023-05-06 07:08:09', '2023-05-06', '838:59:59', '2023-05-06');
SELECT name, created_at, day, took FROM events WHERE created_at > '2024-01-01';
SELECT name FROM events WHERE ts > '2024-01-01';
SELECT YEAR(day) AS y, COUNT(*) AS n FROM events GROUP BY YEAR(day) ORDER BY y;
SELECT name, DATE_FORMAT(created_at, '%Y/%m') AS month, DATE_ADD(day, INTERVAL 1 DAY) AS next_day FROM events;

-- the database's name (DATABASE()) qualifies tables
SELECT DATABASE();
SELECT name FROM main.events ORDER BY name;

-- DDL commits the open transaction, as in MySQL
BEGIN;
INSERT INTO tab0 VALUES (2, 12);
CREATE TABLE notes (body TEXT);
ROLLBACK;
SELECT COUNT(*) FROM tab0;
SHOW TABLES;
