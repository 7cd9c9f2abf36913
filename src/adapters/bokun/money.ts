/**
 * Bókun sends amounts as decimal numbers in major units (`149.5` EUR). The port speaks integer
 * minor units, with as many decimals as ISO 4217 gives the currency (ISK and JPY none, KWD three).
 */

/** ISO 4217 currencies whose minor unit is not 2. */
const EXPONENTS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4
}

export const currencyExponent = (currency: string): number => EXPONENTS[currency.toUpperCase()] ?? 2

/** Decimal major units to integer minor units (rounded half away from zero at the currency's precision). */
export const toMinor = (amount: number, currency: string): number => {
  const scaled = amount * 10 ** currencyExponent(currency)
  // Math.round rounds -0.5 towards +inf; money is symmetric.
  return Math.sign(scaled) * Math.round(Math.abs(scaled) + 1e-9)
}

/** Integer minor units to the decimal number Bókun writes. */
export const fromMinor = (minor: number, currency: string): number => minor / 10 ** currencyExponent(currency)
