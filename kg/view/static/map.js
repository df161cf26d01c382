/* kg map page: the map. vis-network holds the view (the canvas, zoom, pan, animated moves,
   pointer events); this layer draws on its canvas, every frame, what is in view: the links,
   the papers (as you zoom in), the concepts as circles at the model's positions (physics is
   off: nothing moves), and every label. Circles and labels keep their size on screen while
   the map zooms, as in VOSviewer. Concept labels are sized by papers and placed by kg.labels
   so that none overlap; cluster names lie over their regions; paper labels come with zoom.
   All texts are drawn with fillText: never parsed as HTML. */
(function (kg) {
  "use strict";
  var core = kg.core;

  var LEVELS = 40, BELOW_FIT = 8;              /* the label ladder: from fit / 8 up, 40 levels of 1.25 */
  var MAX_ZOOM = 150, MIN_ZOOM = 0.25;          /* relative to the fitted view */
  var CONCEPT_FONT = [12, 22], FULL_SIZE = 200;  /* label font in pixels: 12 at one paper, 22 at 200 and more */
  var PAPER_FONT = 11, CLUSTER_FONT = 15;
  var CONCEPT_CHARS = 36, PAPER_CHARS = 40, CLUSTER_CHARS = 48;
  var FONT = "system-ui, 'DejaVu Sans', sans-serif";
  var BEFORE_NAMES = 20;                        /* concept labels ranked before the cluster names */
  var NAMED = 10, MIN_NAMED = 0.04, NAMES_FROM = 1;            /* cluster names on the map: at most 10, of 4 % of the concepts or more */
  var PAPERS_AT_FIT = 1500;                     /* more papers than this: they appear as you zoom in */
  var PAPER_RADIUS = 2, HIT = 3;                /* screen pixels */
  var GRID = 16;                                /* canvas units: the cell of the hit-test grid */
  var SETTLE = 150, ZOOM_REUSE = 1.6, MARGIN = 0.2;  /* the moving picture: see _draw */

  /* A cluster's name for the map: its first parts (" / ") that fit CLUSTER_CHARS. */
  function clusterName(label) {
    var parts = String(label).split(" / "), name = parts[0];
    for (var k = 1; k < parts.length && (name + " / " + parts[k]).length <= CLUSTER_CHARS; k++) name += " / " + parts[k];
    return core.shorten(name, CLUSTER_CHARS);
  }

  function darker(hex, f) {
    var n = parseInt(hex.slice(1), 16);
    return "rgb(" + [(n >> 16), (n >> 8) & 255, n & 255].map(function (v) { return Math.round(v * f); }).join(",") + ")";
  }

  function MapView(container, M, hooks) {
    this.M = M; this.container = container; this.hooks = hooks || {};
    this.mode = "cluster";
    this.colors = M.colors(this.mode);
    this.hover = null; this.selected = null;
    this.labelsDrawn = [];
    this.measure = document.createElement("canvas").getContext("2d");
    this.frames = 0; this.lastEvent = null; this.placement = null;
    this._network();
    this.setSelection(M.select(M.noFilter()), {fit: true});
  }

  MapView.prototype._network = function () {
    var self = this;
    this.network = new vis.Network(this.container, {nodes: new vis.DataSet([]), edges: new vis.DataSet([])}, {
      autoResize: true,
      physics: {enabled: false},
      layout: {improvedLayout: false, randomSeed: 1},
      interaction: {hover: false, keyboard: false, multiselect: false, selectable: false}
    });
    var net = this.network;
    net.on("beforeDrawing", function (ctx) { self._draw(ctx); });
    net.on("click", function (p) { if (self.hooks.pick) self.hooks.pick(self._hit(p.pointer.DOM)); });
    net.on("zoom", function () {
      var s = net.getScale();
      if (s > self.fitScale * MAX_ZOOM) net.moveTo({scale: self.fitScale * MAX_ZOOM});
      else if (s < self.fitScale * MIN_ZOOM) net.moveTo({scale: self.fitScale * MIN_ZOOM});
    });
    this.container.addEventListener("mousemove", function (ev) {
      self.lastEvent = ev;
      var r = self.container.getBoundingClientRect();
      self._hoverAt(self._hit({x: ev.clientX - r.left, y: ev.clientY - r.top}));
    });
    this.container.addEventListener("mouseleave", function () { self._hoverAt(null); });
  };

  /* ------------------------------------------------------------ what is drawn */

  /* Show the concepts and papers of a selection (kg.core Model.select): circles and labels
     sized by papers in it, the links between shown concepts, the labels placed anew. */
  MapView.prototype.setSelection = function (sel, opts) {
    var M = this.M, self = this;
    this.sel = sel;
    var max = 1, min = Infinity;
    sel.ranked.forEach(function (c) { max = Math.max(max, sel.count[c]); min = Math.min(min, sel.count[c]); });
    if (!(min <= max)) min = 1;
    var lo = Math.log(Math.max(min, 1)), spread = Math.log(max) - lo || 1;
    this.weight = function (c) { return Math.sqrt(Math.max(0, (Math.log(Math.max(sel.count[c], 1)) - lo) / spread)); };
    this.fontSize = function (c) {
      var t = Math.min(1, Math.log(Math.max(sel.count[c], 1)) / Math.log(FULL_SIZE));
      return Math.round(CONCEPT_FONT[0] + (CONCEPT_FONT[1] - CONCEPT_FONT[0]) * t);
    };
    var n = Math.max(sel.ranked.length, 1), rmax = Math.max(5, Math.min(14, 300 / Math.sqrt(n)));
    this.radius = new Float32Array(M.nC);
    sel.ranked.forEach(function (c) { self.radius[c] = Math.max(1.5, rmax * (0.25 + 0.75 * self.weight(c))); });
    this.papers = [];
    for (var i = 0; i < M.nP; i++) if (sel.paperOn[i] && M.px[i] !== null) this.papers.push(i);
    this.shown = sel.ranked.slice().reverse();  /* drawn smallest first, so the big ones lie on top */
    this._grids();
    this._linkList();
    this._labelItems();
    this.version = (this.version || 0) + 1;
    if (opts && opts.fit) this.fit(); else this._placeLabels();
    this.network.redraw();
  };

  MapView.prototype.setColors = function (mode) {
    this.mode = mode;
    this.colors = this.M.colors(mode);
    this._linkList();
    this.version++;
    this.network.redraw();
    return this.colors.legend;
  };

  /* The fitted view: every circle and every label of the first view in the canvas. The labels
     are placed for a scale, and the scale is cut so that the labels that stick out of the
     circles' box fit too (those placed at the new scale may differ a little). */
  MapView.prototype.fit = function (animate) {
    var M = this.M, x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity, k;
    function add(x, y) { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
    this.sel.ranked.forEach(function (c) { add(M.cx[c], M.cy[c]); });
    this.papers.forEach(function (p) { add(M.px[p], M.py[p]); });
    if (!(x0 <= x1)) { x0 = y0 = -core.SIDE / 2; x1 = y1 = core.SIDE / 2; }
    var w = Math.max(this.container.clientWidth, 100), h = Math.max(this.container.clientHeight, 100), margin = 12;
    var bw = Math.max(x1 - x0, 1e-6), bh = Math.max(y1 - y0, 1e-6);
    var s = Math.max(Math.min((w - 2 * margin - 40) / bw, (h - 2 * margin - 30) / bh, 20), 1e-3), cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
    var old = this.fitScale;
    for (var pass = 0; pass < 2; pass++) {
      this.fitScale = s;
      this._placeLabels();
      if (pass === 1) break;
      var placed = this.placement.at(this.fitLevel), items = this.placement.items, o = [0, 0, 0, 0];
      for (k = 0; k < placed.order.length; k++) {
        var i = placed.order[k], it = items[i], at = placed.place[i];
        if (this.labelKinds[i].kind === "paper" && !this.papersVisible(s)) continue;
        o[0] = Math.max(o[0], -((it.x - x0) * s + at[0] - it.w / 2));
        o[1] = Math.max(o[1], (it.x - x1) * s + at[0] + it.w / 2);
        o[2] = Math.max(o[2], -((it.y - y0) * s + at[1] - it.h / 2));
        o[3] = Math.max(o[3], (it.y - y1) * s + at[1] + it.h / 2);
      }
      var fit = Math.min((w - 2 * margin - o[0] - o[1]) / bw, (h - 2 * margin - o[2] - o[3]) / bh, 20);
      var next = Math.max(Math.min(s, fit), s * 0.6, 1e-3);
      cx = (x0 + x1) / 2 + (o[1] - o[0]) / 2 / next;
      cy = (y0 + y1) / 2 + (o[3] - o[2]) / 2 / next;
      if (next >= s * 0.999) break;
      s = next;
    }
    if (animate && old) { this.fitScale = old; this._placeLabels(); }
    this.network.moveTo({position: {x: cx, y: cy}, scale: s, animation: animate ? {duration: 300, easingFunction: "easeInOutQuad"} : false});
  };

  /* The labels and their order (kg.labels): the first BEFORE_NAMES concepts, the cluster names
     (drawn from NAMES_FROM levels below the fitted view up to 3 above it), the other concepts,
     then the papers, each held back only by those before it. Made once a selection, for any
     scale; widths are measured a font at a time (setting a canvas font costs more than
     measuring), the papers' only when first needed. */
  MapView.prototype._labelItems = function () {
    var M = this.M, C = M.C, P = M.P, self = this, items = [], kinds = [];
    this.fitLevel = Math.floor(Math.log(BELOW_FIT) / Math.log(kg.labels.RATIO) + 1e-9);
    function add(kind, i, x, y, text, size, weight, from, upto, r) {
      items.push({x: x, y: y, w: null, h: size * 1.2, r: r, from: from, upto: upto});
      kinds.push({kind: kind, i: i, text: text, size: size, weight: weight, font: weight + " " + size + "px " + FONT});
    }
    function concept(c) {
      add("concept", c, M.cx[c], M.cy[c], core.shorten(C.label[c], CONCEPT_CHARS), self.fontSize(c), "600", 0, Infinity, self.radius[c]);
    }
    this.sel.ranked.slice(0, BEFORE_NAMES).forEach(concept);
    this._namedClusters().forEach(function (n) {
      add("cluster", n[0], n[1], n[2], n[3], CLUSTER_FONT, "bold", self.fitLevel - NAMES_FROM, self.fitLevel + 3, 0);
    });
    this.sel.ranked.slice(BEFORE_NAMES).forEach(concept);
    var many = this.papers.length > PAPERS_AT_FIT;
    this.paperLevel = this.fitLevel + (many ? Math.ceil(Math.log(Math.sqrt(this.papers.length / PAPERS_AT_FIT)) / Math.log(kg.labels.RATIO)) : 0);
    this.paperLabelLevel = Math.max(this.paperLevel, this.fitLevel + 3);
    var order = this.papers.slice().sort(function (a, b) { return P.concepts[b].length - P.concepts[a].length || a - b; });
    order.forEach(function (p) {
      add("paper", p, M.px[p], M.py[p], core.shorten(P.label[p], PAPER_CHARS), PAPER_FONT, "normal", self.paperLabelLevel, Infinity,
          PAPER_RADIUS);
    });
    this._measure(items, kinds, function (k) { return k.kind !== "paper"; });
    this.labelItems = items;
    this.labelKinds = kinds;
  };

  /* The labels' placement for the fitted view's scale. */
  MapView.prototype._placeLabels = function () {
    var items = this.labelItems, kinds = this.labelKinds, self = this;
    this.placement = new kg.labels.Placement(items, this.fitScale / BELOW_FIT, LEVELS, this.fitLevel, function () {
      self._measure(items, kinds, function (k) { return k.kind === "paper"; });
    });
  };

  MapView.prototype._measure = function (items, kinds, which) {
    var ctx = this.measure, byFont = {};
    kinds.forEach(function (k, i) { if (items[i].w === null && which(k)) (byFont[k.font] || (byFont[k.font] = [])).push(i); });
    Object.keys(byFont).forEach(function (font) {
      ctx.font = font;
      byFont[font].forEach(function (i) { items[i].w = ctx.measureText(kinds[i].text).width; });
    });
  };

  /* The clusters named on the map: the biggest, each with at least MIN_NAMED of the concepts
     shown, at most NAMED (the legend names them all); each name at the top of its region (above
     the concepts of its cluster, most of them: their centre minus the 85th percentile of their
     distances to it), where it hides no label of the concepts in the middle. Names of more than
     CLUSTER_CHARS characters keep their first parts. [cluster index, x, y, name] each. */
  MapView.prototype._namedClusters = function () {
    var M = this.M, sel = this.sel, members = {}, out = [];
    if (sel.ranked.length < 2) return out;
    sel.ranked.forEach(function (c) { var k = M.C.cluster[c]; if (k) (members[k] || (members[k] = [])).push(c); });
    M.clusters.forEach(function (c, k) {
      var at = M.clusterXY[k], mine = members[c.id] || [];
      if (at[0] === null || at[1] === null || mine.length < Math.max(3, MIN_NAMED * sel.ranked.length)) return;
      var d = mine.map(function (i) { return Math.hypot(M.cx[i] - at[0], M.cy[i] - at[1]); }).sort(function (a, b) { return a - b; });
      out.push([k, at[0], at[1] - d[Math.floor(0.85 * (d.length - 1))], mine.length]);
    });
    out.sort(function (a, b) { return b[3] - a[3] || a[0] - b[0]; });
    return out.slice(0, NAMED).map(function (n) { return [n[0], n[1], n[2], clusterName(M.clusters[n[0]].label)]; });
  };

  /* The links between shown concepts: [a, b, width class, colour] in drawing order. */
  MapView.prototype._linkList = function () {
    var M = this.M, L = M.links, on = this.sel.conceptOn, colors = this.colors.concept, out = [], max = 1, k;
    for (k = 0; k < L.length; k += 4) if (on[L[k]] && on[L[k + 1]]) max = Math.max(max, L[k + 2]);
    for (k = 0; k < L.length; k += 4) {
      var a = L[k], b = L[k + 1];
      if (!on[a] || !on[b]) continue;
      out.push([a, b, 1 + Math.round(2 * Math.sqrt(L[k + 2] / max)), colors[a] === colors[b] ? colors[a] : "#9aa1a9"]);
    }
    out.sort(function (x, y) { return x[2] - y[2] || (x[3] < y[3] ? -1 : x[3] > y[3] ? 1 : 0); });
    this.linkList = out;
  };

  MapView.prototype._grids = function () {
    var M = this.M;
    function grid(items, xs, ys) {
      var cells = new Map();
      items.forEach(function (i) {
        var key = Math.floor(xs[i] / GRID) * 65536 + Math.floor(ys[i] / GRID), l = cells.get(key);
        if (l) l.push(i); else cells.set(key, [i]);
      });
      return cells;
    }
    this.conceptGrid = grid(this.sel.ranked, M.cx, M.cy);
    this.paperGrid = grid(this.papers, M.px, M.py);
  };

  MapView.prototype.papersVisible = function (s) {
    if (s === undefined) s = this.network.getScale();
    return this.papers.length > 0 && this.placement.levelAt(s) >= this.paperLevel - 2;
  };

  /* The node under a point of the map (DOM pixels): the concept whose circle holds it (the
     biggest first), else the nearest paper within a few pixels, if papers are drawn. */
  MapView.prototype._hit = function (dom) {
    var M = this.M, at = this.network.DOMtoCanvas(dom), s = this.network.getScale(), self = this;
    function near(cells, xs, ys, reach, test) {
      var best = null, bestD = Infinity;
      for (var gx = Math.floor((at.x - reach) / GRID); gx <= Math.floor((at.x + reach) / GRID); gx++) {
        for (var gy = Math.floor((at.y - reach) / GRID); gy <= Math.floor((at.y + reach) / GRID); gy++) {
          (cells.get(gx * 65536 + gy) || []).forEach(function (i) {
            var d = Math.hypot(xs[i] - at.x, ys[i] - at.y) * s;
            if (test(i, d) && d < bestD) { bestD = d; best = i; }
          });
        }
      }
      return best;
    }
    var c = near(this.conceptGrid, M.cx, M.cy, (14 + HIT) / s, function (i, d) { return d <= self.radius[i] + HIT; });
    if (c !== null) return ["concept", c];
    if (!this.papersVisible(s)) return null;
    var p = near(this.paperGrid, M.px, M.py, (PAPER_RADIUS + HIT + 2) / s, function (i, d) { return d <= PAPER_RADIUS + HIT + 2; });
    return p === null ? null : ["paper", p];
  };

  /* ------------------------------------------------------------ drawing */

  /* The whole frame, in screen pixels: vis-network has set the view's transform on ctx. The
     links, papers and circles (the base) come from a cached picture of the last view at rest,
     moved and scaled while the view zooms or pans (as map viewers do); the picture is made
     again once the view rests for SETTLE ms, or zooms 1.6x from it, or pans out of it. The
     labels and highlights are drawn anew every frame. */
  MapView.prototype._draw = function (ctx) {
    if (!this.placement) return;
    var m = ctx.getTransform(), pr = ctx.canvas.width / Math.max(ctx.canvas.clientWidth, 1);
    var v = {s: m.a / pr, ox: m.e / pr, oy: m.f / pr, w: ctx.canvas.clientWidth, h: ctx.canvas.clientHeight, pr: pr};
    var self = this;
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, ctx.canvas.width, ctx.canvas.height);
    this._base(ctx, v);
    ctx.setTransform(pr, 0, 0, pr, 0, 0);
    [this.hover, this.selected].forEach(function (item) { if (item) self._highlight(ctx, item, v); });
    this._labels(ctx, v);
    [this.selected, this.hover].forEach(function (item) { if (item) self._tag(ctx, item, v); });
    ctx.restore();
    this.frames++;
    if (this.hooks.drawn) this.hooks.drawn(this);
  };

  MapView.prototype._base = function (ctx, v) {
    var c = this.cache, k = c ? v.s / c.s : 0, self = this;
    var dx = c ? v.ox - (c.ox + c.mx) * k : 0, dy = c ? v.oy - (c.oy + c.my) * k : 0;
    var fits = c && c.version === this.version && c.papers === this.papersVisible(v.s) && c.w === v.w && c.h === v.h && k > 1 / ZOOM_REUSE && k < ZOOM_REUSE &&
      dx <= 0 && dy <= 0 && dx + c.W * k >= v.w && dy + c.H * k >= v.h;
    if (!fits) {
      c = this.cache = this._picture(v);
      k = 1; dx = -c.mx; dy = -c.my;
    }
    ctx.drawImage(c.canvas, dx * v.pr, dy * v.pr, c.W * k * v.pr, c.H * k * v.pr);
    clearTimeout(this.settle);
    if (k !== 1 || dx !== -c.mx || dy !== -c.my) {
      this.settle = setTimeout(function () { self.cache = null; self.network.redraw(); }, SETTLE);
    }
  };

  /* The base drawn for view v, with a margin around it: a picture to move while the view moves. */
  MapView.prototype._picture = function (v) {
    var mx = Math.round(v.w * MARGIN), my = Math.round(v.h * MARGIN), W = v.w + 2 * mx, H = v.h + 2 * my;
    var c = this.cache && this.cache.canvas ? this.cache.canvas : document.createElement("canvas");
    if (c.width !== Math.round(W * v.pr) || c.height !== Math.round(H * v.pr)) { c.width = Math.round(W * v.pr); c.height = Math.round(H * v.pr); }
    var ctx = c.getContext("2d"), at = {s: v.s, ox: v.ox + mx, oy: v.oy + my, w: W, h: H, pr: v.pr};
    ctx.setTransform(v.pr, 0, 0, v.pr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    this._links(ctx, at);
    if (this.papersVisible(v.s)) this._papers(ctx, at);
    this._concepts(ctx, at);
    this.pictures = (this.pictures || 0) + 1;
    return {canvas: c, s: v.s, ox: v.ox, oy: v.oy, mx: mx, my: my, W: W, H: H, w: v.w, h: v.h, version: this.version,
            papers: this.papersVisible(v.s)};
  };

  MapView.prototype._links = function (ctx, v) {
    var M = this.M, L = this.linkList, cx = M.cx, cy = M.cy, open = null, k;
    ctx.globalAlpha = 0.35;
    for (k = 0; k < L.length; k++) {
      var l = L[k], key = l[2] + l[3];
      var x1 = cx[l[0]] * v.s + v.ox, y1 = cy[l[0]] * v.s + v.oy, x2 = cx[l[1]] * v.s + v.ox, y2 = cy[l[1]] * v.s + v.oy;
      if (Math.max(x1, x2) < 0 || Math.min(x1, x2) > v.w || Math.max(y1, y2) < 0 || Math.min(y1, y2) > v.h) continue;
      if (key !== open) {
        if (open !== null) ctx.stroke();
        ctx.beginPath(); ctx.strokeStyle = l[3]; ctx.lineWidth = l[2] * 0.6; open = key;
      }
      ctx.moveTo(x1, y1); ctx.lineTo(x2, y2);
    }
    if (open !== null) ctx.stroke();
    ctx.globalAlpha = 1;
  };

  /* Circles of a list of nodes, by colour; those under 2.5 pixels as squares (the same at that
     size, and much cheaper to fill), the others as discs with a darker rim. */
  MapView.prototype._discs = function (ctx, v, items, xs, ys, radius, color, alpha) {
    var groups = {}, k;
    for (k = 0; k < items.length; k++) {
      var i = items[k], x = xs[i] * v.s + v.ox, y = ys[i] * v.s + v.oy, r = radius(i);
      if (x + r < 0 || x - r > v.w || y + r < 0 || y - r > v.h) continue;
      var g = groups[color[i]] || (groups[color[i]] = {small: [], big: []});
      (r < 2.5 ? g.small : g.big).push(x, y, r);
    }
    ctx.globalAlpha = alpha;
    Object.keys(groups).sort().forEach(function (c) {
      var g = groups[c], l = g.small;
      ctx.fillStyle = c;
      for (k = 0; k < l.length; k += 3) ctx.fillRect(l[k] - l[k + 2], l[k + 1] - l[k + 2], 2 * l[k + 2], 2 * l[k + 2]);
      l = g.big;
      if (!l.length) return;
      ctx.beginPath();
      for (k = 0; k < l.length; k += 3) { ctx.moveTo(l[k] + l[k + 2], l[k + 1]); ctx.arc(l[k], l[k + 1], l[k + 2], 0, 2 * Math.PI); }
      ctx.fill();
      ctx.strokeStyle = darker(c, 0.7); ctx.lineWidth = 0.8; ctx.stroke();
    });
    ctx.globalAlpha = 1;
  };

  MapView.prototype._concepts = function (ctx, v) {
    var radius = this.radius;
    this._discs(ctx, v, this.shown, this.M.cx, this.M.cy, function (i) { return radius[i]; }, this.colors.concept, 0.8);
  };

  MapView.prototype._papers = function (ctx, v) {
    this._discs(ctx, v, this.papers, this.M.px, this.M.py, function () { return PAPER_RADIUS; }, this.colors.paper, 0.75);
  };

  /* The links of a hovered or selected node: a concept's links, a paper's concepts; and a ring. */
  MapView.prototype._highlight = function (ctx, item, v) {
    var M = this.M, on = this.sel.conceptOn, kind = item[0], i = item[1], k, self = this;
    function xy(kind, j) { var at = self.positionOf(kind, j); return [at.x * v.s + v.ox, at.y * v.s + v.oy]; }
    var at = this.positionOf(kind, i);
    if (!at) return;
    var here = xy(kind, i);
    ctx.strokeStyle = "rgba(30, 34, 40, 0.6)";
    ctx.lineWidth = 1.2;
    ctx.beginPath();
    if (kind === "concept") {
      var L = M.links;
      for (k = 0; k < L.length; k += 4) {
        var other = L[k] === i ? L[k + 1] : L[k + 1] === i ? L[k] : -1;
        if (other >= 0 && on[other]) { var there = xy("concept", other); ctx.moveTo(here[0], here[1]); ctx.lineTo(there[0], there[1]); }
      }
    } else if (kind === "paper") {
      var l = M.P.concepts[i];
      for (k = 0; k < l.length; k += 2) {
        if (M.cx[l[k]] !== null) { var c = xy("concept", l[k]); ctx.moveTo(here[0], here[1]); ctx.lineTo(c[0], c[1]); }
      }
    }
    ctx.stroke();
    var r = kind === "concept" && this.sel.conceptOn[i] ? this.radius[i] : kind === "paper" ? PAPER_RADIUS : 4;
    ctx.beginPath();
    ctx.arc(here[0], here[1], r + 3, 0, 2 * Math.PI);
    ctx.fillStyle = this.colors.of(kind, i);
    ctx.fill();
    ctx.lineWidth = 2;
    ctx.strokeStyle = "#111111";
    ctx.stroke();
  };

  MapView.prototype.positionOf = function (kind, i) {
    var M = this.M;
    if (kind === "concept" && M.cx[i] !== null) return {x: M.cx[i], y: M.cy[i]};
    if (kind === "paper" && M.px[i] !== null) return {x: M.px[i], y: M.py[i]};
    return null;
  };

  MapView.prototype._labels = function (ctx, v) {
    var items = this.placement.items, kinds = this.labelKinds, drawn = this.placement.drawnAt(v.s), out = [];
    var papers = this.papersVisible(v.s), order = drawn.order.slice();
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.lineJoin = "round";
    order.sort(function (a, b) { return (kinds[a].kind === "cluster") - (kinds[b].kind === "cluster"); });
    for (var k = 0; k < order.length; k++) {
      var it = items[order[k]], lk = kinds[order[k]], at = drawn.place[order[k]];
      if (lk.kind === "paper" && !papers) continue;
      var x = it.x * v.s + v.ox + at[0], y = it.y * v.s + v.oy + at[1];
      if (x + it.w / 2 < 0 || x - it.w / 2 > v.w || y + it.h / 2 < 0 || y - it.h / 2 > v.h) continue;
      this._text(ctx, lk, x, y, it.w, it.h);
      out.push({kind: lk.kind, index: lk.i, text: lk.text, x: x - it.w / 2, y: y - it.h / 2, w: it.w, h: it.h, size: lk.size,
                dx: at[0], dy: at[1]});
    }
    this.labelsDrawn = out;
  };

  MapView.prototype._text = function (ctx, lk, x, y, w, h) {
    ctx.font = lk.weight + " " + lk.size + "px " + FONT;
    if (lk.kind === "cluster") {
      var color = core.clusterColor(this.M.clusters[lk.i].id);
      ctx.lineWidth = 5; ctx.strokeStyle = "rgba(255, 255, 255, 0.92)"; ctx.strokeText(lk.text, x, y);
      ctx.fillStyle = darker(color, 0.6); ctx.fillText(lk.text, x, y);
      return;
    }
    ctx.fillStyle = "rgba(255, 255, 255, 0.97)";
    ctx.fillRect(x - w / 2 - 3, y - h / 2, w + 6, h);
    ctx.fillStyle = lk.kind === "paper" ? "#3d4550" : "#101418";
    ctx.fillText(lk.text, x, y);
  };

  /* The label of the hovered or selected node, whole and boxed, over everything: where its label
     is drawn if it is, else just above its node. */
  MapView.prototype._tag = function (ctx, item, v) {
    var at = this.positionOf(item[0], item[1]);
    if (!at) return;
    var text = core.shorten(this.M.label(item[0], item[1]), 80), size = item[0] === "paper" ? 12 : 14, self = this;
    var x = at.x * v.s + v.ox, y = at.y * v.s + v.oy - size * 1.6 - 4;
    var drawn = this.labelsDrawn.filter(function (l) { return l.kind === item[0] && l.index === item[1]; })[0];
    if (drawn) { x = drawn.x + drawn.w / 2; y = drawn.y + drawn.h / 2; size = Math.max(size, drawn.size); }
    ctx.font = "600 " + size + "px " + FONT;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    var w = ctx.measureText(text).width;
    ctx.fillStyle = "rgba(255, 255, 255, 0.98)";
    ctx.strokeStyle = "#1b1f24";
    ctx.lineWidth = self.selected === item ? 2 : 1;
    ctx.fillRect(x - w / 2 - 5, y - size * 0.75, w + 10, size * 1.5);
    ctx.strokeRect(x - w / 2 - 5, y - size * 0.75, w + 10, size * 1.5);
    ctx.fillStyle = "#111111";
    ctx.fillText(text, x, y);
  };

  /* ------------------------------------------------------------ interaction */

  MapView.prototype._hoverAt = function (item) {
    var same = (item && this.hover && item[0] === this.hover[0] && item[1] === this.hover[1]) || (!item && !this.hover);
    this.hover = item;
    this.container.style.cursor = item ? "pointer" : "";
    if (this.hooks.hover) this.hooks.hover(item);
    if (!same) this.network.redraw();
  };

  MapView.prototype.select = function (item) {
    this.selected = item;
    this.network.redraw();
  };

  /* Move the view to a node (animated), zoomed in enough that its neighbourhood is labelled;
     a concept or venue without a place: the middle of its papers. */
  MapView.prototype.focus = function (kind, i) {
    var at = this.positionOf(kind, i);
    if (!at && kind === "concept") at = this._papersCentre(this.M.lazy().papersOf[i].map(function (x) { return x[0]; }));
    if (!at && kind === "venue") at = this._papersCentre(this.M.lazy().venuePapers[i]);
    if (!at) return false;
    var want = kind === "paper" ? this.placement.scale(this.paperLabelLevel) : this.fitScale * 3;
    this.network.moveTo({position: at, scale: Math.max(this.network.getScale(), want),
                         animation: {duration: 350, easingFunction: "easeInOutQuad"}});
    return true;
  };

  MapView.prototype._papersCentre = function (papers) {
    var M = this.M, x = 0, y = 0, n = 0;
    papers.forEach(function (p) { if (M.px[p] !== null) { x += M.px[p]; y += M.py[p]; n++; } });
    return n ? {x: x / n, y: y / n} : null;
  };

  MapView.prototype.png = function () {
    var canvas = this.container.querySelector("canvas");
    clearTimeout(this.settle);
    this.cache = null;
    this.network.redraw();
    return canvas ? canvas.toDataURL("image/png") : null;
  };

  /* Where a node is on the screen (DOM pixels of the map), or null. */
  MapView.prototype.screenOf = function (kind, i) {
    var at = this.positionOf(kind, i);
    return at ? this.network.canvasToDOM(at) : null;
  };

  MapView.prototype.state = function () {
    var M = this.M;
    return {
      concepts: this.sel.ranked.length, links: this.linkList.length, papers: this.papers.length,
      papersVisible: this.papersVisible(), colorBy: this.mode, scale: this.network.getScale(), fitScale: this.fitScale,
      selected: this.selected ? M.id(this.selected[0], this.selected[1]) : null,
      labels: this.labelsDrawn.map(function (l) {
        return {kind: l.kind, id: l.kind === "cluster" ? "cluster:" + M.clusters[l.index].id : M.id(l.kind, l.index),
                text: l.text, x: l.x, y: l.y, w: l.w, h: l.h, size: l.size, dx: l.dx, dy: l.dy};
      }),
      frames: this.frames, pictures: this.pictures
    };
  };

  /* The colour each node of *ids* has under the current overlay. */
  MapView.prototype.colorsOf = function (ids) {
    var M = this.M, self = this;
    return ids.map(function (id) { var f = M.index[id]; return f ? self.colors.of(f[0], f[1]) : null; });
  };

  kg.MapView = MapView;
})(window.kg = window.kg || {});
