"""Framework integrations: tesseradb as a LangChain vector store (``tesseradb.integrations.langchain``,
extra ``langchain``) and as a LlamaIndex vector store (``tesseradb.integrations.llama_index``, extra
``llama-index``). They are programs on the public API (``tesseradb.connect``, the DB-API,
``Connection.embed``), like the shell and the server; docs/integrations.md."""
