"""What a run leaves: run folders and results.json, text tables, charts and HTML pages."""
