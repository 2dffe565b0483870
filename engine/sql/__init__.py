"""sql layer."""
