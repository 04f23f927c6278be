"""Probes: code the harness runs inside each arm's own environment (`python -m
commons.probes.<name>`), never served. Unlike commons proper they reach Pydantic, through the
app they are pointed at, and the libraries only they use (ujson, msgspec) come with the
`probes` extra, which the harness syncs and the app images leave out."""
