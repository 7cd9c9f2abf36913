/** Small helpers for SQL parameters, shared by every repository and service that queries PostgreSQL. */

/** A PostgreSQL array literal for a list of UUIDs (validated upstream, so no quoting needed). */
export const toPgArray = (ids: ReadonlyArray<string>) => `{${ids.join(",")}}`
