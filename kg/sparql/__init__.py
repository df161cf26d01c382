"""SPARQL: the local engine (Oxigraph), canned queries, bindings, the on-disk store, remote endpoints."""
