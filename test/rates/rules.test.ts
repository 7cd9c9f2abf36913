/**
 * The pure exchange-rate rules (src/rates/rules.ts): which stored rate a day uses (its own, else the
 * latest earlier one within the lookback, never one past it), NOK as 1, same-currency identity, and
 * conversion in integer minor units rounded half away from zero with each currency's own digits.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  addDays,
  converterTo,
  convertMinor,
  makeRateTable,
  minorDigits,
  roundHalfAwayFromZero
} from "../../src/rates/rules.js"

const DAY_MS = 86_400_000
const dayArb = fc.integer({ min: 18_000, max: 22_000 }).map((n) => new Date(n * DAY_MS).toISOString().slice(0, 10))
const rateArb = fc.double({ min: 0.01, max: 500, noNaN: true, noDefaultInfinity: true })

describe("makeRateTable", () => {
  it("a weekend or a holiday uses the latest earlier banking day", () => {
    const table = makeRateTable([
      { currency: "EUR", day: "2026-04-01", nokPerUnit: 11.4 }, // Wednesday before Easter
      { currency: "EUR", day: "2026-04-07", nokPerUnit: 11.6 } // Tuesday after Easter Monday
    ])
    expect(table.nokPerUnit("EUR", "2026-04-01")).toBe(11.4)
    for (const day of ["2026-04-02", "2026-04-03", "2026-04-04", "2026-04-05", "2026-04-06"]) {
      expect(table.nokPerUnit("EUR", day), day).toBe(11.4)
    }
    expect(table.nokPerUnit("EUR", "2026-04-07")).toBe(11.6)
    expect(table.nokPerUnit("EUR", "2026-03-31"), "before the first rate").toBeNull()
    expect(table.nokPerUnit("eur", "2026-04-07"), "codes are case-insensitive").toBe(11.6)
  })

  it("past the lookback there is no rate, and NOK is always 1", () => {
    const table = makeRateTable([{ currency: "USD", day: "2026-01-02", nokPerUnit: 10.1 }], 7)
    expect(table.nokPerUnit("USD", "2026-01-09")).toBe(10.1)
    expect(table.nokPerUnit("USD", "2026-01-10")).toBeNull()
    expect(table.nokPerUnit("NOK", "1999-01-01")).toBe(1)
    expect(table.nokPerUnit("SEK", "2026-01-02"), "a currency without rows").toBeNull()
    expect(table.nokPerUnit("USD", "not a day")).toBeNull()
  })

  it("property: the rate of a day is that of the latest row at or before it within the lookback, else null", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ day: dayArb, rate: rateArb }), { selector: (r) => r.day, maxLength: 30 }),
        dayArb,
        fc.integer({ min: 0, max: 14 }),
        (rows, day, lookback) => {
          const table = makeRateTable(rows.map((r) => ({ currency: "EUR", day: r.day, nokPerUnit: r.rate })), lookback)
          const earlier = rows.filter((r) => r.day <= day).sort((a, b) => (a.day < b.day ? 1 : -1))[0]
          const gap = earlier === undefined
            ? Infinity
            : (Date.parse(`${day}T00:00:00Z`) - Date.parse(`${earlier.day}T00:00:00Z`)) / DAY_MS
          const expected = earlier !== undefined && gap <= lookback ? earlier.rate : null
          expect(table.nokPerUnit("EUR", day)).toBe(expected)
        }
      )
    )
  })

  it("property: adding a later rate never changes an earlier day's answer (a late rate needs no rebuild)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ day: dayArb, rate: rateArb }), {
          selector: (r) => r.day,
          minLength: 1,
          maxLength: 20
        }),
        fc.integer({ min: 1, max: 10 }),
        rateArb,
        (rows, after, lateRate) => {
          const last = rows.map((r) => r.day).sort().at(-1)!
          const late = addDays(last, after)
          const before = makeRateTable(rows.map((r) => ({ currency: "USD", day: r.day, nokPerUnit: r.rate })))
          const withLate = makeRateTable([
            ...rows.map((r) => ({ currency: "USD", day: r.day, nokPerUnit: r.rate })),
            { currency: "USD", day: late, nokPerUnit: lateRate }
          ])
          for (const r of rows) expect(withLate.nokPerUnit("USD", r.day)).toBe(before.nokPerUnit("USD", r.day))
          expect(withLate.nokPerUnit("USD", late)).toBe(lateRate)
        }
      )
    )
  })
})

describe("convertMinor", () => {
  const table = makeRateTable([
    { currency: "EUR", day: "2026-11-20", nokPerUnit: 11.5 },
    { currency: "SEK", day: "2026-11-20", nokPerUnit: 0.985 },
    { currency: "JPY", day: "2026-11-20", nokPerUnit: 0.0712 }
  ])

  it("converts through NOK with each currency's own minor digits", () => {
    expect(convertMinor(table, 10_000, "EUR", "NOK", "2026-11-20")).toBe(115_000) // €100 = 1150 kr
    expect(convertMinor(table, 115_000, "NOK", "EUR", "2026-11-20")).toBe(10_000)
    expect(convertMinor(table, 10_000, "EUR", "SEK", "2026-11-20")).toBe(116_751) // 1167.5127 kr → 116751 öre
    expect(convertMinor(table, 100, "EUR", "JPY", "2026-11-20")).toBe(162) // €1 = 161.52 ¥, 0 digits
    expect(convertMinor(table, 162, "JPY", "EUR", "2026-11-22"), "Sunday: Friday's rates").toBe(100)
    expect(minorDigits("JPY")).toBe(0)
    expect(minorDigits("NOK")).toBe(2)
    expect(minorDigits("KWD")).toBe(3)
  })

  it("rounds half away from zero", () => {
    const half = makeRateTable([{ currency: "EUR", day: "2026-11-20", nokPerUnit: 10.5 }])
    expect(convertMinor(half, 1, "EUR", "NOK", "2026-11-20")).toBe(11) // 10.5 øre
    expect(convertMinor(half, -1, "EUR", "NOK", "2026-11-20")).toBe(-11)
    expect(convertMinor(half, 3, "EUR", "NOK", "2026-11-20")).toBe(32) // 31.5 øre
    expect(roundHalfAwayFromZero(2.4999999999)).toBe(3) // binary noise below a millionth of a unit
    expect(roundHalfAwayFromZero(-0.4)).toBe(0)
    expect(Object.is(roundHalfAwayFromZero(-0.4), -0)).toBe(false)
  })

  it("a missing rate gives null, never a guess", () => {
    expect(convertMinor(table, 10_000, "USD", "NOK", "2026-11-20")).toBeNull()
    expect(convertMinor(table, 10_000, "EUR", "NOK", "2026-11-10")).toBeNull()
    expect(convertMinor(table, 10_000, "EUR", "NOK", "2026-12-01"), "past the lookback").toBeNull()
    expect(convertMinor(table, 10_000, "EUR", "XX1", "2026-11-20")).toBeNull()
  })

  it("property: the same currency is the identity, whatever the table holds", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1e12, max: 1e12 }),
        fc.constantFrom("NOK", "EUR", "USD", "JPY", "ABC"),
        dayArb,
        (amount, currency, day) => {
          expect(convertMinor(makeRateTable([]), amount, currency, currency, day)).toBe(amount)
        }
      )
    )
  })

  it("property: integers out, sign kept, within half a minor unit of the exact value", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1e9, max: 1e9 }),
        rateArb,
        rateArb,
        (amount, eur, usd) => {
          const t = makeRateTable([
            { currency: "EUR", day: "2026-11-20", nokPerUnit: eur },
            { currency: "USD", day: "2026-11-20", nokPerUnit: usd }
          ])
          const out = convertMinor(t, amount, "EUR", "USD", "2026-11-20")!
          expect(Number.isInteger(out)).toBe(true)
          const exact = (amount * eur) / usd
          expect(Math.abs(out - exact)).toBeLessThanOrEqual(0.5 + Math.abs(exact) * 1e-12 + 1e-6)
          if (amount !== 0 && out !== 0) expect(Math.sign(out)).toBe(Math.sign(amount))
          expect(convertMinor(t, -amount, "EUR", "USD", "2026-11-20")).toBe(out === 0 ? 0 : -out)
        }
      )
    )
  })

  it("property: a round trip through NOK is within a minor unit per rounding", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), rateArb, (amount, rate) => {
        const t = makeRateTable([{ currency: "EUR", day: "2026-11-20", nokPerUnit: rate }])
        const nok = convertMinor(t, amount, "EUR", "NOK", "2026-11-20")!
        const back = convertMinor(t, nok, "NOK", "EUR", "2026-11-20")!
        expect(Math.abs(back - amount)).toBeLessThanOrEqual(0.5 / rate + 0.5 + 1e-6)
      })
    )
  })
})

describe("converterTo", () => {
  it("property: the same figure as convertMinor (and its formula) for every amount, currency and day, a missing rate null", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ currency: fc.constantFrom("EUR", "USD", "JPY"), day: dayArb, nokPerUnit: rateArb }),
          { maxLength: 30 }
        ),
        fc.array(
          fc.tuple(fc.integer({ min: -1e10, max: 1e10 }), fc.constantFrom("NOK", "EUR", "USD", "JPY", "SEK"), dayArb),
          { maxLength: 60 }
        ),
        fc.constantFrom("NOK", "EUR"),
        (rates, amounts, to) => {
          const table = makeRateTable(rates)
          const convert = converterTo(table, to)
          // Twice over: the second pass reads what the first one cached.
          for (const [amount, from, day] of [...amounts, ...amounts]) {
            const expected = convertMinor(table, amount, from, to, day)
            expect(convert(amount, from, day)).toBe(expected)
            const fromRate = table.nokPerUnit(from, day)
            const toRate = table.nokPerUnit(to, day)
            if (from !== to && fromRate !== null && toRate !== null) {
              const [f, t] = [minorDigits(from)!, minorDigits(to)!]
              expect(expected).toBe(roundHalfAwayFromZero((amount * fromRate * 10 ** t) / (toRate * 10 ** f)))
            }
          }
        }
      )
    )
  })

  it("property: the same answer as convertMinor for every amount, currency and day (null included)", () => {
    const table = makeRateTable([
      { currency: "EUR", day: "2026-11-20", nokPerUnit: 11.5 },
      { currency: "EUR", day: "2026-11-23", nokPerUnit: 11.4321 },
      { currency: "SEK", day: "2026-11-20", nokPerUnit: 0.985 },
      { currency: "JPY", day: "2026-11-21", nokPerUnit: 0.0712 }
    ])
    const days = fc.constantFrom("2026-11-19", "2026-11-20", "2026-11-22", "2026-11-23", "2027-02-01", "bad")
    const currencies = fc.constantFrom("EUR", "eur ", "SEK", "JPY", "NOK", "USD", "XXX1")
    fc.assert(fc.property(
      fc.constantFrom("EUR", "NOK", "SEK"),
      fc.array(fc.tuple(fc.integer({ min: -10_000_000, max: 10_000_000 }), currencies, days), { maxLength: 40 }),
      (to, conversions) => {
        const convert = converterTo(table, to)
        for (const [amount, currency, day] of conversions) {
          expect(convert(amount, currency, day)).toBe(convertMinor(table, amount, currency, to, day))
        }
      }
    ))
  })
})
