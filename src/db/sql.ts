/** Small helpers for SQL parameters, shared by every repository and service that queries PostgreSQL. */

/** A PostgreSQL array literal for a list of UUIDs (validated upstream, so no quoting needed). */
export const toPgArray = (ids: ReadonlyArray<string>) => `{${ids.join(",")}}`

/** Microseconds since the epoch as an exact ISO timestamp PostgreSQL reads back losslessly. */
export const microsToIso = (micros: string) => {
  const value = BigInt(micros)
  const iso = new Date(Number(value / 1000n)).toISOString()
  return iso.replace("Z", String(value % 1000n).padStart(3, "0") + "Z")
}
