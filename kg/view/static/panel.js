/* kg map page: the panel beside the map (legend, filters, details, search results) and the
   hover tip. Every text from the graph goes in with textContent: never parsed as HTML. */
(function (kg) {
  "use strict";
  var core = kg.core, plural = core.plural;
  var LISTED = 200, LEGEND_SHOWN = 12, RESULTS = 12, NAME_CHARS = 120;  /* NAME_CHARS: a legend entry's characters */

  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  /* The address of an identifier at its resolver (as kg.text.identifiers writes them in the RDF). */
  function resolver(base, id) { return base + encodeURIComponent(id).replace(/%2F/g, "/"); }
  function swatch(color) {
    var s = el("span", null, "kg-sw");
    s.style.background = color;
    return s;
  }
  function badge(kind) { return el("span", kind, "kg-kind kg-kind-" + kind); }
  function where(venue, year) {
    return [venue, year].filter(function (x) { return x !== null && x !== undefined && x !== ""; }).join(" ");
  }

  function Panel(app) { this.app = app; this.M = app.M; }

  Panel.prototype.button = function (kind, i) {
    var app = this.app, id = this.M.id(kind, i), b = el("button", this.M.label(kind, i), "kg-link");
    b.type = "button";
    b.setAttribute("data-id", id);
    b.addEventListener("click", function () { app.focus(id); });
    return b;
  };

  Panel.prototype.list = function (items, id, render) {
    var ol = el("ol");
    if (id) ol.id = id;
    items.forEach(function (item) { var li = el("li"); render(item, li); ol.appendChild(li); });
    return ol;
  };

  /* ------------------------------------------------------------ legend */

  Panel.prototype.legend = function (legend, view) {
    var box = $("kg-legend-body"), parts = [el("h3", legend.title)], M = this.M;
    if (legend.kind === "scale") {
      if (legend.from === null) {
        parts.push(el("p", "No paper of the drawn concepts has a year.", "kg-muted"));
      } else {
        var bar = el("div", null, "kg-scale");
        bar.style.background = "linear-gradient(to right, " + legend.stops.join(", ") + ")";
        var ticks = el("div", null, "kg-ticks"), digits = legend.to - legend.from < 4 ? 1 : 0;
        ticks.appendChild(el("span", (legend.below ? "\u2264 " : "") + legend.from.toFixed(digits)));
        ticks.appendChild(el("span", (legend.above ? "\u2265 " : "") + legend.to.toFixed(digits)));
        parts.push(bar, ticks);
      }
      var none = el("p", null, "kg-legend-item");
      none.appendChild(swatch(legend.none));
      none.appendChild(el("span", "no year"));
      parts.push(none);
    } else {
      var ul = el("ul", null, "kg-legend-list");
      legend.items.forEach(function (item, k) {
        var li = el("li");
        li.appendChild(swatch(item.color));
        var name = el("span", core.shorten(item.label, NAME_CHARS));
        name.title = item.label;
        li.appendChild(name);
        if (item.count !== undefined) li.appendChild(el("span", String(item.count), "kg-muted kg-count"));
        if (item.cluster) li.setAttribute("data-cluster", String(item.cluster));
        if (item.type !== undefined) li.setAttribute("data-type", String(item.type));
        li.setAttribute("data-color", item.color);
        if (k >= LEGEND_SHOWN && legend.items.length > LEGEND_SHOWN + 1) li.hidden = true;
        ul.appendChild(li);
      });
      parts.push(ul);
      if (legend.items.length > LEGEND_SHOWN + 1) {
        var more = el("button", "show all " + legend.items.length, "kg-link");
        more.type = "button";
        more.addEventListener("click", function () {
          ul.querySelectorAll("li").forEach(function (li) { li.hidden = false; });
          more.remove();
        });
        parts.push(more);
      }
      if (legend.items.length && legend.items[0].unit) parts.push(el("p", "Numbers: " + legend.items[0].unit + "s.", "kg-muted"));
    }
    parts.push(el("p", "Circles and labels: sized by papers. Lines: the strongest co-occurrence links " +
      "(papers sharing both concepts). Zoom in for more labels and the papers.", "kg-muted"));
    box.replaceChildren.apply(box, parts);
    box.setAttribute("data-mode", legend.mode);
    this.drawn(view);
  };

  Panel.prototype.drawn = function (view) {
    var M = this.M, st = view.state(), text = "Drawn: " + st.concepts + " of " + plural(M.nC, "concept") + ", " +
      plural(st.links, "link") + ", " + st.papers + " of " + plural(M.nP, "paper") + ".";
    if (st.concepts < M.nC) text += " Find the others with the search.";
    $("kg-drawn").textContent = text;
  };

  /* ------------------------------------------------------------ filters */

  Panel.prototype.filters = function () {
    var M = this.M, app = this.app, venue = $("kg-venue"), cluster = $("kg-cluster"), years = M.yearRange();
    for (var i = 0; i < M.nV; i++) {
      var o = el("option", M.V.label[i] + " (" + plural(M.V.papers[i], "paper") + ")");
      o.value = String(i);
      venue.appendChild(o);
    }
    M.clusters.forEach(function (c) {
      var o = el("option", c.id + ": " + core.shorten(c.label, 60));
      o.value = String(c.id);
      cluster.appendChild(o);
    });
    if (years) {
      ["kg-year-from", "kg-year-to"].forEach(function (id) { $(id).min = years[0]; $(id).max = years[1]; });
      $("kg-year-from").placeholder = years[0];
      $("kg-year-to").placeholder = years[1];
    }
    if (M.types.length) this.typeControls();
    $("kg-filter-form").addEventListener("submit", function (ev) { ev.preventDefault(); app.applyFilters(); });
    $("kg-filter-reset").addEventListener("click", function () {
      $("kg-filter-form").reset();
      app.applyFilters();
    });
  };

  /* A graph with concept types: "by type" among the colourings, and a filter by type (before
     "At least"); a graph without has neither. */
  Panel.prototype.typeControls = function () {
    var M = this.M, counts = M.typeCounts(), colour = el("option", "by concept type");
    colour.value = "type";
    $("kg-color").appendChild(colour);
    var row = el("label"), select = el("select");
    row.id = "kg-type-row";
    select.id = "kg-type";
    select.appendChild(el("option", "all types"));
    select.lastChild.value = "-1";
    M.types.forEach(function (t, k) {
      var o = el("option", core.typeName(t) + " (" + plural(counts[k], "concept") + ")");
      o.value = String(k);
      select.appendChild(o);
    });
    row.appendChild(el("span", "Type"));
    row.appendChild(select);
    var before = $("kg-min-papers").parentNode;
    before.parentNode.insertBefore(row, before);
  };

  Panel.prototype.readFilters = function () {
    function num(id) { var v = $(id).value.trim(); return v === "" || !isFinite(Number(v)) ? null : Number(v); }
    return {venue: Number($("kg-venue").value), yearFrom: num("kg-year-from"), yearTo: num("kg-year-to"),
            cluster: Number($("kg-cluster").value), minPapers: Math.max(1, num("kg-min-papers") || 1),
            type: $("kg-type") ? Number($("kg-type").value) : -1};
  };

  Panel.prototype.writeFilters = function (f) {
    $("kg-venue").value = String(f.venue === undefined ? -1 : f.venue);
    $("kg-cluster").value = String(f.cluster || 0);
    $("kg-year-from").value = f.yearFrom === null || f.yearFrom === undefined ? "" : f.yearFrom;
    $("kg-year-to").value = f.yearTo === null || f.yearTo === undefined ? "" : f.yearTo;
    $("kg-min-papers").value = f.minPapers || 1;
    if ($("kg-type")) $("kg-type").value = String(f.type >= 0 && f.type < this.M.types.length ? f.type : -1);
  };

  /* ------------------------------------------------------------ search */

  Panel.prototype.search = function () {
    var app = this.app, self = this, timer = null, input = $("kg-search");
    input.addEventListener("input", function () {
      clearTimeout(timer);
      var q = input.value;
      timer = setTimeout(function () { self.results(q.trim() ? app.M.search(q, RESULTS) : null); }, 150);
    });
    $("kg-search-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      clearTimeout(timer);
      var found = app.M.search(input.value, RESULTS);
      self.results(found);
      if (found.length) app.focus(found[0].id);
    });
  };

  Panel.prototype.results = function (found) {
    var list = $("kg-search-results"), self = this;
    list.replaceChildren();
    if (found === null) return;
    found.forEach(function (r) {
      var li = el("li");
      li.appendChild(badge(r.kind));
      li.appendChild(self.button(r.kind, r.index));
      if (r.matched !== r.label) li.appendChild(el("span", " (" + r.matched + ")", "kg-muted"));
      list.appendChild(li);
    });
    if (!found.length) list.appendChild(el("li", "Nothing found.", "kg-muted"));
  };

  /* ------------------------------------------------------------ details */

  Panel.prototype.details = function (kind, i) {
    var box = $("kg-details"), parts = this[kind](i), h = el("h2");
    h.appendChild(badge(kind));
    h.appendChild(document.createTextNode(this.M.label(kind, i)));
    parts.unshift(h);
    box.replaceChildren.apply(box, parts);
    box.setAttribute("data-node", this.M.id(kind, i));
  };

  Panel.prototype.links = function (title, kind, items, id) {
    var self = this;
    if (!items.length) return [];
    return [el("h3", title + " (" + items.length + ")"),
            this.list(items, id, function (j, li) { li.appendChild(self.button(kind, j)); })];
  };

  Panel.prototype.concept = function (i) {
    var M = this.M, C = M.C, lazy = M.lazy(), sel = this.app.view.sel, parts = [], self = this;
    if (C.alt[i].length) parts.push(el("p", "also: " + C.alt[i].join(", "), "kg-muted"));
    var facts = [plural(C.papers[i], "paper")];
    if (!sel.all && sel.count[i] !== C.papers[i]) facts.push(sel.count[i] + " in the filter");
    if (C.year[i] !== null) facts.push("mean year " + C.year[i]);
    if (C.venue[i] >= 0) facts.push("mostly at " + M.V.label[C.venue[i]]);
    parts.push(el("p", facts.join(" \u00b7 "), "kg-muted"));
    if (C.cluster[i]) {
      var c = M.clusterById[C.cluster[i]], line = el("p", null, "kg-legend-item");
      line.appendChild(swatch(core.clusterColor(c.id)));
      line.appendChild(el("span", "cluster " + c.id + ": " + core.shorten(c.label, NAME_CHARS)));
      parts.push(line);
    }
    if (M.types.length) parts.push(this.typed(i));
    if (!M.onMap[i]) {
      parts.push(el("p", C.x[i] === null ? "Not on the map: the layout did not place it; its papers are marked." :
        "Not among the concepts drawn; it is marked at its place.", "kg-note-inline"));
    } else if (!sel.conceptOn[i]) {
      parts.push(el("p", "Hidden by the filters.", "kg-note-inline"));
    }
    parts = parts.concat(this.links("Broader", "concept", C.broader[i]), this.links("Narrower", "concept", lazy.narrower[i]),
                         this.links("Related", "concept", M.related[i]));
    var papers = lazy.papersOf[i];
    parts.push(el("h3", "Papers (" + papers.length + ")"));
    parts.push(this.list(papers.slice(0, LISTED), "kg-paper-list", function (ps, li) {
      li.appendChild(self.button("paper", ps[0]));
      var v = M.P.venue[ps[0]];
      li.appendChild(el("span", " " + [where(v >= 0 ? M.V.label[v] : null, M.P.year[ps[0]]), "score " + ps[1].toFixed(3)]
        .filter(Boolean).join(" \u00b7 "), "kg-muted"));
    }));
    if (papers.length > LISTED) parts.push(el("p", "and " + (papers.length - LISTED) + " more", "kg-muted"));
    return parts;
  };

  /* ------------------------------------------------------------ concept types and typed relations */

  /* A concept's type (from the payload), then, from the server (kg serve), its votes and typed
     relations, grouped ("used for", "uses", ...): each related concept a link, with its support
     and, in a <details>, its best evidence sentences and their papers. */
  Panel.prototype.typed = function (i) {
    var M = this.M, box = el("div", null, "kg-typed"), t = M.C.type[i], self = this, id = M.C.id[i];
    box.id = "kg-typed";
    box.appendChild(this.typeLine(t >= 0 ? M.types[t] : null, null));
    if (this.app.source.kind !== "server") return box;
    this.app.source.node(id).then(function (d) {
      if ($("kg-typed") !== box || !d || !d.type_votes) return;
      var parts = [self.typeLine(d.entity_type || null, d.type_votes || {})].concat(self.relations(d.relations || []));
      box.replaceChildren.apply(box, parts);
      box.setAttribute("data-node", id);
    }, function (e) { box.appendChild(el("p", e.message, "kg-error")); });
    return box;
  };

  /* "Method \u2014 12 mentions as Method, 2 as Task"; votes null: the type alone. */
  Panel.prototype.typeLine = function (type, votes) {
    var line = el("p", null, "kg-legend-item kg-type-line"), names = votes ? Object.keys(votes) : [];
    var text = type ? core.typeName(type) : "no type";
    line.appendChild(swatch(type ? this.M.typeColor(type) : "#b8bcc2"));
    if (names.length) {
      text += " \u2014 " + names.map(function (t, k) {
        return (k ? votes[t] : plural(votes[t], "mention")) + " as " + core.typeName(t);
      }).join(", ") + (type ? "" : " (the votes elect none)");
    }
    line.appendChild(el("span", text));
    return line;
  };

  Panel.prototype.relations = function (groups) {
    var self = this, parts = [];
    if (!groups.length) return parts;
    parts.push(el("h3", "Typed relations"));
    groups.forEach(function (g) {
      var head = el("p", g.label + " (" + (g.items.length + g.more) + ")", "kg-rel-head");
      var ul = el("ul", null, "kg-rel-list");
      ul.setAttribute("data-group", g.key);
      g.items.forEach(function (r) { ul.appendChild(self.relation(r)); });
      parts.push(head, ul);
      if (g.more) parts.push(el("p", "and " + g.more + " more", "kg-muted"));
    });
    return parts;
  };

  Panel.prototype.relation = function (r) {
    var li = el("li"), found = this.M.index[r.id], self = this;
    li.setAttribute("data-id", r.id);
    li.appendChild(swatch(r.entity_type ? this.M.typeColor(r.entity_type) : "#b8bcc2"));
    li.appendChild(found ? this.button(found[0], found[1]) : el("span", r.label));
    li.appendChild(el("span", " " + plural(r.papers, "paper"), "kg-muted"));
    if (!r.evidence.length) return li;
    var more = el("details", null, "kg-evidence");
    more.appendChild(el("summary", r.evidence.length > 1 ? "evidence (" + r.evidence.length + ")" : "evidence"));
    r.evidence.forEach(function (e) {
      more.appendChild(el("blockquote", e.sentence === null ? "(the sentence is not in the abstract)" : e.sentence));
      var from = el("p", null, "kg-muted"), paper = e.paper && self.M.index[e.paper];
      from.appendChild(document.createTextNode("\u2014 "));
      from.appendChild(paper ? self.button(paper[0], paper[1]) : el("span", e.label));
      from.appendChild(document.createTextNode([e.year === null || e.year === undefined ? "" : " " + e.year,
        " \u00b7 score " + e.score.toFixed(2)].join("")));
      more.appendChild(from);
    });
    li.appendChild(more);
    return li;
  };

  Panel.prototype.paper = function (i) {
    var M = this.M, P = M.P, parts = [], self = this, v = P.venue[i];
    if (P.title[i]) parts.push(el("p", P.title[i], "kg-title"));
    parts.push(el("p", where(v >= 0 ? M.V.label[v] : null, P.year[i]) || "no venue, no year", "kg-muted"));
    if (P.authors[i]) {
      var authors = el("p", null, "kg-authors");
      P.authors[i].forEach(function (a, k) {
        if (k) authors.appendChild(document.createTextNode(", "));
        authors.appendChild(a[1] ? self.anchor(a[0], resolver("https://orcid.org/", a[1])) : el("span", a[0]));
      });
      parts.push(authors);
    }
    if (P.journal[i]) parts.push(el("p", P.journal[i], "kg-muted"));
    var ids = el("p", null, "kg-ids");
    if (P.doi[i]) {
      ids.appendChild(document.createTextNode("DOI "));
      ids.appendChild(this.anchor(P.doi[i], /^10\.\d{4,9}\/\S+$/.test(P.doi[i]) ? resolver("https://doi.org/", P.doi[i]) : null));
    }
    if (P.arxiv[i]) {
      if (P.doi[i]) ids.appendChild(document.createTextNode(" \u00b7 "));
      ids.appendChild(this.anchor("arXiv:" + P.arxiv[i], resolver("https://arxiv.org/abs/", P.arxiv[i])));
    }
    if (ids.childNodes.length) parts.push(ids);
    if (P.keywords && P.keywords[i]) parts.push(this.keywords(P.keywords[i]));
    parts.push(el("h3", "Abstract"));
    var abstract = el("p", P.abstract[i] === null ? "loading\u2026" : P.abstract[i], "kg-abstract");
    abstract.id = "kg-abstract";
    parts.push(abstract);
    if (P.abstract[i] === null) this.app.source.abstract(P.id[i]).then(function (text) {
      if ($("kg-abstract") === abstract) abstract.textContent = text;
    }, function (e) { abstract.textContent = e.message; });
    else if (M.P.cut && P.abstract[i].length > M.P.cut) {
      parts.push(el("p", "Cut to " + M.P.cut + " characters here; the whole abstract is in graph.json and graph.ttl.", "kg-muted"));
    }
    var concepts = [];
    for (var k = 0; k < P.concepts[i].length; k += 2) concepts.push([P.concepts[i][k], P.concepts[i][k + 1]]);
    parts.push(el("h3", "Concepts (" + concepts.length + ")"));
    parts.push(this.list(concepts, "kg-concept-list", function (cs, li) {
      li.appendChild(self.button("concept", cs[0]));
      li.appendChild(el("span", " score " + cs[1].toFixed(3), "kg-muted"));
    }));
    if (P.urls[i].length) {
      parts.push(el("h3", "Links in the abstract"));
      parts.push(this.list(P.urls[i], null, function (u, li) { li.appendChild(self.anchor(u, u)); }));
    }
    parts.push(el("p", P.id[i] + (P.source[i] ? " \u00b7 " + P.source[i] : ""), "kg-muted"));
    return parts;
  };

  /* The authors' keywords, in their order: "Keywords: a; b; c" (each its own span: a keyword may
     hold a comma). A payload without keywords (no paper has any) has no P.keywords. */
  Panel.prototype.keywords = function (words) {
    var line = el("p", null, "kg-keywords");
    line.appendChild(el("span", "Keywords: ", "kg-muted"));
    words.forEach(function (w, k) {
      if (k) line.appendChild(document.createTextNode("; "));
      line.appendChild(el("span", w, "kg-keyword"));
    });
    return line;
  };

  Panel.prototype.venue = function (i) {
    var M = this.M, self = this, papers = M.lazy().venuePapers[i].slice().sort(function (a, b) {
      return (M.P.year[b] || 0) - (M.P.year[a] || 0) || a - b;
    });
    return [el("h3", "Papers (" + papers.length + ")"), this.list(papers.slice(0, LISTED), "kg-paper-list", function (p, li) {
      li.appendChild(self.button("paper", p));
      if (M.P.year[p] !== null) li.appendChild(el("span", " " + M.P.year[p], "kg-muted"));
    })].concat(papers.length > LISTED ? [el("p", "and " + (papers.length - LISTED) + " more", "kg-muted")] : []);
  };

  /* A link to an http(s) address, or the text alone when it is none. */
  Panel.prototype.anchor = function (text, href) {
    var url = null;
    try { url = href ? new URL(href) : null; } catch (e) { url = null; }
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) return el("span", text);
    var a = el("a", text);
    a.href = url.href;
    a.rel = "noopener noreferrer";
    a.target = "_blank";
    return a;
  };

  /* ------------------------------------------------------------ the hover tip */

  Panel.prototype.tip = function (item, ev) {
    var tip = $("kg-tip"), M = this.M;
    if (!item || !ev) { tip.hidden = true; return; }
    var kind = item[0], i = item[1], lines = [M.label(kind, i)];
    if (kind === "concept") {
      if (M.C.alt[i].length) lines.push("also: " + M.C.alt[i].join(", "));
      var c = M.clusterById[M.C.cluster[i]];
      lines.push(plural(M.C.papers[i], "paper") + (M.C.year[i] !== null ? " \u00b7 mean year " + M.C.year[i] : ""));
      if (c) lines.push("cluster " + c.id + ": " + c.label);
      if (M.C.type[i] >= 0) lines.push("type: " + core.typeName(M.types[M.C.type[i]]));
    } else {
      var v = M.P.venue[i];
      if (M.P.title[i]) lines.push(M.P.title[i]);
      var at = where(v >= 0 ? M.V.label[v] : null, M.P.year[i]);
      if (at) lines.push(at);
      lines.push(plural(M.P.concepts[i].length / 2, "concept"));
    }
    tip.replaceChildren.apply(tip, lines.map(function (line, k) { return el(k ? "div" : "strong", core.shorten(line, 300)); }));
    var r = $("kg-main").getBoundingClientRect();
    tip.style.left = Math.min(ev.clientX - r.left + 14, r.width - 320) + "px";
    tip.style.top = (ev.clientY - r.top + 14) + "px";
    tip.hidden = false;
  };

  kg.Panel = Panel;
  kg.el = el;
})(window.kg = window.kg || {});
