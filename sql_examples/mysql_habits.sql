-- What a MySQL script or tool sends first, and the introspection it reads (docs/compatibility.md#mysql).
SET NAMES utf8mb4;
SET autocommit = 1;
SET @min_year = 2020;
SHOW DATABASES;
USE main;
SELECT DATABASE(), VERSION();

CREATE TABLE books (title string, year int, summary text);
CREATE INDEX year_ix ON books (year);
INSERT INTO books (title, year, summary) VALUES
  ('Rotating certificates', 2023, 'How to replace TLS certificates before they expire.'),
  ('Backups', 2019, 'Nightly copies and how to restore them.');
SELECT LAST_INSERT_ID(), ROW_COUNT();

SELECT title FROM books WHERE year >= @min_year;
EXPLAIN SELECT title FROM books WHERE year >= @min_year;    -- the last row names the pass: session_variables
SHOW COLUMNS FROM books;
SHOW FULL COLUMNS FROM books LIKE 'y%';
SHOW TABLE STATUS LIKE 'books';
SHOW VARIABLES LIKE 'character_set_client';
SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE();
SELECT COLUMN_NAME, DATA_TYPE, COLUMN_KEY FROM information_schema.COLUMNS
  WHERE TABLE_NAME = 'books' ORDER BY ORDINAL_POSITION;

-- MySQL DDL: constraints, keys, table options; an integer PRIMARY KEY is the row id
CREATE TABLE authors (
  author_id int PRIMARY KEY AUTO_INCREMENT,
  email varchar(100) NOT NULL UNIQUE,
  name varchar(50) NOT NULL DEFAULT 'anonymous',
  born int CHECK (born > 1800),
  KEY name_ix (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='who wrote what';
INSERT INTO authors (email, born) VALUES ('ada@example.org', 1815);
INSERT INTO authors VALUES (7, 'alan@example.org', 'Alan', 1912);
SELECT * FROM authors ORDER BY author_id;
REPLACE INTO authors (email, name, born) VALUES ('ada@example.org', 'Ada', 1815);
INSERT INTO authors (email, name) VALUES ('alan@example.org', 'A. Turing')
  ON DUPLICATE KEY UPDATE name = VALUES(name);
SELECT author_id, email, name FROM authors WHERE name LIKE 'a%' ORDER BY name;
CREATE VIEW author_names AS SELECT name, born FROM authors;
SELECT * FROM author_names ORDER BY born;
-- MySQL's answers: exact division, case-insensitive text, ONLY_FULL_GROUP_BY off on request
SELECT 1/3, 'abc' = 'ABC', 7 DIV 2;
SET sql_mode = '';
SELECT name, COUNT(*) FROM authors GROUP BY born ORDER BY born;
-- INSERT ... SELECT streams in batches; reading its own table, it copies each row once (a TEMP copy)
INSERT INTO books (title, year, summary) SELECT CONCAT(title, ' (2nd ed.)'), year + 1, summary FROM books;
SELECT title, year FROM books ORDER BY id;
