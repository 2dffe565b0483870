-- Vectors you supply: one vector per row (float_vector) or many (float_vector_array), searched with knn().
-- Run it: tessera -t < sql_examples/vectors.sql

CREATE TABLE photos (
  caption text,
  album   string,
  taken   timestamp,
  v       float_vector knn_type='hnsw' knn_dims='4' hnsw_similarity='cosine'
);

INSERT INTO photos (id, caption, album, taken, v) VALUES
  (1, 'red sunset over the sea',  'holiday', '2024-07-01 20:15:00', (0.9, 0.1, 0.0, 0.1)),
  (2, 'orange sunset, mountains', 'holiday', '2024-07-02 20:40:00', (0.8, 0.3, 0.1, 0.0)),
  (3, 'green forest path',        'hikes',   '2024-05-12 10:00:00', (0.1, 0.9, 0.2, 0.0)),
  (4, 'blue lake at noon',        'hikes',   '2024-05-13 12:30:00', (0.0, 0.3, 0.9, 0.1)),
  (5, 'cat on the sofa',          'home',    '2024-01-03 18:00:00', (0.1, 0.1, 0.1, 0.9)),
  (6, 'not scanned yet',          'home',    '2024-01-04 09:00:00', ());

-- The three photos nearest to a reddish query vector; knn_dist() is 1 - cosine.
SELECT id, caption, ROUND(knn_dist(), 4) AS dist
FROM photos WHERE knn(v, 3, (1.0, 0.2, 0.0, 0.0));

-- Other conditions filter first: the 2 nearest among the hikes.
SELECT id, caption, album, ROUND(knn_dist(), 4) AS dist
FROM photos WHERE knn(v, 2, (1.0, 0.2, 0.0, 0.0)) AND album = 'hikes';

-- More like photo 2 (it leaves itself out), newest first.
SELECT id, caption, FROM_UNIXTIME(taken) AS taken
FROM photos WHERE knn(v, 3, 2) ORDER BY taken DESC;

-- A document with several vectors: its distance is that of its closest vector, and k counts documents.
CREATE TABLE pages (
  title  text,
  chunks float_vector_array knn_type='hnsw' knn_dims='3' hnsw_similarity='l2'
);

INSERT INTO pages (id, title, chunks) VALUES
  (1, 'Installing',   [[0, 0, 1], [0, 1, 0], [1, 0, 0]]),
  (2, 'Upgrading',    [[0, 0.9, 0.1]]),
  (3, 'Backups',      [[5, 5, 5], [4, 4, 4]]),
  (4, 'Empty page',   []);

SELECT id, title, LENGTH(chunks) AS n_vectors FROM pages ORDER BY id;

SELECT id, title, knn_dist() FROM pages WHERE knn(chunks, 2, (0, 1, 0));

-- knn_dist() in WHERE and ORDER BY; k documents first, then the distance test.
SELECT id, title, ROUND(knn_dist(), 4) AS d FROM pages WHERE knn(chunks, 10, (0, 1, 0)) AND knn_dist() < 20
ORDER BY d DESC;

-- How the search runs: exact (few vectors) or graph (HNSW).
EXPLAIN SELECT id FROM pages WHERE knn(chunks, 2, (0, 1, 0));

-- Deleted rows are never found; OPTIMIZE TABLE drops them from the graph; results stay the same.
DELETE FROM pages WHERE id = 2;
SELECT id, title, knn_dist() FROM pages WHERE knn(chunks, 2, (0, 1, 0));
OPTIMIZE TABLE pages;
SELECT id, title, knn_dist() FROM pages WHERE knn(chunks, 2, (0, 1, 0));

-- A B-tree index on the columns you filter on beside knn(): the filter runs first, through the index.
CREATE INDEX by_title ON pages (title);
SHOW INDEX FROM pages;
EXPLAIN SELECT id FROM pages WHERE knn(chunks, 2, (0, 1, 0)) AND title = 'Installing';
SELECT id, title, knn_dist() FROM pages WHERE knn(chunks, 2, (0, 1, 0)) AND title = 'Installing';
