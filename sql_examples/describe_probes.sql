-- DESCRIBE carries the declared facts in Manticore's layout; the probes GUI tools send (docs/statements.md).
CREATE TABLE people (user_id int PRIMARY KEY AUTO_INCREMENT, name varchar(255) NOT NULL DEFAULT '',
  email varchar(80) UNIQUE, bio text);
DESCRIBE people;

-- Manticore's spellings show what Manticore shows; a KNN-indexed vector column shows knn alone, as
-- Manticore prints it; SHOW COLUMNS (Extra) and SHOW CREATE TABLE carry its options
CREATE TABLE articles (title text, tag string, code text stored, ts timestamp,
  v float_vector knn_type='hnsw' knn_dims='4' hnsw_similarity='cosine');
DESC articles;
SHOW COLUMNS FROM articles LIKE 'v';
SHOW COLUMNS FROM people;

-- keys in MySQL's shapes: PRIMARY KEY / UNIQUE KEY lines, SHOW INDEX with MySQL's columns
SHOW CREATE TABLE people;
SHOW INDEX FROM people;

-- what DBeaver, Workbench and DataGrip ask first: the same answers here and over tessera serve
SHOW ENGINES;
SHOW CHARACTER SET LIKE 'utf8mb4';
SHOW COLLATION LIKE 'utf8mb4_0900%';
SHOW GRANTS;
SELECT TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES ORDER BY TABLE_NAME;
SELECT COLLATION_NAME, IS_DEFAULT FROM information_schema.COLLATIONS WHERE CHARACTER_SET_NAME = 'utf8mb4';
DROP TABLE people, articles;
