"""The whole build: read -> extract -> merge -> graph -> RDF, the map's files and the store.

`stages` runs the stages in order; `outputs` writes the files, each to a temporary file renamed into
place only when all of them are ready (a failed or interrupted build leaves the previous outputs
whole); `folder` checks and locks the output folder; `fork` runs the views' writer beside the RDF's;
`manifest` records what was built from what, so that a rebuild recomputes only what changed.
"""

from kg.pipeline.outputs import OUTPUT_FILES, keyphrase_records, render_outputs
from kg.pipeline.stages import BuildResult, build

__all__ = ["BuildResult", "OUTPUT_FILES", "build", "keyphrase_records", "render_outputs"]
