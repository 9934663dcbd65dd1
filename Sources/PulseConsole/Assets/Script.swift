/// The console's one script, served at a hashed immutable URL (`ConsoleAssets`). The pages work without it
/// (plain forms and links); it adds the presenter link's sign-in, the clicker's keys (→, Space, PageDown)
/// and posts without a reload, live updates over Server-Sent Events, and confirmations. It only ever sets
/// `textContent`, never markup.
enum Script {
    static let text = #"""
"use strict";
(function () {
  var body = document.body;

  // The presenter link: /console/present#<token>. The token leaves the address bar at once, and is posted
  // once (a form POST, so it never lands in a URL or a log) to exchange it for the session cookie.
  if (body.getAttribute("data-page") === "present") {
    // Out of the address bar and history first, whatever the fragment holds: a malformed % escape that
    // makes decoding throw must not leave the token behind.
    var raw = location.hash.slice(1);
    history.replaceState(null, "", location.pathname);
    var token = "";
    try { token = decodeURIComponent(raw); } catch (error) { token = ""; }
    raw = "";
    var status = document.getElementById("present-status");
    if (!token) {
      if (status) status.textContent = "This presenter link has no token, or it is damaged. Ask the organisers for a new one.";
      return;
    }
    var form = document.getElementById("present-form");
    form.elements.namedItem("token").value = token;
    token = "";
    form.submit();
    return;
  }

  // Forms that ask first: data-confirm holds the question. A form with a "confirmed" field is told the answer
  // (without the script the server asks on a page of its own instead).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute("data-confirm");
    if (!question) return;
    if (!window.confirm(question)) { event.preventDefault(); return; }
    var confirmed = form.elements && form.elements.namedItem("confirmed");
    if (confirmed) confirmed.value = "yes";
  }, true);

  var live = document.getElementById("live-status");
  function say(text) { if (live) live.textContent = text; }

  // The clicker: "Next slide" posts without a reload; →, Space and PageDown press it. There is no way back.
  // Each press asks for the slide after the last one asked for; the server's max() makes a later ask cover the
  // earlier ones, so one post at a time is enough: presses made while a post is on its way go out with the next
  // one (a presenter remote repeating PageDown sends one post per round trip, not one per press). Too fast for
  // the server all the same (429): the page says so and keeps the presses; nothing is sent until the server's
  // Retry-After has passed, then one post asks for the last slide pressed. No retry loop: after a 429, one post
  // per wait at most; the button and keys stay live.
  var next = document.getElementById("next-form");
  if (next) {
    var field = next.elements.namedItem("slide");
    var button = next.querySelector("button");
    var csrf = next.elements.namedItem("csrf").value;
    var target = parseInt(field.value, 10);
    var busy = 0;        // posts on their way
    var sentAt = 0;      // when the last one went out
    var pending = -1;    // the last slide pressed and not sent yet; -1: none
    var heldUntil = 0;   // Date.now() before which nothing is sent (the server's Retry-After)
    var timer = 0;
    var slowed = false;  // the page said "too fast": say when it caught up
    // A press that did not go through does not count: the next press asks for its slide again.
    var notSent = function (slide) { if (pending < 0 && slide < target) { target = slide; field.value = String(target); } };
    var flush = function () {
      if (pending < 0 || Date.now() < heldUntil) return;
      if (busy > 0 && Date.now() - sentAt < 5000) return;  // one at a time (unless that one seems stuck)
      var slide = pending;
      pending = -1;
      post(slide);
    };
    var post = function (slide) {
      busy += 1;
      sentAt = Date.now();
      var data = new URLSearchParams();
      data.set("csrf", csrf);
      data.set("slide", String(slide));
      fetch(next.action, {
        method: "POST", body: data, credentials: "same-origin", referrerPolicy: "same-origin",
        headers: { "X-CSRF-Token": csrf, "Accept": "text/plain" }
      }).then(function (response) {
        return response.text().then(function (text) {
          if (response.status === 429) { wait(slide, response.headers.get("Retry-After")); return; }
          if (!response.ok) { notSent(slide); say(text || "The slide did not move."); return; }
          if (slowed && pending < 0 && Date.now() >= heldUntil) { slowed = false; say("Caught up: every press was sent."); }
        });
      }, function () { notSent(slide); say("The console cannot reach the server. Check the network and press again."); })
        .then(function () { busy -= 1; flush(); });
    };
    var wait = function (slide, retryAfter) {
      var seconds = Math.min(Math.max(parseInt(retryAfter, 10) || 1, 1), 60);
      pending = Math.max(pending, slide);
      heldUntil = Math.max(heldUntil, Date.now() + seconds * 1000);
      slowed = true;
      say("Going too fast: the server takes only so many slide changes a second. Your presses are kept: slide " + (pending + 1) +
        " goes out in " + (seconds === 1 ? "a second" : seconds + " seconds") + ".");
      if (!timer) timer = setTimeout(release, Math.max(0, heldUntil - Date.now()));
    };
    var release = function () {
      timer = 0;
      if (Date.now() < heldUntil) { timer = setTimeout(release, heldUntil - Date.now()); return; }
      flush();
    };
    var advance = function () {
      if (button.disabled) return;
      var slide = target;
      target = slide + 1;
      field.value = String(target);
      pending = Math.max(pending, slide);
      if (Date.now() < heldUntil) { say("Going too fast: press kept. Slide " + (pending + 1) + " goes out in a moment."); return; }
      flush();
    };
    next.addEventListener("submit", function (event) { event.preventDefault(); advance(); });
    document.addEventListener("keydown", function (event) {
      if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      var tag = event.target && event.target.tagName;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
      if (event.key === "ArrowRight" || event.key === "PageDown" || event.key === " " || event.key === "Spacebar") {
        if (event.key === " " && tag === "BUTTON") return;  // Space on a focused button presses that button
        event.preventDefault();
        advance();
      }
    });
    window.pulseClickerTarget = function (frontierNext) { if (busy === 0 || frontierNext > target) { target = Math.max(target, frontierNext); field.value = String(target); } };
  }

  // Live updates: data-events names the console's own stream; each event sets the text of elements by id.
  var source = body.getAttribute("data-events");
  if (source && window.EventSource) {
    var stream = new EventSource(source);
    stream.addEventListener("clicker", function (event) {
      var data;
      try { data = JSON.parse(event.data); } catch (error) { return; }
      var texts = data.text || {};
      Object.keys(texts).forEach(function (id) {
        var element = document.getElementById(id);
        if (element && element.textContent !== texts[id]) element.textContent = String(texts[id]);
      });
      if (typeof data.next === "number" && window.pulseClickerTarget) window.pulseClickerTarget(data.next);
      if (typeof data.canAdvance === "boolean" && next) next.querySelector("button").disabled = !data.canAdvance;
    });
    // The server ended this page's stream: closed here, so the browser does not reconnect. "tooManyStreams": newer
    // console pages of this sign-in (or staff token) took its place; anything else: signed out.
    stream.addEventListener("ended", function (event) {
      stream.close();
      var reason = "";
      try { reason = String((JSON.parse(event.data) || {}).reason || ""); } catch (error) { reason = ""; }
      say(reason === "tooManyStreams"
        ? "Live updates stopped on this page: too many console pages are open with your staff token, and newer ones took its place. Close some, then reload this page."
        : "Signed out: reload the page to sign in again.");
    });
  }

  // The live view: "devices" events carry only the rows that changed, as text.
  var liveRows = document.getElementById("live-rows");
  if (liveRows && typeof stream !== "undefined" && stream) {
    stream.addEventListener("devices", function (event) {
      var data;
      try { data = JSON.parse(event.data); } catch (error) { return; }
      var joined = 0;
      (data.rows || []).forEach(function (row) {
        if (typeof row.id !== "string" || !Array.isArray(row.cells)) return;
        var tr = document.getElementById("device-" + row.id);
        if (!tr && liveRows.children.length >= (parseInt(liveRows.getAttribute("data-max-rows"), 10) || 200)) return;
        if (!tr) {
          tr = document.createElement("tr");
          tr.id = "device-" + row.id;
          var headers = liveRows.parentNode.querySelectorAll("thead th");
          for (var i = 0; i < 7; i++) {
            var cell = document.createElement(i === 0 ? "th" : "td");
            if (i === 0) cell.setAttribute("scope", "row");
            if (headers[i] && headers[i].className) cell.className = headers[i].className;
            if (i < 3) cell.appendChild(document.createElement("bdi"));
            tr.appendChild(cell);
          }
          liveRows.appendChild(tr);
          joined += 1;
        }
        row.cells.forEach(function (text, index) {
          var cell = tr.children[index];
          if (!cell) return;
          var target = cell.firstElementChild || cell;
          if (target.textContent !== String(text)) target.textContent = String(text);
        });
      });
      if (typeof data.streams === "number") {
        var streams = document.getElementById("live-streams");
        if (streams && streams.textContent !== String(data.streams)) streams.textContent = String(data.streams);
      }
      var note = document.getElementById("live-announce");
      if (note && joined > 0) note.textContent = joined === 1 ? "1 more device in the room." : joined + " more devices in the room.";
    });
  }
})();
"""#
}
