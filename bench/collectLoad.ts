/**
 * The collection load of `npm run bench:analytics` in a process of its own (bench/analytics.ts
 * starts it), so that the generator's work does not run on the runner's event loop beside the
 * rollup loop: POST /api/v1/collect at a fixed rate, open loop (bench/openLoop.ts: request i is due
 * at start + i / rate, latency from that time), bodies as the snippet sends them (`text/plain` JSON,
 * the site's Origin, a Safari user agent, pageviews and tour views with UTM parameters and
 * referrers, the keys in turn, a different client address per event in X-Forwarded-For).
 * Options: one JSON argument (CollectLoadOptions); the result (OpenLoopResult) is the last line of stdout.
 */
import { openLoop } from "./openLoop.js"

export interface CollectLoadOptions {
  readonly base: string
  readonly rate: number
  readonly seconds: number
  readonly connections: number
  readonly keys: ReadonlyArray<string>
  readonly domain: string
}

const UA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 " +
  "Safari/605.1.15"

const o = JSON.parse(process.argv[2] ?? "{}") as CollectLoadOptions

const result = await openLoop({
  base: o.base,
  paths: ["/api/v1/collect"],
  headers: {},
  rate: o.rate,
  seconds: o.seconds,
  connections: o.connections,
  timeoutMs: 10_000,
  request: (i) => ({
    method: "POST",
    path: "/api/v1/collect",
    headers: {
      "content-type": "text/plain;charset=UTF-8",
      origin: `https://${o.domain}`,
      "user-agent": UA,
      "x-forwarded-for": `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
    },
    body: JSON.stringify({
      key: o.keys[i % o.keys.length],
      kind: i % 4 === 0 ? "tour_view" : "pageview",
      url: `https://${o.domain}/tours/page-${i % 60}?utm_source=news&utm_medium=email`,
      referrer: i % 3 === 0 ? "https://www.google.com/" : null,
      new_visitor: i % 2 === 0
    })
  })
})
console.log(JSON.stringify(result))
