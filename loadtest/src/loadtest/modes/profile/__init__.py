"""The profile mode."""
