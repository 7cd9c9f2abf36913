/** A PostgreSQL array literal for a list of UUIDs (validated upstream, so no quoting needed): `${toPgArray(ids)}::uuid[]`. */
export const toPgArray = (ids: ReadonlyArray<string>) => `{${ids.join(",")}}`
