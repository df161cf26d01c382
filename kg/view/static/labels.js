/* kg map page: where labels go. Labels keep their size on screen while the map zooms, so two
   labels that do not overlap at one zoom scale never overlap at a larger one. The placement
   is made level by level on a ladder of zoom scales (base * RATIO^level): at each level the
   labels placed before stay, and the others, in rank order, take their place if their box
   (screen pixels, centred on the node) overlaps none placed. A label is drawn from its level
   on, so no two drawn labels overlap at any zoom, and zooming in only adds labels: VOSviewer
   culls its labels the same way (a scale threshold per label, found in rank order). */
(function (kg) {
  "use strict";

  var RATIO = 1.25, CELL = 48, PAD = 2;

  /* items: [{x, y} canvas units, w, h screen pixels, from: first level it may take, upto:
     last level it is drawn at (Infinity: always)], in rank order. */
  function Placement(items, base, levels) {
    this.items = items;
    this.base = base;
    this.levels = levels;
    this.level = new Int16Array(items.length).fill(-1);
    this.done = -1;
    this.byLevel = [];
    this.waiting = items.map(function (_, i) { return i; });
  }

  Placement.prototype.scale = function (level) { return this.base * Math.pow(RATIO, level); };

  /* The level of the ladder that zoom scale `s` has reached (-1 below the base). */
  Placement.prototype.levelAt = function (s) {
    if (!(s >= this.base)) return -1;
    return Math.min(this.levels - 1, Math.floor(Math.log(s / this.base) / Math.log(RATIO) + 1e-9));
  };

  Placement.prototype.extend = function (level) {
    level = Math.min(level, this.levels - 1);
    while (this.done < level) this._place(++this.done);
  };

  Placement.prototype._place = function (level) {
    var s = this.scale(level), items = this.items, grid = new Map(), self = this, L, i, k;
    function box(it) {
      var x = it.x * s, y = it.y * s;
      return [x - it.w / 2 - PAD, y - it.h / 2 - PAD / 2, x + it.w / 2 + PAD, y + it.h / 2 + PAD / 2];
    }
    function cells(b, visit) {
      var gx0 = Math.floor(b[0] / CELL), gx1 = Math.floor(b[2] / CELL);
      var gy0 = Math.floor(b[1] / CELL), gy1 = Math.floor(b[3] / CELL);
      for (var gx = gx0; gx <= gx1; gx++) for (var gy = gy0; gy <= gy1; gy++) {
        if (visit(gx * 4194304 + gy) === false) return false;
      }
      return true;
    }
    function put(i) {
      var b = box(items[i]);
      self._boxes[i] = b;
      cells(b, function (key) { var l = grid.get(key); if (l) l.push(i); else grid.set(key, [i]); });
    }
    function free(b) {
      return cells(b, function (key) {
        var l = grid.get(key);
        if (!l) return true;
        for (var j = 0; j < l.length; j++) {
          var o = self._boxes[l[j]];
          if (b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3]) return false;
        }
        return true;
      });
    }
    this._boxes = {};
    for (L = 0; L < level; L++) {
      var placed = this.byLevel[L];
      for (k = 0; k < placed.length; k++) if (items[placed[k]].upto >= level) put(placed[k]);
    }
    var now = [], still = [];
    for (k = 0; k < this.waiting.length; k++) {
      i = this.waiting[k];
      var it = items[i];
      if (it.from > level || it.upto < level) { still.push(i); continue; }
      var b = box(it);
      if (free(b)) { this.level[i] = level; now.push(i); put(i); } else still.push(i);
    }
    this.byLevel[level] = now;
    this.waiting = still;
    this._boxes = null;
  };

  /* The items drawn at zoom scale s, in rank order of their level. */
  Placement.prototype.drawnAt = function (s) {
    var level = this.levelAt(s), out = [];
    if (level < 0) return out;
    this.extend(level);
    for (var L = 0; L <= level; L++) {
      var placed = this.byLevel[L];
      for (var k = 0; k < placed.length; k++) if (this.items[placed[k]].upto >= level) out.push(placed[k]);
    }
    return out;
  };

  kg.labels = {Placement: Placement, RATIO: RATIO};
})(window.kg = window.kg || {});
