"""Remote models over HTTP: the shared layer and the embedding providers built on it.

The layer (a stable API, reused by conversational search, docs/models.md#the-remote-layer):

- :mod:`.http`: :class:`~.http.JsonEndpoint` — one retrying JSON POST (httpx, pooled connections),
  backoff on 429/5xx honouring ``Retry-After``, bounded by a timeout; failures are
  :class:`~.http.RemoteError` with fields (``kind``, ``url``, ``status``, ``attempts``, ``detail``).
- :mod:`.secrets`: API keys never shown back: ``redact_key``, ``redact_statement``, ``redact_text``,
  and ``env:NAME`` references.
- :mod:`.access`: :class:`~.access.RemoteAccess`, the operator's allow-list (``--allow-remote URL-PREFIX``,
  ``--allow-env NAME``) that servers pass down; ``check_url`` and ``api_key`` enforce it.

The providers (:mod:`.providers`) turn texts into vectors through that layer.
"""
