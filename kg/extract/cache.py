"""A content-keyed cache of extraction results, so a rebuild redoes only what changed.

A result is keyed by the SHA-256 of the document text and of the extraction fingerprint
(model, its checksum, spaCy pipeline, settings and the extractor's version): change the
text, the model or a setting and exactly the results it touches are recomputed.
The cache is one SQLite file; a damaged or foreign file is set aside and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from kg.errors import OutputError
from kg.extract.keyphrases import Keyphrase, PaperKeyphrases

__all__ = ["ExtractionCache", "document_key"]

SCHEMA = 1  # of the keyphrase table; the entity table is read row by row like it (a row that is not one is a miss)


def _reason(e: Exception) -> str:
    return getattr(e, "strerror", None) or str(e) or type(e).__name__


def document_key(fingerprint: str, document: str) -> str:
    return hashlib.sha256(f"{fingerprint}\x00{document}".encode("utf-8")).hexdigest()


def _decode_row(value: object) -> tuple[tuple[Keyphrase, ...], tuple[tuple[str, str], ...]] | None:
    """The keyphrases and definitions of a cache row as `put_many` writes it, or None for a row
    that is not one (damaged on disk, written by something else): a cache miss, never an error."""
    try:
        data = json.loads(value)
        keyphrases = tuple(Keyphrase(p, s, r) for p, s, r in data["k"])
        definitions = tuple((a, b) for a, b in data["d"])
    except (TypeError, ValueError, KeyError, RecursionError):  # not JSON, not the shape, nested too deep
        return None
    if not all(type(k.phrase) is str and type(k.score) in (int, float) and type(k.rank) is int for k in keyphrases) \
            or not all(type(a) is str and type(b) is str for a, b in definitions):
        return None
    return keyphrases, definitions


def _encode_entities(found) -> str:
    return json.dumps({"e": [[e.start, e.end, e.text, e.type, e.score] for e in found.entities],
                       "r": [[r.head, r.tail, r.type, r.score] for r in found.relations],
                       "s": [list(s) for s in found.sentences]}, ensure_ascii=False)


def _decode_entities(value: object):
    """A `PaperEntities` from its row, or None for a row that is not one (a miss, as `_decode_row`)."""
    from kg.extract.entities import Entity, PaperEntities, Relation

    try:
        data = json.loads(value)
        entities = tuple(Entity(int(a), int(b), str(t), str(k), float(x)) for a, b, t, k, x in data["e"])
        relations = tuple(Relation(int(h), int(t), str(k), float(x)) for h, t, k, x in data["r"])
        sentences = tuple((int(a), int(b)) for a, b in data["s"])
    except (TypeError, ValueError, KeyError, RecursionError):
        return None
    if any(not (0 <= r.head < len(entities) and 0 <= r.tail < len(entities)) for r in relations):
        return None
    return PaperEntities(entities, relations, sentences)


class ExtractionCache:
    """Extraction results by document key, and the embeddings of the concept labels the merge
    compares by text key (`kg.pipeline.extraction.label_embedder`), in ``<folder>/extractions.sqlite``."""

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / "extractions.sqlite"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                self._db = self._open()
            except sqlite3.OperationalError:  # read-only, locked, a full disk: not a damaged file
                raise
            except sqlite3.DatabaseError:  # "file is not a database": set aside, start afresh
                self.path.replace(self.path.with_suffix(".damaged"))
                self._db = self._open()
        except (OSError, sqlite3.Error) as e:
            raise OutputError(f"{self.path}: cannot write the extraction cache ({_reason(e)})") from e

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        db.execute("CREATE TABLE IF NOT EXISTS extraction (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS entities (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
            db.commit()
        elif row[0] != str(SCHEMA):
            db.execute("DELETE FROM extraction")
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA),))
            db.commit()
        return db

    def get_many(self, keys: Sequence[str]) -> dict[str, tuple[tuple[Keyphrase, ...], tuple[tuple[str, str], ...]]]:
        return self._get("extraction", keys, _decode_row)

    def get_entities(self, keys: Sequence[str]) -> dict:
        """`kg.extract.entities.PaperEntities` by document key, for the keys the cache holds."""
        return self._get("entities", keys, _decode_entities)

    def _get(self, table: str, keys: Sequence[str], decode) -> dict:
        found = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for key, value in self._db.execute(f"SELECT key, value FROM {table} WHERE key IN ({marks})", chunk):
                row = decode(value)
                if row is not None:  # else a miss: extracted again, and the row replaced
                    found[key] = row
        return found

    def get_vectors(self, keys: Sequence[str]) -> dict:
        """Embeddings (float32 arrays) by key, for the keys the cache holds (a row that is no
        array of float32 is a miss)."""
        import numpy as np

        def decode(value: object):
            if not isinstance(value, bytes) or not value or len(value) % 4:
                return None
            return np.frombuffer(value, dtype="<f4")

        return self._get("vectors", keys, decode)

    def put_vectors(self, items: Iterable[tuple[str, object]]) -> None:
        """Store embeddings (float32 arrays) by key."""
        import numpy as np

        self._put("vectors", [(key, np.asarray(vector, dtype="<f4").tobytes()) for key, vector in items])

    def put_entities(self, items: Iterable[tuple[str, object]]) -> None:
        """Store `kg.extract.entities.PaperEntities` by document key."""
        self._put("entities", [(key, _encode_entities(found)) for key, found in items])

    def put_many(self, items: Iterable[tuple[str, PaperKeyphrases]]) -> None:
        rows = [
            (key, json.dumps({"k": [[k.phrase, k.score, k.rank] for k in r.keyphrases], "d": [list(d) for d in r.definitions]}))
            for key, r in items
        ]
        self._put("extraction", rows)

    def _put(self, table: str, rows: list[tuple[str, str]]) -> None:
        try:
            with self._db:
                self._db.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?, ?)", rows)
        except sqlite3.Error as e:
            raise OutputError(f"{self.path}: cannot write the extraction cache ({_reason(e)})") from e

    def close(self) -> None:
        self._db.close()
