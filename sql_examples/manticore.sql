-- Manticore's vector SQL, as its manual writes it, runs here unchanged (docs/compatibility.md).
-- Run it: tessera -t < sql_examples/manticore.sql

-- Auto-embeddings on every text field: FROM='' (the manual's "Using all text fields")
CREATE TABLE products (
    title TEXT,
    description TEXT,
    embedding_vector FLOAT_VECTOR KNN_TYPE='hnsw' HNSW_SIMILARITY='l2'
    MODEL_NAME='Xenova/all-MiniLM-L6-v2' FROM=''
);

INSERT INTO products (title, description) VALUES
('machine learning artificial intelligence', 'models that learn from data'),
('banana fruit sweet yellow', 'a tropical fruit'),
('smartphone', 'latest mobile device with advanced features');

-- knn() without k: k comes from LIMIT (Manticore's default LIMIT 20 when there is none)
SELECT id, title, knn_dist() FROM products WHERE knn(embedding_vector, 'machine learning') LIMIT 2;

-- SHOW CREATE TABLE keeps model_name and from='' as written: the statement re-creates the table
SHOW CREATE TABLE products;

-- Vectors you supply, searched with Manticore's knn options; SELECT * adds @knn_dist
create table test ( title text, image_vector float_vector knn_type='hnsw' knn_dims='4' hnsw_similarity='l2' quantization='8bit' );
insert into test values ( 1, 'yellow bag', (0.653448,0.192478,0.017971,0.339821) ), ( 2, 'white bag', (-0.148894,0.748278,0.091892,-0.095406) );
select id, knn_dist() from test where knn ( image_vector, (0.286569,-0.031816,0.066684,0.032926), { ef=2000, oversampling=3.0, rescore=1 } );
select * from test where knn ( image_vector, 5, (0.286569,-0.031816,0.066684,0.032926) ) and @knn_dist < 0.5;
select id, TO_STRING(image_vector) from test;

-- Find similar docs by id (the document itself is left out)
select id, knn_dist() from test where knn ( image_vector, 5, 1 );

-- Manticore's DDL spellings: engine=, string attribute indexed, a table without columns
create table tbl(title string attribute indexed, type int, price float engine='rowwise') engine='columnar';
create table t;
insert into t values (17);
select * from t;

-- Rebuild the vector indexes, and the embeddings from the source text with the saved model
alter table test rebuild knn;
alter table products rebuild embeddings embedding_vector;
SELECT id, title FROM products WHERE knn(embedding_vector, 3, 'a yellow fruit');
