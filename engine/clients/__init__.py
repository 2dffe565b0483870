"""clients layer."""
