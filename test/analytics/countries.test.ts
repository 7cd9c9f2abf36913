/**
 * Where an event's country and address come from (src/analytics/Countries.ts, events.ts): a trusted
 * proxy's country header only when configured (and only real ISO codes), no database configured is
 * no country, and a database path that cannot be opened stops the start with the setting's name.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Exit, Layer } from "effect"
import { Countries } from "../../src/analytics/Countries.js"
import { clientIp, countryFromHeader } from "../../src/analytics/events.js"

const withSettings = (settings: Record<string, string>) =>
  Countries.Default.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings)))))
  )

describe("countries", () => {
  it("reads only two-letter codes from the header, never the proxies' unknown codes", () => {
    expect(countryFromHeader("no")).toBe("NO")
    expect(countryFromHeader(" PT ")).toBe("PT")
    for (const v of [undefined, "", "XX", "T1", "zz", "NOR", "N0", "1"]) expect(countryFromHeader(v)).toBeNull()
  })

  it("takes the address from the connection, or the last entry of the trusted proxy's header", () => {
    expect(clientIp("10.0.0.2", undefined)).toBe("10.0.0.2")
    expect(clientIp("10.0.0.2", "198.51.100.1, 203.0.113.9")).toBe("203.0.113.9")
    expect(clientIp("10.0.0.2", " , ")).toBe("10.0.0.2")
  })

  it.effect("the header is read only when ANALYTICS_COUNTRY_HEADER names it; without a database: null", () =>
    Effect.gen(function*() {
      const unset = yield* Countries.pipe(Effect.provide(withSettings({})))
      expect(unset.of({ "cf-ipcountry": "NO" }, "203.0.113.9")).toBeNull()
      const trusted = yield* Countries.pipe(Effect.provide(withSettings({ ANALYTICS_COUNTRY_HEADER: "CF-IPCountry" })))
      expect(trusted.of({ "cf-ipcountry": "NO" }, "203.0.113.9")).toBe("NO")
      expect(trusted.of({}, "203.0.113.9")).toBeNull()
    }))

  it.effect("a country database that cannot be opened stops the start, naming the setting", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Countries.pipe(Effect.provide(withSettings({ ANALYTICS_GEOIP_DATABASE: "/nonexistent/GeoLite2-Country.mmdb" })))
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(Cause.pretty(exit.cause)).toContain("ANALYTICS_GEOIP_DATABASE")
    }))
})
