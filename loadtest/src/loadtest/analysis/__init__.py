"""From records to figures: statistics, the one paired-ratio type, flags and their limits."""
