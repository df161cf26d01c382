"""Domain errors. The CLI turns each into a one-line message and its exit code.

Exit codes (documented in the README):
  1  unexpected internal error (a bug: please report it)
  2  usage or input error (a path, a file, a row, an executor or its scheduler)
  3  model error (the packaged model is missing or does not match its checksum)
  4  query error (a SPARQL query that cannot be found, parsed or run, or a --bind value it cannot take)
  5  output error (an output folder that cannot be written)
  6  validation error (a graph that does not conform to kg's SHACL shapes)
"""

from __future__ import annotations


class KGError(Exception):
    """Base class of every error kg raises on purpose."""

    exit_code = 1


class InputError(KGError):
    """An input path, file, paragraph or row that kg cannot use."""

    exit_code = 2


class ExecutorError(KGError):
    """An executor spec that does not parse, a Dask scheduler that does not answer, or
    workers that keep dying."""

    exit_code = 2


class ModelError(KGError):
    """The packaged embedding model or spaCy pipeline is missing or wrong."""

    exit_code = 3


class QueryError(KGError):
    """A SPARQL query that cannot be found, parsed or run."""

    exit_code = 4


class OutputError(KGError):
    """An output that cannot be written."""

    exit_code = 5


class ValidationError(KGError):
    """A graph that does not conform to kg's SHACL shapes."""

    exit_code = 6


class OutputsWritten(KeyboardInterrupt):
    """An interrupt (Ctrl-C) that came while a build renamed its outputs into place: it waited
    until they all were, so the output folder holds the new build whole."""
