/**
 * The two dialects the exchange-rate adapter reads (docs/exchange-rates.md has the shapes):
 *
 * - Norges Bank's SDMX-JSON data message (`/api/data/EXR/B.EUR+USD.NOK.SP?format=sdmx-json`):
 *   `data.structure.dimensions.series` names each position of a series key ("0:1:0:0") with the
 *   values of FREQ, BASE_CUR, QUOTE_CUR, TENOR; `data.structure.dimensions.observation[TIME_PERIOD]`
 *   lists the days an observation key ("17") points into; a series' `attributes` point into
 *   `data.structure.attributes.series[k].values` (UNIT_MULT among them: 0 for NOK per unit, 2 for
 *   NOK per 100 units). An observation is `[value, …]` with the value as a string.
 * - The ECB data API's `csvdata` (`/service/data/EXR/D.NOK+USD.EUR.SP00.A?format=csvdata`): a header
 *   row then one row per observation; the adapter reads CURRENCY, CURRENCY_DENOM (EUR), TIME_PERIOD
 *   and OBS_VALUE (units of CURRENCY for one euro) by name and ignores the other columns.
 *
 * Pure: the paths and query strings the adapter sends, and the parsers (unit-tested with the sandbox's
 * rendering and by hand-written samples).
 */
import { Either, ParseResult, Schema } from "effect"
import type { DailyRate, RatesQuery } from "../../ports/ExchangeRates.js"

/** The currencies of a query that need a rate (upper case, NOK left out, each once, sorted). */
export const wantedCurrencies = (query: RatesQuery): ReadonlyArray<string> =>
  [...new Set(query.currencies.map((c) => c.trim().toUpperCase()))].filter((c) => c !== "NOK" && c !== "").sort()

/** Norges Bank: the path and query of one request for the whole range. */
export const norgesBankPath = (currencies: ReadonlyArray<string>, from: string, to: string) =>
  `/api/data/EXR/B.${currencies.join("+")}.NOK.SP?format=sdmx-json&startPeriod=${from}&endPeriod=${to}&locale=en`

/** ECB: NOK per euro is always asked for (it is the bridge), EUR never (it is the denominator). */
export const ecbPath = (currencies: ReadonlyArray<string>, from: string, to: string) => {
  const asked = ["NOK", ...currencies.filter((c) => c !== "EUR")]
  return `/service/data/EXR/D.${asked.join("+")}.EUR.SP00.A?format=csvdata&startPeriod=${from}&endPeriod=${to}`
}

/** A rate from a division, without binary noise: 10 decimals is far below any published precision. */
export const cleanRate = (value: number) => Number(value.toFixed(10))

const Code = Schema.Struct({ id: Schema.String })
const Component = Schema.Struct({ id: Schema.String, values: Schema.Array(Code) })

export const SdmxJsonMessage = Schema.Struct({
  data: Schema.Struct({
    dataSets: Schema.Array(Schema.Struct({
      series: Schema.optional(Schema.Record({
        key: Schema.String,
        value: Schema.Struct({
          attributes: Schema.optional(Schema.Array(Schema.NullOr(Schema.Number))),
          observations: Schema.optional(Schema.Record({
            key: Schema.String,
            value: Schema.Array(Schema.Unknown)
          }))
        })
      }))
    })),
    structure: Schema.Struct({
      dimensions: Schema.Struct({
        series: Schema.Array(Component),
        observation: Schema.Array(Component)
      }),
      attributes: Schema.optional(Schema.Struct({
        series: Schema.optional(Schema.Array(Component))
      }))
    })
  })
})

const number = (raw: unknown): number | null => {
  if (typeof raw === "number") return Number.isFinite(raw) ? raw : null
  if (typeof raw === "string" && raw.trim() !== "") {
    const n = Number(raw)
    return Number.isFinite(n) ? n : null
  }
  return null
}

const isDay = (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s)

/**
 * Norges Bank's SDMX-JSON as NOK per one unit: the value divided by 10^UNIT_MULT (0 when the
 * attribute is absent). Left: what does not fit the shape (the adapter's bad response).
 */
export const parseSdmxJson = (
  json: unknown,
  wanted: ReadonlyArray<string>
): Either.Either<Array<DailyRate>, string> => {
  const decoded = Schema.decodeUnknownEither(SdmxJsonMessage)(json)
  if (Either.isLeft(decoded)) return Either.left(ParseResult.TreeFormatter.formatErrorSync(decoded.left))
  const { dataSets, structure } = decoded.right.data
  const baseAt = structure.dimensions.series.findIndex((d) => d.id === "BASE_CUR")
  const time = structure.dimensions.observation.find((d) => d.id === "TIME_PERIOD") ??
    structure.dimensions.observation[0]
  if (baseAt < 0 || time === undefined) return Either.left("no BASE_CUR series dimension or TIME_PERIOD")
  const attributes = structure.attributes?.series ?? []
  const unitMultAt = attributes.findIndex((a) => a.id === "UNIT_MULT")
  const want = new Set(wanted)
  const rates: Array<DailyRate> = []
  for (const dataSet of dataSets) {
    for (const [key, series] of Object.entries(dataSet.series ?? {})) {
      const position = Number(key.split(":")[baseAt])
      const currency = structure.dimensions.series[baseAt]!.values[position]?.id
      if (currency === undefined) return Either.left(`series ${key} names no BASE_CUR value`)
      if (!want.has(currency)) continue
      let unitMult = 0
      if (unitMultAt >= 0) {
        const index = series.attributes?.[unitMultAt]
        if (index !== null && index !== undefined) {
          const code = attributes[unitMultAt]!.values[index]?.id
          const parsed = code === undefined ? null : number(code)
          if (parsed === null || !Number.isInteger(parsed)) return Either.left(`series ${key}: bad UNIT_MULT`)
          unitMult = parsed
        }
      }
      for (const [at, observation] of Object.entries(series.observations ?? {})) {
        const day = time.values[Number(at)]?.id
        if (day === undefined || !isDay(day)) return Either.left(`observation ${at} of ${key} has no day`)
        const value = number(observation[0])
        if (value === null) continue // not published (a missing value is not a rate)
        if (value <= 0) return Either.left(`${currency} ${day}: rate ${value}`)
        rates.push({ currency, day, nokPerUnit: cleanRate(value / 10 ** unitMult), source: "norges_bank" })
      }
    }
  }
  return Either.right(rates)
}

/** RFC 4180 CSV: quoted fields (commas, doubled quotes, line breaks inside), CRLF or LF. */
export const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === "\"") {
        if (text[i + 1] === "\"") {
          field += "\""
          i++
        } else quoted = false
      } else field += c
    } else if (c === "\"") quoted = true
    else if (c === ",") {
      row.push(field)
      field = ""
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++
      row.push(field)
      field = ""
      if (row.length > 1 || row[0] !== "") rows.push(row)
      row = []
    } else field += c
  }
  if (field !== "" || row.length > 0) {
    row.push(field)
    if (row.length > 1 || row[0] !== "") rows.push(row)
  }
  return rows
}

/**
 * The ECB's csvdata as NOK per one unit: NOK per euro divided by the currency's units per euro of
 * the same day (EUR itself: NOK per euro). A day without the NOK rate gives no rate at all.
 */
export const parseEcbCsv = (text: string, wanted: ReadonlyArray<string>): Either.Either<Array<DailyRate>, string> => {
  const rows = parseCsv(text)
  if (rows.length === 0) return Either.right([])
  const header = rows[0]!.map((h) => h.trim().toUpperCase())
  const col = (name: string) => header.indexOf(name)
  const [currencyAt, denomAt, dayAt, valueAt] = [
    col("CURRENCY"),
    col("CURRENCY_DENOM"),
    col("TIME_PERIOD"),
    col("OBS_VALUE")
  ]
  if (currencyAt < 0 || dayAt < 0 || valueAt < 0) return Either.left("no CURRENCY, TIME_PERIOD or OBS_VALUE column")
  const perEur = new Map<string, Map<string, number>>() // day → currency → units per euro
  for (const row of rows.slice(1)) {
    if (denomAt >= 0 && (row[denomAt] ?? "EUR") !== "EUR") continue
    const day = row[dayAt] ?? ""
    if (!isDay(day)) return Either.left(`row with TIME_PERIOD ${JSON.stringify(day)}`)
    const value = number(row[valueAt])
    if (value === null) continue // not published
    if (value <= 0) return Either.left(`${row[currencyAt]} ${day}: rate ${value}`)
    const ofDay = perEur.get(day) ?? new Map<string, number>()
    ofDay.set(row[currencyAt] ?? "", value)
    perEur.set(day, ofDay)
  }
  const rates: Array<DailyRate> = []
  for (const [day, ofDay] of [...perEur].sort(([a], [b]) => a.localeCompare(b))) {
    const nokPerEur = ofDay.get("NOK")
    if (nokPerEur === undefined) continue
    for (const currency of wanted) {
      const units = currency === "EUR" ? 1 : ofDay.get(currency)
      if (units === undefined) continue
      rates.push({ currency, day, nokPerUnit: cleanRate(nokPerEur / units), source: "ecb" })
    }
  }
  return Either.right(rates)
}
