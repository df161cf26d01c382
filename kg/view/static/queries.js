/* kg map page, served by kg serve: the canned queries of /queries, each with an input per
   variable, run on the live endpoint (/api/query: values are bound, never pasted into the
   text), the answer as the table kg query prints (/api/query's view=table: labels first, IRIs
   shortened or hidden behind their labels, bound values and empty or repeated columns said
   once above it, a ranked cut that falls inside a tie said under it), whose cells that stand
   for a node of the graph focus it on the map. The table opens in a pane under the map, as
   wide as it (the panel is too narrow for a row of a dozen columns), and scrolls both ways;
   Close gives the map its room back. */
(function (kg) {
  "use strict";
  var ROWS = 1000;

  function $(id) { return document.getElementById(id); }

  async function getJSON(url, options) {
    var r = await fetch(url, options);
    var body = await r.text();
    if (!r.ok) throw new Error(body.trim() || (r.status + " " + r.statusText));
    return JSON.parse(body);
  }

  function start(app) {
    var el = kg.el, queries = [];

    function nodeOf(iri) {
      var base = app.M.base;
      if (!base || iri.indexOf(base) !== 0) return null;
      var rest = iri.slice(base.length), slash = rest.indexOf("/");
      if (slash < 0) return null;
      var id = rest.slice(0, slash) + ":" + rest.slice(slash + 1);
      return app.M.index[id] ? id : null;
    }

    function show() {
      var q = queries.find(function (x) { return x.name === $("kg-query-name").value; });
      if (!q) return;
      $("kg-query-summary").textContent = q.summary;
      $("kg-query-doc").textContent = q.description;
      var box = $("kg-query-inputs"), example = q.examples[0] || {};
      box.replaceChildren();
      q.variables.forEach(function (v) {
        var label = el("label"), input = el("input");
        label.appendChild(el("span", "?" + v.name));
        input.type = "text";
        input.setAttribute("data-var", v.name);
        input.placeholder = example[v.name] || "";
        input.title = v.description;
        input.setAttribute("aria-label", "?" + v.name + ": " + v.description);
        input.addEventListener("keydown", function (ev) { if (ev.key === "Enter") run(); });
        label.appendChild(input);
        box.appendChild(label);
      });
      $("kg-query-result").replaceChildren();
      $("kg-query-pane").hidden = true;
      $("kg-query-status").textContent = q.variables.length ? "Empty fields stay unbound; values are bound, never pasted." : "";
    }

    function cell(text, iri) {
      var td = el("td"), id = iri ? nodeOf(iri) : null;
      if (id) {
        var b = el("button", text, "kg-link");
        b.type = "button";
        b.setAttribute("data-id", id);
        b.addEventListener("click", function () { app.focus(id); });
        td.appendChild(b);
      } else {
        td.textContent = text;
      }
      if (iri || text) td.title = iri || text;
      return td;
    }

    function notes(lines, className) {
      return lines.map(function (line) { return el("p", line, className); });
    }

    function open(what) {
      $("kg-query-title").textContent = $("kg-query-name").value;
      $("kg-query-count").textContent = what;
      $("kg-query-pane").hidden = false;
    }

    function render(res, ms) {
      var box = $("kg-query-result"), status = $("kg-query-status");
      if (Object.prototype.hasOwnProperty.call(res, "boolean")) {
        box.replaceChildren(el("p", String(res.boolean)));
        status.textContent = "in " + Math.round(ms) + " ms";
        open(status.textContent);
        status.setAttribute("data-state", "done");
        return;
      }
      var view = res.table, rows = view.rows, table = el("table"), head = el("tr");
      var thead = el("thead"), tbody = el("tbody");
      var numeric = view.columns.map(function (_, i) {
        return rows.length > 0 && rows.every(function (r) { return r[i] === "" || /^-?[\d.,]+(e-?\d+)?$/.test(r[i]); });
      });
      table.id = "kg-query-table";
      view.columns.forEach(function (v) { head.appendChild(el("th", v)); });
      thead.appendChild(head);
      table.appendChild(thead);
      rows.slice(0, ROWS).forEach(function (r, i) {
        var tr = el("tr");
        r.forEach(function (text, j) {
          var td = cell(text, view.iris[i][j]);
          if (numeric[j]) td.className = "kg-num";
          tr.appendChild(td);
        });
        tbody.appendChild(tr);
      });
      table.appendChild(tbody);
      var ties = el("div");
      ties.id = "kg-query-ties";
      ties.replaceChildren.apply(ties, notes(res.ties, "kg-tie"));
      var above = el("div");
      above.id = "kg-query-notes";
      above.replaceChildren.apply(above, notes(view.notes, "kg-muted"));
      box.replaceChildren(above, table, ties);
      status.textContent = kg.core.plural(rows.length, "row") + " in " + Math.round(ms) + " ms" +
        (rows.length > ROWS ? " (the first " + ROWS + " shown)" : "");
      status.setAttribute("data-state", "done");
      open(status.textContent);
    }

    async function run() {
      var bindings = {}, status = $("kg-query-status"), t0 = performance.now();
      document.querySelectorAll("#kg-query-inputs input").forEach(function (i) {
        if (i.value.trim() !== "") bindings[i.getAttribute("data-var")] = i.value;
      });
      status.textContent = "running\u2026";
      status.setAttribute("data-state", "running");
      try {
        var res = await getJSON("/api/query", {method: "POST",
          headers: {"Content-Type": "application/json", "Accept": "application/sparql-results+json"},
          body: JSON.stringify({name: $("kg-query-name").value, bindings: bindings, view: "table"})});
        render(res, performance.now() - t0);
      } catch (e) {
        $("kg-query-result").replaceChildren(el("p", e.message, "kg-error"));
        open("failed");
        status.textContent = "failed";
        status.setAttribute("data-state", "error");
      }
    }

    $("kg-query-name").addEventListener("change", show);
    $("kg-query-run").addEventListener("click", run);
    $("kg-query-close").addEventListener("click", function () { $("kg-query-pane").hidden = true; });
    getJSON("/queries").then(function (found) {
      queries = found;
      found.forEach(function (q) {
        var o = el("option", q.name);
        o.value = q.name;
        o.title = q.summary;
        $("kg-query-name").appendChild(o);
      });
      show();
      document.body.setAttribute("data-kg-queries", "loaded");
    }).catch(function (e) {
      $("kg-query-status").textContent = e.message;
      document.body.setAttribute("data-kg-queries", "failed");
    });
  }

  kg.queries = {start: start};
})(window.kg = window.kg || {});
