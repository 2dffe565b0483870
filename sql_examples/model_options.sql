-- A model column's own options (docs/models.md#column-options): the prefix a model wants before
-- every query, and dims for Matryoshka models (the first N numbers, re-normalised). Any of them is
-- part of the model's fingerprint, so vectors of different settings never mix; SHOW MODELS lists
-- the model as this column uses it (prefixes, width, window, the columns that use it).
-- Run it: tessera -t < sql_examples/model_options.sql
-- (all-MiniLM-L6-v2 was trained for neither: these options are for models such as e5 or bge)

CREATE TABLE faq (question TEXT, answer TEXT,
  v FLOAT_VECTOR KNN_TYPE='hnsw' HNSW_SIMILARITY='cosine' MODEL_NAME='all-MiniLM-L6-v2' FROM='question,answer'
  query_prefix='question: ' dims='256');
INSERT INTO faq (question, answer) VALUES
  ('How do I rotate a certificate?', 'Run the renew command before it expires.'),
  ('When is lunch?', 'At noon, in the small room.');
SELECT question, knn_dist() FROM faq WHERE knn(v, 1, 'renew TLS');
SHOW MODELS;
SHOW CREATE TABLE faq;
