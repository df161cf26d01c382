"""``kg serve``: the graph over HTTP, with Oxigraph's own SPARQL server behind kg's front."""
