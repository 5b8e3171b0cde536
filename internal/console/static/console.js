// jetsched console: live updates and confirmations. The pages work
// without this file; it only keeps them current and asks before
// destructive actions. No build step, no dependencies.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // Forms with data-confirm ask first.
  document.addEventListener("submit", function (ev) {
    var msg = ev.target.getAttribute && ev.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) { ev.preventDefault(); }
  });

  var topic = document.body.getAttribute("data-topic");
  if (!topic || !window.EventSource) { return; }
  var badge = document.getElementById("live");
  function status(text, ok) {
    if (!badge) { return; }
    badge.hidden = false;
    badge.textContent = text;
    badge.classList.toggle("down", !ok);
  }

  // On a change, fetch this page again and swap each [data-live] part
  // that the user is not typing in. One fetch at a time; a change that
  // arrives meanwhile fetches once more after it.
  var busy = false, again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { headers: { "Accept": "text/html" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live][id]").forEach(function (el) {
          var fresh = doc.getElementById(el.id);
          if (!fresh || el.contains(document.activeElement)) { return; }
          el.replaceWith(fresh);
        });
        document.body.setAttribute("data-refreshed", String(Date.now()));
        status("live", true);
      })
      .catch(function () { status("reload failed", false); })
      .finally(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }

  var es = new EventSource("/events?topic=" + encodeURIComponent(topic));
  es.addEventListener("open", function () { status("live", true); });
  es.addEventListener("change", refresh);
  es.addEventListener("error", function () { status("reconnecting", false); });
  window.addEventListener("pagehide", function () { es.close(); });
})();
