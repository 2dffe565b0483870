-- MySQL's LOAD DATA clauses. With FIELDS / LINES / IGNORE n LINES / @variables / SET the file is
-- MySQL's delimited text whatever its extension (here a .txt, which would otherwise load as one
-- document). Run from the repository root: paths are relative to the working directory.
CREATE TABLE orders (
  order_id int PRIMARY KEY,
  customer varchar(100) NOT NULL,
  qty int DEFAULT 1,
  total double,
  note text DEFAULT 'none'
);

-- A header line, commas, quoted fields (one with a comma, one with a line break), \N for NULL, and a
-- last line one field short: its note takes the column's DEFAULT, with Warning 1261.
LOAD DATA INFILE 'sql_examples/data/orders.txt' INTO TABLE orders
  FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"'
  LINES TERMINATED BY '\n'
  IGNORE 1 LINES
  (order_id, customer, @city, qty, @price, note)
  SET total = qty * @price;
SHOW WARNINGS;

SELECT order_id, customer, qty, total, note FROM orders ORDER BY order_id;

-- The same file again: IGNORE skips the rows whose key is already there (Warning 1062 each).
LOAD DATA INFILE 'sql_examples/data/orders.txt' IGNORE INTO TABLE orders
  FIELDS TERMINATED BY ',' ENCLOSED BY '"' IGNORE 1 LINES
  (order_id, customer, @city, qty, @price, note);
SELECT COUNT(*) AS orders FROM orders;
