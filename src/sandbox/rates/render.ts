/**
 * The rates sandbox's answers in the two dialects (shapes in docs/exchange-rates.md): Norges Bank's
 * SDMX-JSON data message and the ECB data API's csvdata. Pure: the series (series.ts) and the held
 * rates in, the body out (null: "no results", which both sources answer with a 404).
 */
import { bankingDays, ecbValue, norgesBankValue, SERIES } from "./series.js"

export interface RenderQuery {
  /** The key's currency dimension; empty: every currency the sandbox has. */
  readonly currencies: ReadonlyArray<string>
  readonly from: string
  readonly to: string
  /** The sandbox's today (UTC), the middle of its window. */
  readonly today: string
  /** Whether a currency's rate of a day is held back (the "late rate" switch). */
  readonly held: (currency: string, day: string) => boolean
}

const DECIMALS = 4

/** Norges Bank: `{meta, data: {dataSets: [{series}], structure: {dimensions, attributes}}}`, or null. */
export const renderSdmxJson = (q: RenderQuery, prepared: string): unknown => {
  const currencies = (q.currencies.length === 0 ? Object.keys(SERIES) : q.currencies)
    .filter((c) => SERIES[c] !== undefined)
  const days = bankingDays(q.from, q.to, q.today)
  const dayIndex = new Map(days.map((d, i) => [d, i]))
  const unitMults = [...new Set(Object.values(SERIES).map((s) => s.unitMult))].sort()
  const series: Record<string, unknown> = {}
  const baseValues: Array<{ id: string; name: string }> = []
  for (const currency of currencies) {
    const observations: Record<string, Array<string>> = {}
    for (const day of days) {
      if (q.held(currency, day)) continue
      const value = norgesBankValue(currency, day)
      if (value !== null) observations[String(dayIndex.get(day))] = [value.toFixed(DECIMALS)]
    }
    if (Object.keys(observations).length === 0) continue
    const at = baseValues.push({ id: currency, name: currency }) - 1
    series[`0:${at}:0:0`] = {
      // DECIMALS, CALCULATED, UNIT_MULT, COLLECTION: indices into structure.attributes.series[k].values
      attributes: [0, 0, unitMults.indexOf(SERIES[currency]!.unitMult), 0],
      observations
    }
  }
  if (baseValues.length === 0) return null
  const relationship = { dimensions: ["BASE_CUR", "QUOTE_CUR", "TENOR"] }
  return {
    meta: {
      id: `IREF-sandbox-${prepared}`,
      prepared,
      test: true,
      datasetId: "EXR",
      sender: { id: "NB", name: "Norges Bank (sandbox)" }
    },
    data: {
      dataSets: [{
        action: "Information",
        reportingBegin: `${q.from}T00:00:00`,
        reportingEnd: `${q.to}T23:59:59`,
        series
      }],
      structure: {
        name: "Exchange rates",
        dimensions: {
          dataset: [],
          series: [
            { id: "FREQ", name: "Frequency", keyPosition: 0, role: null, values: [{ id: "B", name: "Business" }] },
            { id: "BASE_CUR", name: "Base Currency", keyPosition: 1, role: null, values: baseValues },
            {
              id: "QUOTE_CUR",
              name: "Quote Currency",
              keyPosition: 2,
              role: null,
              values: [{ id: "NOK", name: "Norwegian krone" }]
            },
            { id: "TENOR", name: "Tenor", keyPosition: 3, role: null, values: [{ id: "SP", name: "Spot" }] }
          ],
          observation: [{
            id: "TIME_PERIOD",
            name: "Time Period",
            keyPosition: 4,
            role: "time",
            values: days.map((d) => ({ id: d, name: d, start: `${d}T00:00:00`, end: `${d}T23:59:59` }))
          }]
        },
        attributes: {
          dataset: [],
          series: [
            {
              id: "DECIMALS",
              name: "Decimals",
              relationship,
              role: null,
              values: [{ id: String(DECIMALS), name: String(DECIMALS) }]
            },
            {
              id: "CALCULATED",
              name: "Calculated",
              relationship,
              role: null,
              values: [{ id: "false", name: "false" }]
            },
            {
              id: "UNIT_MULT",
              name: "Unit Multiplier",
              relationship,
              role: null,
              values: unitMults.map((m) => ({
                id: String(m),
                name: m === 0 ? "Units" : m === 2 ? "Hundreds" : `10^${m}`
              }))
            },
            {
              id: "COLLECTION",
              name: "Collection Indicator",
              relationship,
              role: null,
              values: [{ id: "C", name: "ECB concertation time 14:15 CET" }]
            }
          ],
          observation: []
        }
      }
    }
  }
}

const ECB_HEADER = [
  "KEY",
  "FREQ",
  "CURRENCY",
  "CURRENCY_DENOM",
  "EXR_TYPE",
  "EXR_SUFFIX",
  "TIME_PERIOD",
  "OBS_VALUE",
  "OBS_STATUS",
  "OBS_CONF",
  "COLLECTION",
  "DECIMALS",
  "TITLE",
  "TITLE_COMPL",
  "UNIT",
  "UNIT_MULT"
]

const NAMES: Record<string, string> = {
  NOK: "Norwegian krone",
  USD: "US dollar",
  GBP: "UK pound sterling",
  SEK: "Swedish krona",
  DKK: "Danish krone"
}

const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll("\"", "\"\"")}"` : value)

/** The ECB: csvdata rows (series by series, days ascending), or null. */
export const renderEcbCsv = (q: RenderQuery): string | null => {
  const currencies = (q.currencies.length === 0 ? ["NOK", ...Object.keys(SERIES)] : q.currencies)
    .filter((c) => c === "NOK" || (c !== "EUR" && SERIES[c] !== undefined))
  const days = bankingDays(q.from, q.to, q.today)
  const rows: Array<string> = []
  for (const currency of currencies) {
    for (const day of days) {
      // NOK per euro is what every cross rate needs: holding EUR back holds it.
      if (q.held(currency === "NOK" ? "EUR" : currency, day)) continue
      const value = ecbValue(currency, day)
      if (value === null) continue
      const name = NAMES[currency] ?? currency
      rows.push(
        [
          `EXR.D.${currency}.EUR.SP00.A`,
          "D",
          currency,
          "EUR",
          "SP00",
          "A",
          day,
          value.toFixed(DECIMALS),
          "A",
          "F",
          "A",
          String(DECIMALS),
          `${name}/Euro`,
          `ECB reference exchange rate, ${name}/Euro, 2:15 pm (C.E.T.)`,
          currency,
          "0"
        ].map(csvField).join(",")
      )
    }
  }
  if (rows.length === 0) return null
  return [ECB_HEADER.join(","), ...rows].join("\r\n") + "\r\n"
}
