"""A chat model's options, as Manticore's CREATE CHAT MODEL takes them (docs/chat.md), checked once.

Manticore's options and ranges: ``model`` ('provider:model', required), ``description``, ``api_key``,
``base_url``, ``timeout`` (1..65536 s), ``retrieval_limit`` (1..50, default 5), ``max_document_length``
(0 = no limit, else 100..65536 characters, default 2000). tesseradb adds what its passages make
possible: ``retrieval`` ('hybrid' (default) or 'knn'), ``context`` ('section' (default): the matched
section when it fits max_document_length, else the matched passage; 'passage': always the passage),
``max_context_length`` (characters of sources in one prompt, default 12000, about 3,000 tokens),
``history_messages`` (past messages sent with a question, default 10) and ``custom_prompt``
(instructions added to the system prompt).
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, replace

from tesseradb import errors
from tesseradb.embed.remote import secrets
from tesseradb.errors import UserError

NAME = re.compile(r"^[A-Za-z0-9_]+$")
MODEL = re.compile(r"^([A-Za-z0-9_.-]+):(.+)$")

# provider -> (base URL, the environment variable a key may come from when api_key is not set)
PROVIDERS = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "ollama": ("http://127.0.0.1:11434/v1", None),
}

# option -> (kind, low, high) for numbers; text options have kind "text"
OPTIONS: dict[str, tuple[str, int, int]] = {
    "model": ("text", 0, 0), "description": ("text", 0, 0), "api_key": ("text", 0, 0),
    "base_url": ("text", 0, 0), "custom_prompt": ("text", 0, 0),
    "retrieval": ("choice", 0, 0), "context": ("choice", 0, 0),
    "timeout": ("int", 1, 65536), "retrieval_limit": ("int", 1, 50),
    "max_document_length": ("int", 100, 65536), "max_context_length": ("int", 200, 1_000_000),
    "history_messages": ("int", 0, 100),
}
CHOICES = {"retrieval": ("hybrid", "knn"), "context": ("section", "passage")}


@dataclass(frozen=True)
class ChatModel:
    name: str
    provider: str
    model: str                        # the provider's model id, sent unchanged
    description: str = ""
    api_key: str | None = None        # as written: a key, or env:NAME (never shown back)
    base_url: str | None = None
    timeout: int = 60
    retrieval_limit: int = 5
    max_document_length: int = 2000
    max_context_length: int = 12000
    history_messages: int = 10
    retrieval: str = "hybrid"
    context: str = "section"
    custom_prompt: str = ""
    created_at: str = ""

    @property
    def model_text(self) -> str:
        return f"{self.provider}:{self.model}"

    @property
    def url(self) -> str:
        """The chat-completions endpoint: base_url (or the provider's) + /chat/completions, unless the
        URL already names it."""
        base = (self.base_url or PROVIDERS.get(self.provider, ("", None))[0]).rstrip("/")
        return base if base.endswith("/chat/completions") else base + "/chat/completions"

    @property
    def key_variable(self) -> str | None:
        return PROVIDERS.get(self.provider, ("", None))[1]

    def options_json(self) -> str:
        data = asdict(self)
        for key in ("name", "created_at"):
            data.pop(key)
        return json.dumps(data)

    @classmethod
    def from_row(cls, name: str, options_json: str, created_at: str) -> "ChatModel":
        data = json.loads(options_json)
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(name=name, created_at=created_at, **known)

    def describe(self) -> list[tuple[str, str]]:
        """DESCRIBE CHAT MODEL's rows: the key shown as HIDDEN, as Manticore shows it."""
        rows = [("name", self.name), ("model", self.model_text), ("description", self.description),
                ("api_key", "HIDDEN" if self.api_key else ""), ("base_url", self.base_url or ""),
                ("timeout", str(self.timeout)), ("retrieval_limit", str(self.retrieval_limit)),
                ("max_document_length", str(self.max_document_length)),
                ("max_context_length", str(self.max_context_length)),
                ("history_messages", str(self.history_messages)), ("retrieval", self.retrieval),
                ("context", self.context), ("custom_prompt", self.custom_prompt),
                ("created_at", self.created_at)]
        return rows


def _error(message: str) -> UserError:
    return UserError(message, errors.SqlSyntaxError)


def _number(key: str, value: str) -> int:
    kind, low, high = OPTIONS[key]
    try:
        number = int(str(value).strip())
    except ValueError:
        raise _error(f"{key} must be an integer, got '{value}'") from None
    if key == "max_document_length" and number == 0:
        return 0
    if not low <= number <= high:
        zero = "0 or " if key == "max_document_length" else ""
        raise _error(f"{key} must be {zero}between {low} and {high}, got {number}")
    return number


def check_name(name: str) -> str:
    if not NAME.match(name):
        raise _error(f"chat model name '{name}' is invalid: use letters, numbers and underscores only")
    return name


def from_options(name: str, options: tuple[tuple[str, str], ...], created_at: str) -> ChatModel:
    """CREATE CHAT MODEL's options -> a ChatModel, or the first problem as ERROR 1064."""
    check_name(name)
    seen: dict[str, object] = {}
    for key, value in options:
        if key not in OPTIONS:
            raise _error(f"unknown chat model option '{key}'; expected {', '.join(sorted(OPTIONS))}")
        if key in seen:
            raise _error(f"chat model option '{key}' is given twice")
        kind = OPTIONS[key][0]
        if kind == "int":
            seen[key] = _number(key, value)
        elif kind == "choice":
            if str(value).lower() not in CHOICES[key]:
                raise _error(f"{key} must be one of {', '.join(CHOICES[key])}, got '{value}'")
            seen[key] = str(value).lower()
        else:
            seen[key] = str(value)
    secrets.check_not_redacted(seen.get("api_key"))      # type: ignore[arg-type]
    if "model" not in seen:
        raise _error("CREATE CHAT MODEL requires model='provider:model', e.g. model='openai:gpt-4o-mini'")
    match = MODEL.match(str(seen.pop("model")).strip())
    if match is None:
        raise _error("model must use the provider:model format, e.g. model='openai:gpt-4o-mini'")
    provider, model_id = match.group(1).lower(), match.group(2)
    if provider not in PROVIDERS and not seen.get("base_url"):
        raise _error(f"chat provider '{provider}' has no default endpoint: give base_url "
                     f"(an OpenAI-compatible /v1 URL); known providers: {', '.join(sorted(PROVIDERS))}")
    spec = ChatModel(name=name, provider=provider, model=model_id, created_at=created_at)
    return replace(spec, **seen)      # type: ignore[arg-type]
