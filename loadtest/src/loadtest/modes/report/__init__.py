"""The report mode."""
