"""The up mode."""
