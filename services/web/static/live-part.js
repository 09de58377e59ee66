// A page's live part (the section #live): while it carries data-live (the address of the part alone),
// fetch the part again every data-every ms (default 2000) and put it in place of the old one; stop
// once a fresh part comes without data-live (a tournament that ended), then remove what is marked
// data-while-live outside it; stop too when the part is no more (404: a ladder deleted). The page itself is whole without this script; what a visitor types
// lives outside the part. Kept as they were: the page's scroll, the scroll of each wide table in the
// part, the focused link or button; a part the visitor is selecting text in waits for the next turn.
// Used by the tournament, leaderboard and agent pages. No build step.
(function () {
  "use strict";
  var EVERY_MS = 2000;
  var fetched = 0, replaced = 0;
  var last = null;  // the text of the part last put in place

  function live() { return document.getElementById("live"); }

  function schedule() {
    var section = live();
    if (section && section.dataset.live) { setTimeout(refresh, Number(section.dataset.every) || EVERY_MS); }
  }

  function selecting(section) {
    var selection = window.getSelection();
    return selection && !selection.isCollapsed && section.contains(selection.anchorNode);
  }

  function keepFocus(old, fresh) {
    var focused = document.activeElement;
    if (!focused || !old.contains(focused)) { return null; }
    if (focused.id) { return fresh.querySelector("#" + CSS.escape(focused.id)); }
    var href = focused.getAttribute("href");
    return href ? fresh.querySelector('a[href="' + CSS.escape(href) + '"]') : null;
  }

  function put(section, fresh) {
    var scrolls = Array.prototype.map.call(section.querySelectorAll(".scroll"), function (el) { return el.scrollLeft; });
    var focus = keepFocus(section, fresh);
    var x = window.scrollX, y = window.scrollY;
    section.replaceWith(fresh);
    fresh.querySelectorAll(".scroll").forEach(function (el, i) { if (scrolls[i]) { el.scrollLeft = scrolls[i]; } });
    if (focus) { focus.focus({ preventScroll: true }); }
    if (window.scrollX !== x || window.scrollY !== y) { window.scrollTo(x, y); }
    if (!fresh.dataset.live) {  // followed to its end
      document.querySelectorAll("[data-while-live]").forEach(function (el) { el.remove(); });
    }
    replaced += 1;
    document.body.dataset.replaced = String(replaced);
  }

  function refresh() {
    var section = live();
    if (document.hidden || selecting(section)) { schedule(); return; }  // a tab not shown asks nothing
    fetch(section.dataset.live, { headers: { accept: "text/html" }, cache: "no-store" })
      .then(function (response) {
        if (response.status === 404) {  // deleted (a ladder): nothing more to follow
          delete live().dataset.live;
          document.body.dataset.followed = "gone";
        }
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.text();
      })
      .then(function (html) {
        fetched += 1;
        document.body.dataset.refreshes = String(fetched);
        if (html === last) { return; }
        var holder = document.createElement("div");
        holder.innerHTML = html;
        var fresh = holder.querySelector("#live");
        var current = live();
        if (!fresh || current !== section || selecting(section)) { return; }
        last = html;
        put(section, fresh);
      })
      .catch(function () { /* a failed fetch: try again next time */ })
      .then(schedule);
  }

  schedule();
})();
