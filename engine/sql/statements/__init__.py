"""Handlers, one module per statement family: each turns one kind of statement into a Result."""
