/* kg map page: the data model. The payload of kg/view/mapdata.py, read once into columns,
   with what the page asks of it: positions fitted to the canvas, search, filters, colours. */
(function (kg) {
  "use strict";

  var SIDE = 1000;  /* the map's longer side in canvas units */
  var KIND_ORDER = {concept: 0, paper: 1, venue: 2};
  /* Cluster colours: VOSviewer's palette (d3's category20 family), one per cluster id. */
  var CLUSTER_COLORS = ["#d62728", "#2ca02c", "#1f77b4", "#bcbd22", "#9467bd", "#17becf", "#ff7f0e", "#e377c2",
    "#8c564b", "#7f7f7f", "#ff9896", "#98df8a", "#aec7e8", "#dbdb8d", "#c5b0d5", "#9edae5", "#ffbb78",
    "#f7b6d2", "#c49c94", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173"];
  var VENUE_COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"];
  var NONE_COLOR = "#b8bcc2";
  /* Concept types (payload.types): one colour each, far from the grey of "no type". */
  var TYPE_COLORS = {Task: "#d62728", Method: "#1f77b4", Dataset: "#2ca02c", Metric: "#ff7f0e", Material: "#9467bd",
    OtherScientificTerm: "#17becf"};
  var OTHER_TYPE_COLORS = ["#8c564b", "#e377c2", "#bcbd22"];
  var TYPE_NAMES = {OtherScientificTerm: "Other scientific term"};
  /* viridis at 9 stops: the colour scale of VOSviewer's overlay visualization */
  var VIRIDIS = [[68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141], [39, 173, 129],
    [92, 200, 99], [170, 220, 50], [253, 231, 37]];

  function finite(v) { return typeof v === "number" && isFinite(v); }
  function squash(text) { return String(text).toLowerCase().split(/\s+/).filter(Boolean).join(" "); }
  function typeName(t) { return TYPE_NAMES[t] || t; }
  function plural(k, noun) { return k + " " + noun + (k === 1 ? "" : "s"); }
  function shorten(text, n) {
    text = String(text);
    if (text.length <= n) return text;
    var cut = text.slice(0, n), space = cut.lastIndexOf(" ");
    if (space > n / 2) cut = cut.slice(0, space);
    return cut.replace(/\s+$/, "") + "\u2026";
  }

  /* The model of one payload. Positions become canvas units: the box of everything placed is
     scaled so its longer side is SIDE, centred on 0; y grows downwards, as on the screen (docs/model.md). */
  function Model(payload) {
    var C = payload.concepts, P = payload.papers, i;
    this.title = payload.title;
    this.base = payload.base || "";
    this.C = C; this.P = P; this.V = payload.venues; this.clusters = payload.clusters;
    this.nC = C.id.length; this.nP = P.id.length; this.nV = this.V.id.length;
    this.drawn = payload.drawn; this.links = payload.links; this.related = payload.related;
    /* each concept's type: an index into this.types, -1 for none (no types: no column) */
    this.types = payload.types || [];
    C.type = C.type || new Array(this.nC).fill(-1);
    this.onMap = new Uint8Array(this.nC);
    C.x = new Array(this.nC).fill(null); C.y = new Array(this.nC).fill(null); C.cluster = new Array(this.nC).fill(0);
    for (i = 0; i < this.drawn.length; i++) {
      var c = this.drawn[i];
      this.onMap[c] = 1;
      C.x[c] = payload.placed.x[i]; C.y[c] = payload.placed.y[i]; C.cluster[c] = payload.placed.cluster[i];
    }
    this._years();
    this.clusterById = {};
    for (i = 0; i < this.clusters.length; i++) this.clusterById[this.clusters[i].id] = this.clusters[i];
    this._fit();
    this._lazy = null;
  }

  /* Node id -> [kind, index], made when first asked for. */
  Object.defineProperty(Model.prototype, "index", {get: function () {
    if (!this._index) {
      var index = {}, i;
      for (i = 0; i < this.nC; i++) index[this.C.id[i]] = ["concept", i];
      for (i = 0; i < this.nP; i++) index[this.P.id[i]] = ["paper", i];
      for (i = 0; i < this.nV; i++) index[this.V.id[i]] = ["venue", i];
      this._index = index;
    }
    return this._index;
  }});

  /* Each concept's mean publication year and main venue (the venue of most of its papers,
     the first in the venues' order on a tie), from its papers. */
  Model.prototype._years = function () {
    var C = this.C, P = this.P, sum = new Float64Array(this.nC), n = new Int32Array(this.nC), at = new Map(), nV = Math.max(this.nV, 1), i, k;
    for (i = 0; i < this.nP; i++) {
      var l = P.concepts[i], y = P.year[i], v = P.venue[i];
      for (k = 0; k < l.length; k += 2) {
        if (y !== null) { sum[l[k]] += y; n[l[k]]++; }
        if (v >= 0) { var key = l[k] * nV + v; at.set(key, (at.get(key) || 0) + 1); }
      }
    }
    C.year = Array.from(n, function (m, c) { return m ? Math.round(sum[c] / m * 10) / 10 : null; });
    C.venue = new Array(this.nC).fill(-1);
    var best = new Int32Array(this.nC);
    at.forEach(function (m, key) {
      var c = Math.floor(key / nV), v = key % nV;
      if (m > best[c] || (m === best[c] && v < C.venue[c])) { best[c] = m; C.venue[c] = v; }
    });
  };

  Model.prototype._fit = function () {
    var C = this.C, P = this.P, xs = [], ys = [], i;
    for (i = 0; i < this.drawn.length; i++) { xs.push(C.x[this.drawn[i]]); ys.push(C.y[this.drawn[i]]); }
    for (i = 0; i < this.nP; i++) if (finite(P.x[i]) && finite(P.y[i])) { xs.push(P.x[i]); ys.push(P.y[i]); }
    /* a loop, not Math.min.apply: apply() passes every value as an argument and throws past ~120,000 */
    var x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (i = 0; i < xs.length; i++) {
      if (xs[i] < x0) x0 = xs[i]; if (xs[i] > x1) x1 = xs[i]; if (ys[i] < y0) y0 = ys[i]; if (ys[i] > y1) y1 = ys[i];
    }
    if (!xs.length) x0 = x1 = y0 = y1 = 0;
    var k = SIDE / Math.max(x1 - x0, y1 - y0, 1e-9), cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
    function X(v) { return finite(v) ? (v - cx) * k : null; }
    function Y(v) { return finite(v) ? (v - cy) * k : null; }
    this.cx = C.x.map(X); this.cy = C.y.map(Y);
    this.px = P.x.map(X); this.py = P.y.map(Y);
    this.clusterXY = this.clusters.map(function (c) { return [X(c.x), Y(c.y)]; });
  };

  /* What is built only when first needed: each concept's papers (best score first), its
     narrower concepts, each venue's papers, the search keys. */
  Model.prototype.lazy = function () {
    if (this._lazy) return this._lazy;
    var C = this.C, P = this.P, V = this.V, i, k;
    var papersOf = [], narrower = [], venuePapers = [], keys = [];
    for (i = 0; i < this.nC; i++) { papersOf.push([]); narrower.push([]); }
    for (i = 0; i < this.nV; i++) venuePapers.push([]);
    for (i = 0; i < this.nP; i++) {
      var l = P.concepts[i];
      for (k = 0; k < l.length; k += 2) papersOf[l[k]].push([i, l[k + 1]]);
      if (P.venue[i] >= 0) venuePapers[P.venue[i]].push(i);
    }
    papersOf.forEach(function (l) { l.sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; }); });
    for (i = 0; i < this.nC; i++) C.broader[i].forEach(function (b) { narrower[b].push(i); });
    function key(text, kind, j) { if (text) keys.push([squash(text), kind, j, String(text)]); }
    function local(id) { var at = id.indexOf(":"); return at >= 0 ? id.slice(at + 1) : null; }
    for (i = 0; i < this.nC; i++) {
      key(C.label[i], "concept", i);
      for (k = 0; k < C.alt[i].length; k++) key(C.alt[i][k], "concept", i);
      key(C.id[i], "concept", i); key(local(C.id[i]), "concept", i);
    }
    for (i = 0; i < this.nP; i++) {
      key(P.label[i], "paper", i); key(P.title[i], "paper", i); key(P.id[i], "paper", i);
      key(local(P.id[i]), "paper", i); key(P.source[i], "paper", i); key(P.doi[i], "paper", i); key(P.arxiv[i], "paper", i);
      if (P.keywords && P.keywords[i]) for (k = 0; k < P.keywords[i].length; k++) key(P.keywords[i][k], "paper", i);
    }
    for (i = 0; i < this.nV; i++) { key(V.label[i], "venue", i); key(V.id[i], "venue", i); }
    this._lazy = {papersOf: papersOf, narrower: narrower, venuePapers: venuePapers, keys: keys};
    return this._lazy;
  };

  Model.prototype.label = function (kind, i) {
    return kind === "concept" ? this.C.label[i] : kind === "paper" ? this.P.label[i] : this.V.label[i];
  };
  Model.prototype.id = function (kind, i) {
    return kind === "concept" ? this.C.id[i] : kind === "paper" ? this.P.id[i] : this.V.id[i];
  };
  Model.prototype.weight = function (kind, i) {
    return kind === "concept" ? this.C.papers[i] : kind === "paper" ? this.P.concepts[i].length / 2 : this.V.papers[i];
  };

  /* Nodes whose label, alternative label, title, authors' keyword, source id, DOI, arXiv id or node id contains q, case- and
     space-insensitive: exact matches first, then prefixes, then word starts, then anywhere. */
  Model.prototype.search = function (q, limit) {
    q = squash(q || "");
    if (!q) return [];
    var best = {}, self = this;
    this.lazy().keys.forEach(function (k) {
      var at = k[0].indexOf(q);
      if (at < 0) return;
      var rank = k[0] === q ? 0 : at === 0 ? 1 : (" " + k[0]).indexOf(" " + q) >= 0 ? 2 : 3, id = k[1] + k[2];
      if (!best[id] || rank < best[id][0]) best[id] = [rank, k[1], k[2], k[3]];
    });
    return Object.keys(best).map(function (x) { return best[x]; }).sort(function (a, b) {
      return a[0] - b[0] || KIND_ORDER[a[1]] - KIND_ORDER[b[1]] || self.weight(b[1], b[2]) - self.weight(a[1], a[2]) ||
        (self.label(a[1], a[2]).toLowerCase() < self.label(b[1], b[2]).toLowerCase() ? -1 : 1);
    }).slice(0, limit || 20).map(function (b) {
      return {id: self.id(b[1], b[2]), kind: b[1], index: b[2], label: self.label(b[1], b[2]), matched: b[3]};
    });
  };

  /* The default filter, and whether a filter is the default one. */
  Model.prototype.noFilter = function () { return {venue: -1, yearFrom: null, yearTo: null, cluster: 0, minPapers: 1, type: -1}; };
  function isDefault(f) {
    return f.venue < 0 && f.yearFrom === null && f.yearTo === null && !f.cluster && f.minPapers <= 1 && !(f.type >= 0);
  }

  /* The colour of concept type t (a name), and the number of concepts of each type (the last: of none). */
  Model.prototype.typeColor = function (t) {
    var k = this.types.indexOf(t);
    return TYPE_COLORS[t] || (k >= 0 ? OTHER_TYPE_COLORS[k % OTHER_TYPE_COLORS.length] : NONE_COLOR);
  };
  Model.prototype.typeCounts = function () {
    var n = new Array(this.types.length + 1).fill(0), T = this.C.type;
    for (var i = 0; i < this.nC; i++) n[T[i] >= 0 ? T[i] : this.types.length]++;
    return n;
  };

  /* Whether paper i has a concept of type t (an index). */
  Model.prototype._paperOfType = function (i, t) {
    var l = this.P.concepts[i], T = this.C.type;
    for (var k = 0; k < l.length; k += 2) if (T[l[k]] === t) return true;
    return false;
  };

  /* What a filter leaves: the papers in it, each concept's papers among them, and the drawn
     concepts that stay on the map, by rank (not generic first, then papers in the filter). */
  Model.prototype.select = function (f) {
    var C = this.C, P = this.P, nP = this.nP, i, k;
    var paperOn = new Uint8Array(nP), count;
    if (isDefault(f)) {
      paperOn.fill(1);
      count = Int32Array.from(C.papers);
    } else {
      count = new Int32Array(this.nC);
      for (i = 0; i < nP; i++) {
        var y = P.year[i];
        if (f.venue >= 0 && P.venue[i] !== f.venue) continue;
        if (f.yearFrom !== null && !(y !== null && y >= f.yearFrom)) continue;
        if (f.yearTo !== null && !(y !== null && y <= f.yearTo)) continue;
        paperOn[i] = 1;
        var l = P.concepts[i];
        for (k = 0; k < l.length; k += 2) count[l[k]]++;
      }
    }
    var shown = [], conceptOn = new Uint8Array(this.nC), min = Math.max(1, f.minPapers || 1);
    for (i = 0; i < this.drawn.length; i++) {
      var c = this.drawn[i];
      if (count[c] < min || (f.cluster && C.cluster[c] !== f.cluster)) continue;
      if (f.type >= 0 && C.type[c] !== f.type) continue;
      if (!isDefault(f) && count[c] === 0) continue;
      shown.push(c); conceptOn[c] = 1;
    }
    if (!isDefault(f)) {
      shown.sort(function (a, b) { return C.generic[a] - C.generic[b] || count[b] - count[a] || a - b; });
      if (f.cluster) for (i = 0; i < nP; i++) if (P.cluster[i] !== f.cluster) paperOn[i] = 0;
      if (f.type >= 0) for (i = 0; i < nP; i++) if (paperOn[i] && !this._paperOfType(i, f.type)) paperOn[i] = 0;
    }
    return {filter: f, paperOn: paperOn, count: count, conceptOn: conceptOn, ranked: shown, all: isDefault(f)};
  };

  Model.prototype.yearRange = function () {
    var lo = Infinity, hi = -Infinity;
    this.P.year.forEach(function (y) { if (y !== null) { lo = Math.min(lo, y); hi = Math.max(hi, y); } });
    return lo <= hi ? [lo, hi] : null;
  };

  function hex(rgb) {
    return "#" + rgb.map(function (v) { return ("0" + Math.round(v).toString(16)).slice(-2); }).join("");
  }
  function viridis(t) {
    t = Math.max(0, Math.min(1, t)) * (VIRIDIS.length - 1);
    var i = Math.min(Math.floor(t), VIRIDIS.length - 2), f = t - i, a = VIRIDIS[i], b = VIRIDIS[i + 1];
    return hex([0, 1, 2].map(function (k) { return a[k] + (b[k] - a[k]) * f; }));
  }

  /* The colour of each drawn concept and each paper under one overlay, and its legend:
     "cluster" (the default), "year" (mean publication year, viridis), "venue" or "type" (a
     concept's type; papers have none). */
  Model.prototype.colors = function (mode) {
    var C = this.C, P = this.P, concept = new Array(this.nC), paper = new Array(this.nP), legend, i;
    if (mode === "year") {
      /* the scale spans the middle 90 % of the drawn concepts' mean years (a few concepts of
         old papers would squeeze the others into one colour); years beyond take its ends */
      var years = [];
      this.drawn.forEach(function (c) { if (C.year[c] !== null) years.push(C.year[c]); });
      years.sort(function (a, b) { return a - b; });
      var lo = years.length ? years[Math.floor(0.05 * (years.length - 1))] : null;
      var hi = years.length ? years[Math.ceil(0.95 * (years.length - 1))] : null, span = hi > lo ? hi - lo : 1;
      var at = function (y) { return y === null || lo === null ? NONE_COLOR : viridis((y - lo) / span); };
      for (i = 0; i < this.nC; i++) concept[i] = at(C.year[i]);
      for (i = 0; i < this.nP; i++) paper[i] = at(P.year[i]);
      legend = {kind: "scale", title: "Mean publication year of the concept's papers", from: lo, to: hi,
                below: years.length && years[0] < lo, above: years.length && years[years.length - 1] > hi,
                stops: VIRIDIS.map(function (_, k) { return viridis(k / (VIRIDIS.length - 1)); }),
                none: NONE_COLOR};
    } else if (mode === "venue") {
      var shown = Math.min(this.nV, VENUE_COLORS.length), vc = function (v) { return v >= 0 && v < shown ? VENUE_COLORS[v] : NONE_COLOR; };
      for (i = 0; i < this.nC; i++) concept[i] = vc(C.venue[i]);
      for (i = 0; i < this.nP; i++) paper[i] = vc(P.venue[i]);
      var items = [];
      for (i = 0; i < shown; i++) items.push({label: this.V.label[i], color: VENUE_COLORS[i], count: this.V.papers[i], unit: "paper"});
      if (this.nV > shown) items.push({label: plural(this.nV - shown, "other venue"), color: NONE_COLOR});
      items.push({label: "no venue", color: NONE_COLOR});
      legend = {kind: "list", title: "Venue (a concept: the venue of most of its papers)", items: items};
    } else if (mode === "type" && this.types.length) {
      var self = this, T = C.type, counts = this.typeCounts();
      for (i = 0; i < this.nC; i++) concept[i] = T[i] >= 0 ? this.typeColor(this.types[T[i]]) : NONE_COLOR;
      paper.fill(NONE_COLOR);
      legend = {kind: "list", title: "Concept type (voted by its mentions in the abstracts)", items: this.types.map(function (t, k) {
        return {label: typeName(t), color: self.typeColor(t), count: counts[k], unit: "concept", type: k};
      })};
      legend.items.push({label: "no type", color: NONE_COLOR, count: counts[this.types.length], unit: "concept", type: -1});
    } else {
      var cc = function (id) { return id ? CLUSTER_COLORS[(id - 1) % CLUSTER_COLORS.length] : NONE_COLOR; };
      for (i = 0; i < this.nC; i++) concept[i] = cc(C.cluster[i]);
      for (i = 0; i < this.nP; i++) paper[i] = cc(P.cluster[i]);
      legend = {kind: "list", title: "Cluster", items: this.clusters.map(function (c) {
        return {label: c.label, color: cc(c.id), count: c.concepts, unit: "concept", cluster: c.id};
      })};
      if (!legend.items.length) legend.items.push({label: "no clusters in this graph", color: NONE_COLOR});
    }
    legend.mode = mode;
    return {concept: concept, paper: paper, legend: legend, of: function (kind, i) {
      return kind === "concept" ? concept[i] : kind === "paper" ? paper[i] : NONE_COLOR;
    }};
  };

  kg.core = {Model: Model, shorten: shorten, plural: plural, squash: squash, finite: finite, SIDE: SIDE, typeName: typeName,
             clusterColor: function (id) { return id ? CLUSTER_COLORS[(id - 1) % CLUSTER_COLORS.length] : NONE_COLOR; }};
})(window.kg = window.kg || {});
