"""Helpers of the HTTP JSON API tests: the served database's URL, raw requests, a DB-API twin."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

import tesseradb

DDL = ("CREATE TABLE docs (title text, body text, team string, year int, "
       "v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' "
       "from='title,body' chunk_strategy='sentence' max_tokens='32')")
DOCS = [
    (1, "Database operations", "Backups run every night at two and are kept for seven days. To rotate the "
     "replication certificate, request a new one from the internal authority and restart replication.", "ops", 2024),
    (2, "Web site", "The public web site renews its TLS certificates automatically. Deployments go out on "
     "Tuesdays after the tests pass.", "web", 2023),
    (3, "Office", "Coffee is served at eight. The kitchen closes at six; label your food in the fridge.", "office", 2022),
    (4, "Log rotation", "Send USR1 to the daemon, or run FLUSH LOGS, and it reopens its log files.", "ops", 2021),
    (5, "Holidays", "The office is closed between Christmas and New Year. Book leave two weeks ahead.", "office", 2024),
    (6, "Incident review", "Every outage gets a written review within five days: timeline, cause, changes.", "ops", 2023),
]


@dataclass
class Served:
    handle: Any
    path: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.handle.http_port}"

    def post(self, path: str, json: Any = None, **kw: Any) -> httpx.Response:
        return httpx.post(self.url + path, json=json, timeout=120, **kw)

    def sql(self, statement: str) -> Any:
        r = httpx.post(self.url + "/sql?mode=raw", content=statement.encode(), timeout=120,
                       headers={"Content-Type": "text/plain"})
        assert r.status_code == 200, r.text
        return r.json()

    def dbapi(self) -> Any:
        return tesseradb.connect(self.path, autocommit=True)


def document(row: tuple) -> dict[str, Any]:
    doc_id, title, body, team, year = row
    return {"title": title, "body": body, "team": team, "year": year}
