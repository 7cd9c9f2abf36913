/**
 * The rates sandbox over HTTP, as an outside caller sees it: both dialects at their paths from the
 * fixtures (banking days only, SEK and DKK per 100 with UNIT_MULT 2), SDMX's 404 for a range with no
 * observation, 400 for a key that does not fit EXR, and its admin endpoints: fault switches per
 * source, a rate held back and released, the request log.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { parseEcbCsv, parseSdmxJson } from "../../src/adapters/norgesBank/dialect.js"
import { RatesSandboxLive, RatesSandboxService } from "../../src/sandbox/rates/index.js"
import { isBankingDay, nokPerUnit, SERIES } from "../../src/sandbox/rates/series.js"
import { dayFromToday } from "../adapters/norgesBank/env.js"
import { call } from "../support/http.js"

describe("the sandbox's calendar", () => {
  it("weekdays are banking days except the fixed holidays", () => {
    // 2026: Maundy Thursday 2 April, Good Friday 3 April, Easter Monday 6 April, Ascension 14 May,
    // Whit Monday 25 May, 1 May (Friday), Christmas Eve to Boxing Day (Thursday to Saturday), 31 December.
    for (
      const day of [
        "2026-04-02",
        "2026-04-03",
        "2026-04-06",
        "2026-05-14",
        "2026-05-25",
        "2026-05-01",
        "2026-12-24",
        "2026-12-25",
        "2026-12-31",
        "2027-01-01"
      ]
    ) {
      expect(isBankingDay(day), day).toBe(false)
    }
    for (const day of ["2026-04-01", "2026-04-07", "2026-05-18", "2026-11-26", "2026-12-30"]) {
      expect(isBankingDay(day), day).toBe(true)
    }
    expect(isBankingDay("2026-11-28"), "Saturday").toBe(false)
    expect(nokPerUnit("EUR", "2026-11-28")).toBeNull()
    expect(SERIES.SEK!.unitMult).toBe(2)
  })
})

layer(RatesSandboxLive(), { excludeTestServices: true })("rates sandbox over HTTP", (it) => {
  const from = dayFromToday(-20)
  const to = dayFromToday(-1)
  const base = Effect.map(RatesSandboxService, (s) => s.baseUrl)
  const nbPath = `/api/data/EXR/B.EUR+SEK.NOK.SP?format=sdmx-json&startPeriod=${from}&endPeriod=${to}&locale=en`
  const ecbPath = `/service/data/EXR/D.NOK+SEK.EUR.SP00.A?format=csvdata&startPeriod=${from}&endPeriod=${to}`

  it.effect("serves Norges Bank's SDMX-JSON and the ECB's csvdata from the same fixtures", () =>
    Effect.gen(function*() {
      const baseUrl = yield* base
      yield* call("/sandbox/reset", { method: "POST", baseUrl })
      const nb = yield* call(nbPath, { baseUrl })
      expect(nb.status).toBe(200)
      expect(nb.headers.get("content-type")).toContain("application/vnd.sdmx.data+json")
      const unitMult = nb.body.data.structure.attributes.series.find((a: any) => a.id === "UNIT_MULT")
      const bases = nb.body.data.structure.dimensions.series[1].values.map((v: any) => v.id)
      const sekKey = `0:${bases.indexOf("SEK")}:0:0`
      expect(unitMult.values[nb.body.data.dataSets[0].series[sekKey].attributes[2]].id).toBe("2")
      const fromNb = parseSdmxJson(nb.body, ["EUR", "SEK"])
      const ecb = yield* call(ecbPath, { baseUrl })
      expect(ecb.status).toBe(200)
      expect(ecb.headers.get("content-type")).toContain("text/csv")
      expect(ecb.text.split("\r\n")[0]).toContain("KEY,FREQ,CURRENCY,CURRENCY_DENOM")
      const fromEcb = parseEcbCsv(ecb.text, ["EUR", "SEK"])
      if (fromNb._tag === "Left" || fromEcb._tag === "Left") throw new Error("unreadable")
      expect(fromNb.right.length).toBeGreaterThan(20)
      expect(fromEcb.right.map((r) => `${r.currency} ${r.day}`).sort())
        .toEqual(fromNb.right.map((r) => `${r.currency} ${r.day}`).sort())
      const fixture = yield* call(
        `/sandbox/rates?currency=SEK&day=${fromNb.right.find((r) => r.currency === "SEK")!.day}`,
        {
          baseUrl
        }
      )
      expect(fixture.body.norgesBank.unitMult).toBe(2)
      expect(fixture.body.nokPerUnit).toBe(fromNb.right.find((r) => r.currency === "SEK")!.nokPerUnit)
    }))

  it.effect("no observation is a 404; a key that does not fit EXR is a 400", () =>
    Effect.gen(function*() {
      const baseUrl = yield* base
      const old = "/api/data/EXR/B.EUR.NOK.SP?format=sdmx-json&startPeriod=1990-01-01&endPeriod=1990-12-31"
      expect((yield* call(old, { baseUrl })).status).toBe(404)
      const unknown = `/service/data/EXR/D.XYZ.EUR.SP00.A?format=csvdata&startPeriod=${from}&endPeriod=${to}`
      expect((yield* call(unknown, { baseUrl })).status).toBe(404)
      expect((yield* call("/api/data/EXR/B.EUR.USD.SP?format=sdmx-json", { baseUrl })).status).toBe(400)
      expect((yield* call("/api/data/EXR/B.EUR.NOK.SP?format=csv", { baseUrl })).status).toBe(400)
    }))

  it.effect("admin: faults per source, a held rate, the request log", () =>
    Effect.gen(function*() {
      const baseUrl = yield* base
      yield* call("/sandbox/reset", { method: "POST", baseUrl })
      const set = yield* call("/sandbox/faults", {
        method: "PUT",
        baseUrl,
        body: { errorRate: 1, errorStatus: 503, source: "norges_bank" }
      })
      expect(set.status).toBe(200)
      expect(set.body.sources.norges_bank.errorRate).toBe(1)
      expect((yield* call(nbPath, { baseUrl })).status).toBe(503)
      expect((yield* call(ecbPath, { baseUrl })).status).toBe(200)
      expect((yield* call("/sandbox/faults", { method: "PUT", baseUrl, body: { errorRate: 2 } })).status).toBe(400)
      yield* call("/sandbox/reset", { method: "POST", baseUrl })

      const day = dayFromToday(-3)
      const bankingDay = isBankingDay(day) ? day : dayFromToday(-5)
      const one = `/api/data/EXR/B.EUR.NOK.SP?format=sdmx-json&startPeriod=${bankingDay}&endPeriod=${bankingDay}`
      expect((yield* call(one, { baseUrl })).status).toBe(200)
      const held = yield* call("/sandbox/held", { method: "PUT", baseUrl, body: { day: bankingDay, currency: "EUR" } })
      expect(held.body.held).toEqual([{ day: bankingDay, currency: "EUR" }])
      expect((yield* call(one, { baseUrl })).status).toBe(404)
      const released = yield* call(`/sandbox/held?day=${bankingDay}`, { method: "DELETE", baseUrl })
      expect(released.body.held).toEqual([])
      expect((yield* call(one, { baseUrl })).status).toBe(200)

      const log = yield* call("/sandbox/requests?source=norges_bank", { baseUrl })
      expect(log.body.count).toBe(3)
      const ecbLog = yield* call("/sandbox/requests?source=ecb", { baseUrl })
      expect(ecbLog.body.count).toBe(0)
    }))
})
