/**
 * The two dialects as the adapter reads them (src/adapters/norgesBank/dialect.ts), on hand-written
 * messages in the shapes docs/exchange-rates.md describes: Norges Bank's SDMX-JSON (series keys
 * pointing into the BASE_CUR values, observation keys into TIME_PERIOD, UNIT_MULT through the
 * series attributes) and the ECB's csvdata (columns by name, quoted fields).
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import fc from "fast-check"
import {
  ecbPath,
  norgesBankPath,
  parseCsv,
  parseEcbCsv,
  parseSdmxJson
} from "../../../src/adapters/norgesBank/dialect.js"

const sdmx = {
  meta: { id: "IREF1", prepared: "2026-11-26T16:00:00", test: false },
  data: {
    dataSets: [{
      action: "Information",
      series: {
        // BASE_CUR index 1 is SEK, index 0 is EUR: the order is the message's, not the request's.
        "0:1:0:0": { attributes: [0, 0, 1, 0], observations: { "0": ["98.1234"], "1": ["98.5"], "2": [null] } },
        "0:0:0:0": { attributes: [0, 0, 0, 0], observations: { "0": ["11.5123"], "2": ["11.6"] } }
      }
    }],
    structure: {
      dimensions: {
        series: [
          { id: "FREQ", values: [{ id: "B" }] },
          { id: "BASE_CUR", values: [{ id: "EUR" }, { id: "SEK" }] },
          { id: "QUOTE_CUR", values: [{ id: "NOK" }] },
          { id: "TENOR", values: [{ id: "SP" }] }
        ],
        observation: [{ id: "TIME_PERIOD", values: [{ id: "2026-11-23" }, { id: "2026-11-24" }, { id: "2026-11-25" }] }]
      },
      attributes: {
        series: [
          { id: "DECIMALS", values: [{ id: "4" }] },
          { id: "CALCULATED", values: [{ id: "false" }] },
          { id: "UNIT_MULT", values: [{ id: "0" }, { id: "2" }] },
          { id: "COLLECTION", values: [{ id: "C" }] }
        ]
      }
    }
  }
}

describe("Norges Bank SDMX-JSON", () => {
  it("reads every series and day, dividing by 10^UNIT_MULT; a null value is no rate", () => {
    const rates = Either.getOrThrow(parseSdmxJson(sdmx, ["EUR", "SEK"]))
    expect(rates.map((r) => [r.currency, r.day, r.nokPerUnit])).toEqual([
      ["SEK", "2026-11-23", 0.981234],
      ["SEK", "2026-11-24", 0.985],
      ["EUR", "2026-11-23", 11.5123],
      ["EUR", "2026-11-25", 11.6]
    ])
    expect(rates.every((r) => r.source === "norges_bank")).toBe(true)
    expect(Either.getOrThrow(parseSdmxJson(sdmx, ["EUR"])).map((r) => r.currency), "only what was asked")
      .toEqual(["EUR", "EUR"])
  })

  it("without a UNIT_MULT attribute the value is per one unit", () => {
    const bare = { data: { ...sdmx.data, structure: { dimensions: sdmx.data.structure.dimensions } } }
    const sek = Either.getOrThrow(parseSdmxJson(bare, ["SEK"]))
    expect(sek[0]!.nokPerUnit).toBe(98.1234)
  })

  it("refuses what does not fit: another shape, a series naming no currency, a day that is not a day", () => {
    expect(Either.isLeft(parseSdmxJson({ dataSets: [] }, ["EUR"]))).toBe(true)
    const badKey = structuredClone(sdmx) as any
    badKey.data.dataSets[0].series = { "0:7:0:0": { observations: { "0": ["1"] } } }
    expect(Either.isLeft(parseSdmxJson(badKey, ["EUR"]))).toBe(true)
    const badDay = structuredClone(sdmx) as any
    badDay.data.structure.dimensions.observation[0].values[0].id = "2026-W48"
    expect(Either.isLeft(parseSdmxJson(badDay, ["EUR"]))).toBe(true)
    const negative = structuredClone(sdmx) as any
    negative.data.dataSets[0].series["0:0:0:0"].observations["0"] = ["-1"]
    expect(Either.isLeft(parseSdmxJson(negative, ["EUR"]))).toBe(true)
  })

  it("asks for the whole range in one key", () => {
    expect(norgesBankPath(["EUR", "USD"], "2025-10-22", "2026-11-26")).toBe(
      "/api/data/EXR/B.EUR+USD.NOK.SP?format=sdmx-json&startPeriod=2025-10-22&endPeriod=2026-11-26&locale=en"
    )
    expect(ecbPath(["EUR", "USD"], "2026-11-20", "2026-11-26")).toBe(
      "/service/data/EXR/D.NOK+USD.EUR.SP00.A?format=csvdata&startPeriod=2026-11-20&endPeriod=2026-11-26"
    )
  })
})

describe("ECB csvdata", () => {
  const csv = [
    "KEY,FREQ,CURRENCY,CURRENCY_DENOM,EXR_TYPE,EXR_SUFFIX,TIME_PERIOD,OBS_VALUE,OBS_STATUS,TITLE_COMPL",
    "EXR.D.NOK.EUR.SP00.A,D,NOK,EUR,SP00,A,2026-11-23,11.5,A,\"ECB reference exchange rate, Norwegian krone/Euro, 2:15 pm (C.E.T.)\"",
    "EXR.D.NOK.EUR.SP00.A,D,NOK,EUR,SP00,A,2026-11-24,11.6,A,\"say \"\"hi\"\"\"",
    "EXR.D.USD.EUR.SP00.A,D,USD,EUR,SP00,A,2026-11-23,1.15,A,x",
    "EXR.D.USD.EUR.SP00.A,D,USD,EUR,SP00,A,2026-11-25,1.16,A,no NOK rate that day",
    ""
  ].join("\r\n")

  it("cross rates through the euro: NOK per euro over units per euro; EUR is NOK per euro", () => {
    const rates = Either.getOrThrow(parseEcbCsv(csv, ["EUR", "USD"]))
    expect(rates.map((r) => [r.currency, r.day, r.nokPerUnit])).toEqual([
      ["EUR", "2026-11-23", 11.5],
      ["USD", "2026-11-23", 10],
      ["EUR", "2026-11-24", 11.6]
    ])
    expect(rates.every((r) => r.source === "ecb")).toBe(true)
    expect(Either.getOrThrow(parseEcbCsv("", ["EUR"]))).toEqual([])
    expect(Either.isLeft(parseEcbCsv("A,B\n1,2\n", ["EUR"]))).toBe(true)
  })

  it("property: CSV fields survive quoting", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.string(), { minLength: 2, maxLength: 5 }), { minLength: 1, maxLength: 5 }),
        (rows) => {
          const quote = (f: string) => (/[",\r\n]/.test(f) ? `"${f.replaceAll("\"", "\"\"")}"` : f)
          const text = rows.map((r) => r.map(quote).join(",")).join("\r\n")
          expect(parseCsv(text)).toEqual(rows)
        }
      )
    )
  })
})
