/**
 * How node-postgres turns column values into JS: int8 and numeric come back as numbers (money is
 * far below 2^53), `date` as its YYYY-MM-DD text (never a Date at local midnight), timestamps as
 * Date. Shared by the service's pool and the benchmark's floor.
 */
import pg from "pg"

const INT8 = 20
const NUMERIC = 1700
const DATE = 1082

export const pgTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value)
    if (oid === DATE) return (value: string) => value
    return pg.types.getTypeParser(oid, format as "text")
  }) as pg.CustomTypesConfig["getTypeParser"]
}
