-- Which embedding models can a column name? SHOW MODELS lists them with their dimensions,
-- where their files come from, their licence and the fingerprint a column records.
-- Run it: tessera -t < sql_examples/models.sql

SHOW MODELS LIKE 'all-MiniLM-L6-v2';

CREATE TABLE notes (body text,
  v float_vector knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='body');
INSERT INTO notes (body) VALUES ('Rotate the TLS certificates every year.'), ('Lunch is at noon.');
SELECT id, body, knn_dist() FROM notes WHERE knn(v, 1, 'certificate rotation');
