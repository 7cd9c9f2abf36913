/*
 * Site analytics snippet for POST /api/v1/collect (docs/api/collect.md; privacy: docs/api/privacy.md).
 *
 *   <script src="analytics.js" data-api="https://api.example.com" data-key="pk_widget_..." defer></script>
 *
 * sends a `pageview` when the page loads, and gives the page `window.svcAnalytics` for the tour steps:
 *   svcAnalytics.tourView(tourId)            a tour's page or card was opened
 *   svcAnalytics.availabilityCheck(tourId)   the visitor looked at dates and prices
 *   svcAnalytics.checkoutOpen(tourId)        the checkout was opened
 *   svcAnalytics.checkoutAttempt(tourId, bookingCode)  the visitor tried to pay (code: what the checkout answered)
 * A page that learns its settings later (like catalogue.html) leaves the attributes out and calls
 * `svcAnalytics.init({ api, key })` itself, which sends the pageview.
 *
 * Privacy: no cookie. One first-party marker in localStorage (`svc_seen` = "1", no identifier in it)
 * tells a new visitor from a returning one; sessionStorage keeps that answer for the tab's visit.
 * Events go as `text/plain` with navigator.sendBeacon (or fetch with keepalive), so the browser needs
 * no CORS preflight and the page never waits for them; the answer is always empty.
 */
(function () {
  "use strict"
  var MARKER = "svc_seen"
  var TAB = "svc_new"
  var config = null
  var queue = []

  function isNewVisitor() {
    try {
      var known = window.sessionStorage.getItem(TAB)
      if (known !== null) return known === "1"
      var isNew = window.localStorage.getItem(MARKER) === null
      window.localStorage.setItem(MARKER, "1")
      window.sessionStorage.setItem(TAB, isNew ? "1" : "0")
      return isNew
    } catch (e) {
      // Storage refused (private mode, settings): count the visitor as returning rather than guess.
      return false
    }
  }

  function send(kind, extra) {
    if (config === null) {
      queue.push([kind, extra])
      return
    }
    var body = {
      key: config.key,
      kind: kind,
      url: window.location.href,
      referrer: document.referrer || null,
      new_visitor: isNewVisitor()
    }
    for (var name in extra) if (extra[name] !== undefined && extra[name] !== null) body[name] = extra[name]
    var url = config.api.replace(/\/+$/, "") + "/api/v1/collect"
    var data = JSON.stringify(body)
    try {
      // A string is sent as text/plain;charset=UTF-8: a "simple" request, no preflight.
      if (navigator.sendBeacon && navigator.sendBeacon(url, data)) return
    } catch (e) { /* fall through to fetch */ }
    if (window.fetch) {
      window.fetch(url, {
        method: "POST",
        body: data,
        headers: { "content-type": "text/plain" },
        keepalive: true,
        mode: "no-cors",
        credentials: "omit"
      }).catch(function () {})
    }
  }

  function init(settings) {
    if (config !== null || !settings || !settings.api || !settings.key) return
    config = { api: String(settings.api), key: String(settings.key) }
    send("pageview", {})
    var waiting = queue
    queue = []
    for (var i = 0; i < waiting.length; i++) send(waiting[i][0], waiting[i][1])
  }

  window.svcAnalytics = {
    init: init,
    tourView: function (tourId) { send("tour_view", { tour_id: tourId }) },
    availabilityCheck: function (tourId) { send("availability_check", { tour_id: tourId }) },
    checkoutOpen: function (tourId) { send("checkout_open", { tour_id: tourId }) },
    checkoutAttempt: function (tourId, bookingCode) {
      send("checkout_attempt", { tour_id: tourId, booking_code: bookingCode })
    }
  }

  var script = document.currentScript
  if (script && script.dataset.api && script.dataset.key) init({ api: script.dataset.api, key: script.dataset.key })
})()
