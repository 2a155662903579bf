// Filters and search over the task rows; nothing is fetched, everything is in the page.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var rows = Array.prototype.slice.call(document.querySelectorAll("details.task"));
  var buttons = Array.prototype.slice.call(document.querySelectorAll("#filters button"));
  var search = document.getElementById("search");
  var shown = document.getElementById("shown");
  var state = { filter: "all", query: "" };

  function apply() {
    var query = state.query.toLowerCase();
    var visible = 0;
    rows.forEach(function (row) {
      var tags = (row.getAttribute("data-tags") || "").split(" ");
      var ok = state.filter === "all" || tags.indexOf(state.filter) >= 0;
      if (ok && query) { ok = row.textContent.toLowerCase().indexOf(query) >= 0; }
      row.hidden = !ok;
      if (ok) { visible += 1; }
    });
    buttons.forEach(function (b) {
      b.classList.toggle("active", b.getAttribute("data-filter") === state.filter);
    });
    shown.textContent = visible + " of " + data.tasks.length + " tasks shown";
  }

  buttons.forEach(function (b) {
    b.addEventListener("click", function () { state.filter = b.getAttribute("data-filter"); apply(); });
  });
  search.addEventListener("input", function () { state.query = search.value; apply(); });
  // #filter=regressed opens the page filtered, #task=ID with that task open (a link from a
  // CI summary can point there).
  var params = {};
  window.location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
    var at = pair.indexOf("=");
    if (at > 0) { params[pair.slice(0, at)] = decodeURIComponent(pair.slice(at + 1)); }
  });
  if (params.filter) { state.filter = params.filter; }
  apply();
  rows.forEach(function (row) {
    if (params.task && row.getAttribute("data-task") === params.task) { row.open = true; }
  });
  document.body.setAttribute("data-ready", "1");
})();
