"""The build manifest: what a build was made from and what it wrote, so that a rebuild with
nothing changed skips everything.

``<out>/.cache/manifest.json`` holds a key and the output files as written. The key is the
SHA-256 of everything the outputs depend on: each input file's name (as the build reports it)
and bytes, the extraction fingerprint (model, spaCy pipeline, settings, extractor version),
the base IRI, kg's version and the SHA-256 of its own source files, the versions of the
libraries that write outputs, and `FORMAT`. Each output is recorded with its size,
``st_mtime_ns`` and SHA-256.

A rebuild whose key matches, and whose every output still has the recorded size and
modification time, is up to date. Size and mtime rather than a hash of 500 MB of outputs:
kg only ever replaces an output by renaming a new file over it, which gives it a new inode
and a new mtime (nanoseconds), and any editor or tool that writes a file updates its mtime;
only a deliberate ``touch -d`` to the very nanosecond after an edit of the same length would
go unseen (the check make, rsync and git's index rely on). `outputs_intact` with
``verify=True`` compares the hashes too.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from kg.common.fingerprints import folder_digest, library_versions
from kg.common.folders import MANIFEST
from kg.extract.embed import file_sha256

__all__ = ["FORMAT", "MANIFEST", "build_key", "code_digest", "outputs_intact", "read_manifest", "write_manifest",
           "forget_manifest"]

FORMAT = 8  # the outputs' format version: bump it when kg writes any output differently (what each bump changed: `git log -L` on this line)
_LIBRARIES = ("igraph", "networkx", "pyoxigraph", "pyvis", "rdflib")


def code_digest(package: Path | None = None) -> str:
    """SHA-256 of kg's own files (its Python modules and the page's templates, scripts and
    styles; those under *package*, by default the whole kg package): a change to any of them
    changes the key, version or not."""
    return folder_digest(package) if package is not None else _own_code_digest()


@cache
def _own_code_digest() -> str:
    """`code_digest` of the kg package (~40 ms: the up-to-date check and the build each ask for it)."""
    return folder_digest(Path(__file__).resolve().parents[1])


def build_key(inputs: Sequence[tuple[str, str]], *, fingerprint: str, base: str, kg_version: str,
              extra: Mapping[str, object] | None = None) -> str:
    """The key of a build of *inputs* ((name as reported, SHA-256 of the bytes read) pairs, in
    reading order)."""
    payload = {
        "format": FORMAT,
        "inputs": [[name, digest] for name, digest in inputs],
        "fingerprint": fingerprint,
        "base": base,
        "kg": kg_version,
        "code": code_digest(),
        "libraries": library_versions(_LIBRARIES),
        "extra": dict(extra or {}),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def read_manifest(cache: Path) -> dict | None:
    """The manifest in the cache folder *cache*, or None when there is none (or it is unreadable)."""
    from kg.text.files import read_json

    data = read_json(cache / MANIFEST)
    return data if isinstance(data, dict) and isinstance(data.get("outputs"), dict) else None


def outputs_intact(manifest: Mapping, out: Path, names: Sequence[str], *, verify: bool = False) -> bool:
    """Whether every one of *names* in *out* is the file the manifest recorded (size and mtime;
    with *verify*, its SHA-256 too)."""
    recorded = manifest.get("outputs", {})
    for name in names:
        entry = recorded.get(name)
        try:
            st = (out / name).stat()
        except OSError:
            return False
        if not isinstance(entry, dict) or entry.get("size") != st.st_size or entry.get("mtime_ns") != st.st_mtime_ns:
            return False
        if verify and entry.get("sha256") != file_sha256(out / name):
            return False
    return True


def forget_manifest(cache: Path) -> None:
    """Remove the manifest (before outputs are replaced, so a half-done build is never trusted)."""
    try:
        (cache / MANIFEST).unlink()
    except FileNotFoundError:
        pass
    except OSError as e:  # a manifest that cannot be removed must not be trusted either
        from kg.errors import OutputError

        raise OutputError(f"{cache / MANIFEST}: cannot be removed ({e.strerror or e}); remove it by hand") from e


def write_manifest(cache: Path, key: str, out: Path, sha256: Mapping[str, str], extra: Mapping[str, object]) -> None:
    """Record *key* and the output files just written in *out* (name -> SHA-256 hex digest of its bytes)."""
    outputs = {}
    for name, digest in sha256.items():
        st = (out / name).stat()
        outputs[name] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
    text = json.dumps({"key": key, "outputs": outputs, **extra}, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{MANIFEST}.", suffix=".tmp", dir=cache)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, cache / MANIFEST)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
