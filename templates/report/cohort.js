// The cohort page's table: sort by clicking a column's header, filter with the text box. The state lives in
// the address's fragment (#q=mask&sort=total&dir=desc), so a sorted, filtered view can be bookmarked or shared.
(function () {
  "use strict";
  var table = document.getElementById("grid");
  var input = document.getElementById("filter");
  var shown = document.getElementById("shown");
  if (!table || !input) { return; }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var headers = Array.prototype.slice.call(table.querySelectorAll("th[data-col]"));
  var state = { q: "", sort: "", dir: "asc" };

  function value(row, col) {
    var cell = row.querySelector('[data-col="' + col + '"]');
    var raw = cell ? cell.getAttribute("data-v") : "";
    var number = parseFloat(raw);
    return raw !== "" && !isNaN(number) && isFinite(raw) ? number : (raw || "").toLowerCase();
  }

  function compare(a, b) {
    var x = value(a, state.sort), y = value(b, state.sort);
    var order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return state.dir === "desc" ? -order : order;
  }

  function save() {
    var parts = [];
    if (state.q) { parts.push("q=" + encodeURIComponent(state.q)); }
    if (state.sort) { parts.push("sort=" + encodeURIComponent(state.sort), "dir=" + state.dir); }
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", parts.length ? "#" + parts.join("&") : window.location.pathname);
    }
  }

  function render() {
    var words = state.q.toLowerCase().split(/\s+/).filter(Boolean);
    var ordered = state.sort ? rows.slice().sort(compare) : rows;
    var count = 0;
    ordered.forEach(function (row) {
      var text = row.getAttribute("data-search") || "";
      var match = words.every(function (w) { return text.indexOf(w) !== -1; });
      row.hidden = !match;
      if (match) { count += 1; }
      body.appendChild(row);
    });
    headers.forEach(function (th) {
      var col = th.getAttribute("data-col");
      th.setAttribute("aria-sort", col === state.sort ? (state.dir === "asc" ? "ascending" : "descending") : "none");
    });
    shown.textContent = count === rows.length ? "all " + rows.length + " shown" : count + " of " + rows.length + " shown";
  }

  function load() {
    window.location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      var at = pair.indexOf("=");
      if (at < 0) { return; }
      var key = pair.slice(0, at), text = decodeURIComponent(pair.slice(at + 1).replace(/\+/g, " "));
      if (key === "q") { state.q = text; }
      if (key === "sort" && headers.some(function (th) { return th.getAttribute("data-col") === text; })) { state.sort = text; }
      if (key === "dir" && (text === "asc" || text === "desc")) { state.dir = text; }
    });
    input.value = state.q;
  }

  headers.forEach(function (th) {
    var button = th.querySelector("button");
    button.addEventListener("click", function () {
      var col = th.getAttribute("data-col");
      state.dir = state.sort === col && state.dir === "asc" ? "desc" : "asc";
      state.sort = col;
      render();
      save();
    });
  });
  input.addEventListener("input", function () {
    state.q = input.value;
    render();
    save();
  });
  load();
  render();
  table.setAttribute("data-ready", "1");
}());
