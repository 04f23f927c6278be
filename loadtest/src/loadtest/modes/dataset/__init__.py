"""The dataset mode."""
