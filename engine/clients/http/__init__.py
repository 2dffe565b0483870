"""Manticore's HTTP JSON API (``tessera serve --http``): ``/sql``, ``/cli``, ``/search``, ``/insert``,
``/replace``, ``/update``, ``/delete``, ``/bulk``, ``/_bulk`` and ``/<table>/_doc``, served by uvicorn
beside the MySQL protocol over the same database (docs/http.md).

Every request becomes the engine's own statements through the public DB-API, values bound as
parameters; identifiers are checked against the table's columns and quoted.
"""
