"""``python -m kg.serve [options]``: ``kg serve`` (the load benchmark and the tests run it as its own process)."""

import sys

from kg.cli import main

main(["serve", *sys.argv[1:]])
