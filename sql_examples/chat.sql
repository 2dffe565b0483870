-- Conversational search (docs/chat.md): chat models are kept in the database file. Creating one calls
-- nothing; CALL CHAT reaches the model's OpenAI-compatible endpoint (a local llama.cpp server, Ollama,
-- vLLM, LM Studio or a hosted one), so this script only manages models.
-- Run it: tessera -t < sql_examples/chat.sql

CREATE TABLE docs (title text, content text,
  embedding float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,content' chunk_strategy='recursive' max_tokens='128');
INSERT INTO docs (id, title, content) VALUES
  (1, 'Vector search', 'Vector search compares embeddings to find semantically similar documents.'),
  (2, 'Full-text search', 'Full-text search matches terms and phrases in indexed text.');

-- Manticore's examples, unchanged; a local server needs only base_url
CREATE CHAT MODEL assistant (model='openai:gpt-4o-mini');
CREATE CHAT MODEL support_assistant (
    model='openai:gpt-4o-mini',
    api_key='your-provider-api-key',
    base_url='http://127.0.0.1:8787/v1',
    timeout=60,
    retrieval_limit=5,
    max_document_length=3000
);
CREATE CHAT MODEL local_llama (model='llamacpp:qwen2.5-3b-instruct', base_url='http://127.0.0.1:8080/v1',
    retrieval='hybrid', context='section', max_context_length=8000);

SHOW CHAT MODELS LIKE '%assistant';
DESCRIBE CHAT MODEL support_assistant;   -- the key is shown as HIDDEN
DROP CHAT MODEL assistant;
DROP CHAT MODEL IF EXISTS assistant;
SHOW CHAT MODELS;
