"""The micro mode."""
