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

-- Compressed index codes: FAISS's multi-bit RaBitQ, 1 to 8 bits per dimension (here 2). The graph
-- holds the codes; knn() takes k x oversampling candidates from it and ranks them by the exact float32
-- distances SQLite keeps (Manticore's rescore/oversampling; rescore=0 reports the codes' estimates).
CREATE TABLE bags (label text, v float_vector knn_type='hnsw' knn_dims='4' hnsw_similarity='l2' quantization='rabitq' rabitq_bits='2');
INSERT INTO bags (id, label, v) VALUES (1, 'yellow bag', (0.65, 0.19, 0.02, 0.34)), (2, 'white bag', (-0.15, 0.75, 0.09, -0.10));
SELECT id, label, knn_dist() FROM bags WHERE knn(v, 2, (0.29, -0.03, 0.07, 0.03), {oversampling=5.0, rescore=1});
SHOW CREATE TABLE bags;

-- A vector written as the text SELECT prints for it (what a MySQL client reads over the wire), so a
-- row read by a client can be written back as it came; any other string is refused.
CREATE TABLE echo (v float_vector knn_type='hnsw' knn_dims='3' hnsw_similarity='l2', a float_vector_array knn_type='hnsw' knn_dims='2' hnsw_similarity='l2');
INSERT INTO echo (id, v, a) VALUES (1, '0.100000,0.200000,0.300000', '[[1.000000,0.000000],[0.000000,1.000000]]');
SELECT id, TO_STRING(v), TO_STRING(a) FROM echo;
