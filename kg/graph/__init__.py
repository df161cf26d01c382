"""The graph: the networkx model of papers, concepts and venues, its figures and graph.json."""
