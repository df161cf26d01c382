/* kg map page: where labels go. Labels keep their size on screen while the map zooms. For each
   level of a ladder of zoom scales (base * RATIO^level) the labels are placed greedily in rank
   order, as VOSviewer culls them: each takes the first of its places (on its node, then just
   below, above, right or left of it) where its box (screen pixels) overlaps none placed before
   it over the whole level, from its scale to the next one's; one that has no such place is not
   drawn at that level. So at any zoom no two drawn labels overlap, a label is kept out only by
   labels ranked before it, and lower-ranked labels come in as the view zooms in. A label keeps
   the place it had at the level next to it (towards the fitted view) when it can, so labels do
   not jump about as the view zooms. A level is placed when the view first reaches it. */
(function (kg) {
  "use strict";

  var RATIO = 1.25, PAD = 3, VPAD = 4, CELL = 64, GAP = 1;  /* PAD, VPAD: pixels kept free around a label */  /* CELL: screen pixels of a cell of the collision grid */

  /* items: [{x, y} canvas units, w, h, r (its node's radius, 0: centred only) screen pixels,
     from: first level it may be drawn at, upto: last level (Infinity: all)], in rank order;
     home: the level whose places are chosen first (the fitted view's); measure: called once
     before a level where an item without its width (w null) may be drawn, to set them. */
  function Placement(items, base, levels, home, measure) {
    this.items = items;
    this.measure = measure;
    this.base = base;
    this.levels = levels;
    this.home = Math.max(0, Math.min(levels - 1, home || 0));
    this.placed = [];
  }

  Placement.prototype.scale = function (level) { return this.base * Math.pow(RATIO, level); };

  /* The level of the ladder that zoom scale `s` has reached (-1 below the base). */
  Placement.prototype.levelAt = function (s) {
    if (!(s >= this.base)) return -1;
    return Math.min(this.levels - 1, Math.floor(Math.log(s / this.base) / Math.log(RATIO) + 1e-9));
  };

  /* The labels placed at a level: {order: item indexes in rank order, place: item -> place}. */
  Placement.prototype.at = function (level) {
    if (level < 0) return {order: [], place: {}};
    if (!this.placed[level]) {
      var near = level === this.home ? null : this.at(level + (level < this.home ? 1 : -1));
      this.placed[level] = this._place(level, near);
    }
    return this.placed[level];
  };

  /* The places of an item, offsets of its box's centre from its node (screen pixels). */
  function places(it) {
    if (!it.r) return [[0, 0]];
    var dy = it.r + it.h / 2 + GAP, dx = it.r + it.w / 2 + GAP;
    return [[0, 0], [0, dy], [0, -dy], [dx, 0], [-dx, 0]];
  }

  /* The part of [0, 1] where |a + b t| < w (an open interval, maybe empty). */
  function within(a, b, w) {
    if (b === 0) return Math.abs(a) < w ? [0, 1] : null;
    var t0 = (-w - a) / b, t1 = (w - a) / b;
    if (t0 > t1) { var t = t0; t0 = t1; t1 = t; }
    t0 = Math.max(t0, 0); t1 = Math.min(t1, 1);
    return t0 < t1 ? [t0, t1] : null;
  }

  /* Two labels can overlap somewhere in a level only if their boxes' centres, at its scale, are
     closer than 4/3 of the sum of their half sizes plus a third of their places' difference (the
     nodes move apart by a quarter of their distance from one level to the next): so placed labels
     are kept in a grid by their centres, and each label looks for clashes within that reach. */
  Placement.prototype._place = function (level, near) {
    var s0 = this.scale(level), s1 = this.scale(level + 1), items = this.items, grid = new Map(), put = {};
    var order = [], place = {}, widest = 0, tallest = 0, biggest = 0;
    function clash(a, o, j) {  /* whether item a at place o overlaps placed item j anywhere in the level */
      var b = items[j], p = put[j], dx = a.x - b.x, dy = a.y - b.y;
      var ix = within(dx * s0 + o[0] - p[0], dx * (s1 - s0), (a.w + b.w) / 2 + PAD);
      if (!ix) return false;
      var iy = within(dy * s0 + o[1] - p[1], dy * (s1 - s0), (a.h + b.h) / 2 + VPAD);
      return !!iy && Math.max(ix[0], iy[0]) < Math.min(ix[1], iy[1]);
    }
    for (var i = 0; i < items.length; i++) {
      var it = items[i];
      if (it.from > level || it.upto < level) continue;
      if (it.w === null) { if (this.measure) this.measure(); this.measure = null; if (it.w === null) continue; }
      var options = places(it), first = near && near.place[i];
      if (first) options = [first].concat(options.filter(function (o) { return o[0] !== first[0] || o[1] !== first[1]; }));
      var rx = 1.7 * ((it.w + widest) / 2 + PAD) + (it.r + biggest + 2 * GAP) / 3 + it.w / 2 + it.r;
      var ry = 1.7 * ((it.h + tallest) / 2 + VPAD) + (it.r + biggest + 2 * GAP) / 3 + it.h / 2 + it.r;
      var cx = it.x * s0, cy = it.y * s0, found = [];
      for (var gx = Math.floor((cx - rx) / CELL); gx <= Math.floor((cx + rx) / CELL); gx++) {
        for (var gy = Math.floor((cy - ry) / CELL); gy <= Math.floor((cy + ry) / CELL); gy++) {
          var there = grid.get(gx * 4194304 + gy);
          if (there) for (var k = 0; k < there.length; k++) found.push(there[k]);
        }
      }
      for (var c = 0; c < options.length; c++) {
        var o = options[c], free = true;
        for (k = 0; k < found.length && free; k++) if (clash(it, o, found[k])) free = false;
        if (!free) continue;
        put[i] = o; place[i] = o; order.push(i);
        var key = Math.floor((cx + o[0]) / CELL) * 4194304 + Math.floor((cy + o[1]) / CELL), list = grid.get(key);
        if (list) list.push(i); else grid.set(key, [i]);
        widest = Math.max(widest, it.w); tallest = Math.max(tallest, it.h); biggest = Math.max(biggest, it.r);
        break;
      }
    }
    return {order: order, place: place};
  };

  /* The labels drawn at zoom scale s: {order, place} of the level it has reached. */
  Placement.prototype.drawnAt = function (s) { return this.at(this.levelAt(s)); };

  kg.labels = {Placement: Placement, RATIO: RATIO, PAD: PAD, VPAD: VPAD, GAP: GAP};
})(window.kg = window.kg || {});
