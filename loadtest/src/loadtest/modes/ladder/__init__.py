"""The ladder mode."""
