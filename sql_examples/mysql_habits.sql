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
SHOW COLUMNS FROM books;
SHOW FULL COLUMNS FROM books LIKE 'y%';
SHOW TABLE STATUS LIKE 'books';
SHOW VARIABLES LIKE 'character_set_client';
SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE();
SELECT COLUMN_NAME, DATA_TYPE, COLUMN_KEY FROM information_schema.COLUMNS
  WHERE TABLE_NAME = 'books' ORDER BY ORDINAL_POSITION;
