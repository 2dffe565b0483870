"""A conversation's messages (docs/chat.md#conversations): the last ``KEEP`` per conversation are kept
in the database file (storage/chat.py), 30 days at most as Manticore keeps them; on a read-only
database (or when the file cannot be written) they are kept in this process's memory instead, bounded
to ``MEMORY_CONVERSATIONS`` conversations, the least recently used dropped first."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict

KEEP = 40                       # messages kept per conversation (20 questions and answers)
TTL = 30 * 24 * 3600            # seconds (Manticore: a 30-day TTL)
MEMORY_CONVERSATIONS = 1000


class MemoryHistory:
    def __init__(self, conversations: int = MEMORY_CONVERSATIONS, keep: int = KEEP):
        self._data: OrderedDict[tuple[str, str, str], list[tuple[str, str]]] = OrderedDict()
        self._lock = threading.Lock()
        self.conversations, self.keep = conversations, keep

    def load(self, where: str, model: str, conversation: str, limit: int) -> list[tuple[str, str]]:
        with self._lock:
            messages = self._data.get((where, model.lower(), conversation), [])
            return list(messages[-limit:]) if limit > 0 else []

    def append(self, where: str, model: str, conversation: str, messages: list[tuple[str, str]]) -> None:
        key = (where, model.lower(), conversation)
        with self._lock:
            kept = (self._data.pop(key, []) + messages)[-self.keep:]
            self._data[key] = kept
            while len(self._data) > self.conversations:
                self._data.popitem(last=False)

    def drop_model(self, where: str, model: str) -> None:
        with self._lock:
            for key in [k for k in self._data if k[0] == where and k[1] == model.lower()]:
                del self._data[key]


MEMORY = MemoryHistory()


def now() -> float:
    return time.time()
