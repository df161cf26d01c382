/* kg map page: the start. The same page is graph.html (the payload embedded in #kg-data) and
   kg serve's explorer (#kg-data says {"source": "server"}: the payload comes from /api/map and
   whole abstracts from /api/node). Sets window.kgMap, the page's state and actions, and
   window.kgReady once the first frame is drawn. */
(function (kg) {
  "use strict";
  var core = kg.core;

  function $(id) { return document.getElementById(id); }

  async function getJSON(url) {
    var r = await fetch(url, {headers: {"Accept": "application/json"}});
    var body = await r.text();
    if (!r.ok) throw new Error(body.trim() || (r.status + " " + r.statusText));
    return JSON.parse(body);
  }

  var sources = {
    embedded: function (boot) {
      return {kind: "embedded", map: function () { return Promise.resolve(boot); },
              abstract: function () { return Promise.resolve(""); },
              node: function () { return Promise.resolve(null); }};
    },
    server: function () {
      return {kind: "server", map: function () { return getJSON("/api/map"); },
              abstract: function (id) {
                return getJSON("/api/node?id=" + encodeURIComponent(id)).then(function (d) { return d.abstract || ""; });
              },
              node: function (id) { return getJSON("/api/node?id=" + encodeURIComponent(id)); }};
    }
  };

  function note(text) {
    var box = $("kg-note");
    box.textContent = text || "";
    box.hidden = !text;
  }

  /* Why nothing is drawn, when nothing is. */
  function emptiness(M, sel) {
    if (sel.ranked.length) return null;
    if (!M.nC && !M.nP) return "Nothing to draw: this graph has no papers and no concepts.";
    if (!M.nC) return "Nothing to draw: the " + core.plural(M.nP, "paper") + " of this graph have no concepts. " +
      "Find a paper with the search to read it.";
    if (!M.drawn.length) return "Nothing to draw: no concept of this graph has a place on the map (x, y). " +
      "Rebuild it with kg build to lay it out; the search still finds every concept and paper.";
    return "No concept on the map matches these filters.";
  }

  function App(source, payload) {
    var self = this;
    this.source = source;
    this.M = new core.Model(payload);
    this.panel = new kg.Panel(this);
    this.view = new kg.MapView($("kg-map"), this.M, {
      pick: function (item) { if (item) self.pick(item[0], item[1]); else self.view.select(null); },
      hover: function (item) { self.panel.tip(item, self.view.lastEvent); },
      drawn: function () { if (self.started) self.ready(); }
    });
    this.panel.legend(this.view.colors.legend, this.view);
    this.panel.filters();
    this.panel.search();
    note(emptiness(this.M, this.view.sel));
    $("kg-color").addEventListener("change", function () { self.setColorBy(this.value); });
    $("kg-fit").addEventListener("click", function () { self.view.fit(true); });
    $("kg-png").addEventListener("click", function () { self.savePNG(); });
    document.title = this.M.title;
  }

  App.prototype.ready = function () {
    if (window.kgReady) return;
    window.kgStats = {concepts: this.view.sel.ranked.length, links: this.view.linkList.length, papers: this.view.papers.length};
    window.kgReady = true;
    document.body.setAttribute("data-kg-ready", "true");
    document.body.setAttribute("data-kg-view", "ready");
  };

  App.prototype.setColorBy = function (mode) {
    $("kg-color").value = mode;
    this.panel.legend(this.view.setColors(mode), this.view);
  };

  App.prototype.applyFilters = function (filter) {
    if (filter) this.panel.writeFilters(Object.assign(this.M.noFilter(), filter));
    var sel = this.M.select(this.panel.readFilters());
    this.view.setSelection(sel, {fit: false});
    this.panel.drawn(this.view);
    note(emptiness(this.M, sel));
    document.body.setAttribute("data-kg-filtered", sel.all ? "no" : "yes");
    return this.view.state();
  };

  /* Select a node and show its details (a click on the map). */
  App.prototype.pick = function (kind, i) {
    this.view.select([kind, i]);
    this.panel.details(kind, i);
    document.body.setAttribute("data-kg-focused", this.M.id(kind, i));
  };

  /* Select a node by id, move the map to it, show its details (search, links in the panel). */
  App.prototype.focus = function (id) {
    var found = this.M.index[id];
    if (!found) return false;
    this.pick(found[0], found[1]);
    this.view.focus(found[0], found[1]);
    return true;
  };

  App.prototype.savePNG = function () {
    var url = this.view.png();
    if (!url) return null;
    var a = document.createElement("a");
    a.href = url;
    a.download = (this.M.title || "kg").replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") + "-map.png";
    document.body.appendChild(a);
    a.click();
    a.remove();
    return url.length;
  };

  function start() {
    var boot = JSON.parse($("kg-data").textContent);
    var source = boot.source === "server" ? sources.server() : sources.embedded(boot);
    document.body.setAttribute("data-kg-source", source.kind);
    if (source.kind === "server") $("kg-queries").hidden = false;
    source.map().then(function (payload) {
      var app = new App(source, payload);
      window.kgApp = app;
      window.kgNetwork = app.view.network;
      window.kgMap = {
        state: function () { return app.view.state(); },
        search: function (q, limit) { return app.M.search(q, limit); },
        focus: function (id) { return app.focus(id); },
        setColorBy: function (mode) { app.setColorBy(mode); return app.view.state(); },
        setFilters: function (f) { return app.applyFilters(f); },
        legend: function () { return app.view.colors.legend; },
        colorsOf: function (ids) { return app.view.colorsOf(ids); },
        screenOf: function (id) { var f = app.M.index[id]; return f ? app.view.screenOf(f[0], f[1]) : null; },
        png: function () { return app.view.png(); }
      };
      if (kg.queries && source.kind === "server") kg.queries.start(app);
      app.started = true;
      app.view.network.redraw();
    }).catch(function (e) {
      note("The map could not be loaded: " + e.message);
      document.body.setAttribute("data-kg-view", "failed");
      throw e;
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})(window.kg = window.kg || {});
