-- all-MiniLM-L6-v2-int8: the built-in model with int8 weights (about 2.9x the tokens per CPU second of float32, recall within
-- a point of float32 on the manual's headings). An opt-in name with its own fingerprint: its vectors
-- never mix with float32 ones. Run it: tessera -t < sql_examples/int8_model.sql

SHOW MODELS LIKE '%int8%';

CREATE TABLE runbooks (title string, body text,
  chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='all-MiniLM-L6-v2-int8' from='title,body' chunk_strategy='recursive' max_tokens=64 overlap_tokens=8);
INSERT INTO runbooks (title, body) VALUES
  ('Certificates', 'Rotate the TLS certificates every year. Replace the key pair, then reload the listener.'),
  ('Backups', 'Snapshots are taken nightly and kept for thirty days. Restore one with the restore command.'),
  ('Lunch', 'The team has lunch on Fridays at noon.');
SELECT id, title, knn_dist() FROM runbooks WHERE knn(chunks, 2, 'how do I renew a certificate');
SHOW CREATE TABLE runbooks;
