"""The data files kg ships: ``queries/`` (the canned SPARQL queries) and ``shapes/`` (SHACL).

Both stay at the top of the project and are copied into the wheel as ``kg/queries`` and
``kg/shapes`` (pyproject.toml), so an installed kg finds them inside its package, wherever it
runs from; a checkout (or an editable install) finds them beside the package.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from kg.errors import KGError


def data_dir(name: str) -> Path:
    """The folder of kg's data files *name* (``"queries"`` or ``"shapes"``)."""
    packaged = Path(str(files("kg"))) / name
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    raise KGError(f"kg's {name}/ folder is missing from {packaged.parent}; reinstall kg")


def shapes_file() -> Path:
    """kg's SHACL shapes (``shapes/kg.shacl.ttl``)."""
    return data_dir("shapes") / "kg.shacl.ttl"
