"""Code every stage shares, below them all: it imports nothing of kg but `kg.errors`."""
