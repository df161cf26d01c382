"""``python -m kg.serve [options]``: ``kg serve`` (the load benchmark and the tests run it as its own process)."""

from kg.serve.command import main

main()
