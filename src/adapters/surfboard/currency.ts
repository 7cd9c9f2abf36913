/**
 * Surfboard writes currencies as the numeric ISO 4217 code in a string (`"578"` NOK, `"978"` EUR);
 * the port speaks the alpha code. Amounts need no conversion: Surfboard counts in the currency's
 * smallest unit, as the port does.
 */

/** ISO 4217 alpha → numeric, for the currencies a Nordic/European tour operator meets. */
const NUMERIC: Readonly<Record<string, string>> = {
  NOK: "578",
  SEK: "752",
  DKK: "208",
  ISK: "352",
  EUR: "978",
  GBP: "826",
  USD: "840",
  CHF: "756",
  PLN: "985",
  CZK: "203",
  HUF: "348",
  RON: "946",
  BGN: "975",
  CAD: "124",
  AUD: "036",
  NZD: "554",
  JPY: "392",
  CNY: "156",
  HKD: "344",
  SGD: "702",
  KRW: "410",
  INR: "356",
  AED: "784",
  SAR: "682",
  ILS: "376",
  TRY: "949",
  ZAR: "710",
  BRL: "986",
  MXN: "484",
  THB: "764"
}

const ALPHA: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(NUMERIC).map(([a, n]) => [n, a]))

/** `"NOK"` → `"578"`; undefined for a currency not in the table. */
export const numericCurrency = (alpha: string): string | undefined => NUMERIC[alpha.toUpperCase()]

/** `"578"` → `"NOK"` (also accepts `578` and an alpha code, which some answers carry); undefined when unknown. */
export const alphaCurrency = (code: string | number): string | undefined => {
  const text = String(code).trim()
  if (/^\d{1,3}$/.test(text)) return ALPHA[text.padStart(3, "0")]
  const upper = text.toUpperCase()
  return NUMERIC[upper] !== undefined ? upper : undefined
}
