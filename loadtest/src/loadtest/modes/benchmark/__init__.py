"""The benchmark mode."""
