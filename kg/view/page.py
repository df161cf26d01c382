"""``graph.html``: the map page, one self-contained file that fetches nothing.

The page is kg/view/templates/map.html with kg/view/static/*.css and *.js inlined, the
vis-network 9.1.2 script bundled with pyvis, and the map payload (`kg.view.mapdata`) as JSON
in a ``<script type="application/json">`` element. ``kg serve``'s explorer is the same page
with ``{"source": "server"}`` in that element instead: its script asks the server for the
payload. The JSON is written with ``<``, ``>`` and ``&`` as ``\\u003c``-style escapes, so no
text of the graph can end the element, and the script shows every text with ``textContent``
or on the canvas with ``fillText``: nothing from the graph is ever parsed as HTML.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from kg.text.chars import encodable
from kg.view.mapdata import MapSettings, map_payload

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["SCRIPTS", "STYLES", "render_html", "render_page", "server_page"]

# The page's own files (kg/view/static), in the order the page loads them.
SCRIPTS = ("core.js", "labels.js", "map.js", "panel.js", "queries.js", "app.js")
STYLES = ("map.css",)


def render_html(G: nx.Graph, *, title: str = "kg", settings: MapSettings | None = None) -> str:
    """The map page of *G* (docs/model.md) as one HTML text (write it as UTF-8); the same graph
    and title always give the same text."""
    payload = map_payload(G, title=title, settings=settings)
    return render_page({"source": "embedded", **payload}, title=title)


def render_page(data: dict[str, Any], *, title: str) -> str:
    """The page around *data*: a map payload with ``"source": "embedded"``, or
    ``{"source": "server"}`` for the explorer, whose script asks ``/api/map`` for it. The
    title's lone surrogates are U+FFFD in the page's <title> (UTF-8 cannot hold them)."""
    from markupsafe import Markup

    template = _template()
    css, scripts = _assets()
    return template.render(title=encodable(title), css=Markup(css), scripts=[Markup(s) for s in scripts],
                           data=Markup(json_for_script(data)))


@lru_cache(maxsize=4)
def server_page(title: str) -> bytes:
    """The explorer's page of a server (UTF-8): the map page told to ask ``/api/map`` for its data;
    made once for a title."""
    return render_page({"source": "server"}, title=title).encode("utf-8")


def json_for_script(data: Any) -> str:
    """*data* as JSON that is safe inside a <script> element: no <, > or & appears in it."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@lru_cache(maxsize=1)
def _template():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("kg.view", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.get_template("map.html")


@lru_cache(maxsize=1)
def _assets() -> tuple[str, tuple[str, ...]]:
    """The page's CSS and its scripts (vis-network first), checked safe to inline."""
    static = files("kg.view") / "static"
    lib = files("pyvis") / "lib" / "vis-9.1.2"
    # The source map is not shipped; dropping its comment spares DevTools a failed fetch.
    vis = (lib / "vis-network.min.js").read_text(encoding="utf-8").replace("//# sourceMappingURL=vis-network.min.js.map", "")
    css = "\n".join(_inline(static / name, "</style") for name in STYLES)
    scripts = (_inline_text(vis, "vis-network.min.js", "</script"),
               *(_inline(static / name, "</script") for name in SCRIPTS))
    return css, scripts


def _inline(path, end: str) -> str:
    return _inline_text(path.read_text(encoding="utf-8"), path.name, end)


def _inline_text(text: str, name: str, end: str) -> str:
    """*text* unless it holds *end* (which would close its element early): then vis-network's
    is escaped, as before, and one of kg's own files is an error in kg."""
    if end in text.lower():
        if name == "vis-network.min.js":
            return re.sub(r"</(script)", r"<\\/\1", text, flags=re.IGNORECASE)
        raise RuntimeError(f"kg/view/static/{name} holds {end!r}, which would end its element in the page")
    return text
