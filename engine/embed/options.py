"""A vector column's model options, read once: what changes the vectors a model gives.

Column options (docs/models.md#column-options), all optional, next to ``model_name``:

- ``query_prefix``, ``document_prefix``: text put before every query / every document chunk the
  model reads (e5's ``query: `` / ``passage: ``); they override the model's own prompts.
- ``pooling``: ``mean``, ``cls``, ``max`` or ``lasttoken``; overrides ``1_Pooling/config.json``.
- ``dims``: keep the first N numbers and re-normalise (Matryoshka models); above the width refused.
- ``api_key``, ``api_url``, ``api_timeout``: Manticore's remote-model options; ``batch_size``: texts
  per request (within the provider's limit); ``tokenizer``: a model name or folder whose tokenizer
  counts a remote model's tokens (else a conservative estimate, docs/models.md#token-budgets).

Only the options given are kept, so a column without them keeps the fingerprint it always had.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tesseradb import errors
from tesseradb.embed.pooling import POOLINGS
from tesseradb.embed.remote import secrets
from tesseradb.errors import UserError

PREFIX_OPTIONS = ("query_prefix", "document_prefix")
LOCAL_OPTIONS = PREFIX_OPTIONS + ("pooling", "dims")
REMOTE_OPTIONS = ("api_key", "api_url", "api_timeout", "batch_size", "tokenizer")
MODEL_OPTIONS = LOCAL_OPTIONS + REMOTE_OPTIONS
MAX_BATCH = 2048
_NUMBER = re.compile(r"[0-9]+")


def _number(name: str, value: str, low: int, high: int) -> int:
    text = value.strip()
    if not _NUMBER.fullmatch(text) or not low <= int(text) <= high:
        raise UserError(f"{name} must be an integer from {low} to {high}, not '{value}'", errors.SqlSyntaxError)
    return int(text)


@dataclass(frozen=True)
class ModelOptions:
    query_prefix: str | None = None
    document_prefix: str | None = None
    pooling: str | None = None
    dims: int | None = None
    api_key: str | None = None
    api_url: str | None = None
    api_timeout: int = 0
    batch_size: int | None = None
    tokenizer: str | None = None

    @classmethod
    def parse(cls, options: Mapping[str, str] | None) -> ModelOptions:
        """From the column's options (names lower-case); a bad value is ERROR 1064 naming it."""
        given = {k.lower(): v for k, v in (options or {}).items() if k.lower() in MODEL_OPTIONS}
        pooling = given.get("pooling")
        if pooling is not None:
            pooling = pooling.strip().lower().replace("_", "").replace("-", "")
            pooling = {"lasttoken": "lasttoken", "last": "lasttoken"}.get(pooling, pooling)
            if pooling not in POOLINGS:
                raise UserError(f"unknown pooling '{given['pooling']}'; expected mean, cls, max or lasttoken",
                                errors.SqlSyntaxError)
        secrets.check_not_redacted(given.get("api_key"))
        return cls(
            query_prefix=given.get("query_prefix"), document_prefix=given.get("document_prefix"),
            pooling=pooling,
            dims=_number("dims", given["dims"], 1, 1 << 16) if "dims" in given else None,
            api_key=given.get("api_key") or None, api_url=(given.get("api_url") or "").strip() or None,
            api_timeout=_number("api_timeout", given["api_timeout"], 0, 1 << 20) if "api_timeout" in given else 0,
            batch_size=_number("batch_size", given["batch_size"], 1, MAX_BATCH) if "batch_size" in given else None,
            tokenizer=given.get("tokenizer") or None,
        )

    def key(self) -> tuple:
        """What distinguishes two opened models (the key included: it is read at use)."""
        return (self.query_prefix, self.document_prefix, self.pooling, self.dims, self.api_key, self.api_url,
                self.api_timeout, self.batch_size, self.tokenizer)

    @property
    def local_only_given(self) -> bool:
        return any(v is not None for v in (self.api_key, self.api_url, self.batch_size, self.tokenizer)) \
            or self.api_timeout != 0


NONE = ModelOptions()
