/**
 * The visitor's country, never stored with the address it came from (docs/api/privacy.md): the
 * header a trusted proxy sets (ANALYTICS_COUNTRY_HEADER, e.g. `CF-IPCountry`), else an offline
 * MaxMind country database (ANALYTICS_GEOIP_DATABASE, read with `maxmind`), else null. A database
 * path that cannot be opened stops the start with an error naming it.
 */
import { Effect, Option } from "effect"
import maxmind, { type CountryResponse, type Reader } from "maxmind"
import { AnalyticsCollectConfig } from "./config.js"
import { countryFromHeader } from "./events.js"

export class GeoipDatabaseError extends Error {}

export class Countries extends Effect.Service<Countries>()("Analytics/Countries", {
  effect: Effect.gen(function*() {
    const config = yield* AnalyticsCollectConfig
    const path = Option.getOrUndefined(config.geoipDatabase)
    const reader: Reader<CountryResponse> | undefined = path === undefined ? undefined : yield* Effect.tryPromise({
      try: () => maxmind.open<CountryResponse>(path),
      catch: (e) => new GeoipDatabaseError(`ANALYTICS_GEOIP_DATABASE: cannot open ${path}: ${String(e)}`)
    }).pipe(Effect.orDie)
    const header = Option.getOrUndefined(config.countryHeader)

    /** The country (ISO 3166-1 alpha-2) of a request, from its headers or its address; null when unknown. */
    const of = (headers: Readonly<Record<string, string | undefined>>, ip: string): string | null => {
      if (header !== undefined) return countryFromHeader(headers[header])
      if (reader === undefined || !maxmind.validate(ip)) return null
      try {
        return countryFromHeader(reader.get(ip)?.country?.iso_code)
      } catch {
        return null
      }
    }

    return { of } as const
  })
}) {}
