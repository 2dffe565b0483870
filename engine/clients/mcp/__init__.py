"""``tessera mcp DB``: the database as Model Context Protocol tools for LLM agents (docs/mcp.md).

A program on the public API only, like the shell and the server: ``tesseradb.connect`` and SQL.
schema.py reads the tables, filters.py turns filters into bound conditions, tools.py answers each
tool (plain Python, no MCP), server.py registers them on the official SDK's MCPServer, web.py adds
the bearer token to its streamable HTTP app, cli.py is the command line.
"""
