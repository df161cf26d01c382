"""RDF: the graph as statements in standard vocabularies, written as N-Triples, Turtle and JSON-LD."""
