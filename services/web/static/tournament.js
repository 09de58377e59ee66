// The tournament page: while the tournament runs, fetch its live part (progress, standings, tables)
// again every few seconds and put it in place; stop once it has ended. No build step.
(function () {
  "use strict";
  var EVERY_MS = 2000;
  var refreshes = 0;

  function live() { return document.getElementById("live"); }

  function schedule() {
    var section = live();
    if (section && section.dataset.state === "running") { setTimeout(refresh, EVERY_MS); }
  }

  function refresh() {
    var section = live();
    fetch(section.dataset.live, { headers: { accept: "text/html" }, cache: "no-store" })
      .then(function (response) {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        var holder = document.createElement("div");
        holder.innerHTML = html;
        var fresh = holder.querySelector("#live");
        if (fresh) { live().replaceWith(fresh); }
        var cancel = document.getElementById("cancel");  // outside the live part: gone once it ended
        if (cancel && fresh && fresh.dataset.state !== "running") { cancel.remove(); }
        refreshes += 1;
        document.body.dataset.refreshes = String(refreshes);
      })
      .catch(function () { /* a failed fetch: try again next time */ })
      .then(schedule);
  }

  schedule();
})();
