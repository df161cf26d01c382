"""The view: the graph as an interactive page (graph.html and kg serve's explorer)."""
