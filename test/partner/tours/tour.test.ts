import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { catalogueLocale, departureTimes, LocaleParam, roles } from "../../../src/partner/tours/tour.js"

describe("tour catalogue rules", () => {
  it("reads the language of a locale tag: lower case, region ignored, no as nb, English by default", () => {
    expect(catalogueLocale(undefined)).toBe("en")
    expect(catalogueLocale("nb")).toBe("nb")
    expect(catalogueLocale("NB")).toBe("nb")
    expect(catalogueLocale("nb-NO")).toBe("nb")
    expect(catalogueLocale("pt_BR")).toBe("pt")
    expect(catalogueLocale("no")).toBe("nb")
    expect(catalogueLocale("fil")).toBe("fil")
  })

  it("accepts language tags only", () => {
    const ok = Schema.is(LocaleParam)
    for (const tag of ["nb", "de", "pt-BR", "zh-Hant-TW", "fil", "en_GB"]) expect(ok(tag), tag).toBe(true)
    for (const tag of ["", "n", "1b", "nb-", "nb--NO", "../x", "nb;x", "abcd", "x".repeat(40)]) {
      expect(ok(tag), tag).toBe(false)
    }
  })

  it("lists departure times sorted, each once", () => {
    expect(departureTimes(["16:00", "09:00", "12:30", "09:00"])).toEqual(["09:00", "12:30", "16:00"])
    expect(departureTimes([])).toEqual([])
  })

  it("is_host only when the site's owner both sells and runs the tour", () => {
    expect(roles({ operatorId: "a", hostId: "a", sellerId: "a" })).toEqual({ is_seller: true, is_host: true })
    expect(roles({ operatorId: "a", hostId: "b", sellerId: "a" })).toEqual({ is_seller: true, is_host: false })
    expect(roles({ operatorId: "a", hostId: "b", sellerId: "b" })).toEqual({ is_seller: false, is_host: false })
    expect(roles({ operatorId: "a", hostId: "a", sellerId: "b" })).toEqual({ is_seller: false, is_host: false })
  })
})
