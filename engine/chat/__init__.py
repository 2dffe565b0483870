"""Conversational search (docs/chat.md): chat models, the prompt built from the passages the engine's own
search finds, the OpenAI-compatible chat endpoint, and conversation histories.

- :mod:`.spec`: a chat model's options (Manticore's CREATE CHAT MODEL), checked once;
- :mod:`.prompt`: sources packed into the prompt within a budget, each labelled ``[ref:<id>]``;
- :mod:`.llm`: chat completions over the remote layer (``tesseradb.embed.remote``), plain or streamed;
- :mod:`.history`: a conversation's last messages, in the file or (read-only) in memory.
"""
