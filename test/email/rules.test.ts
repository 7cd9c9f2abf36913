/**
 * The pure parts of email: addresses, MAIL_FROM, Message-IDs, the retry policy, SMTP_URL and how
 * SMTP failures map onto transient and permanent errors.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Redacted } from "effect"
import fc from "fast-check"
import { classifySmtpError } from "../../src/adapters/smtp/mailer.js"
import { parseSmtpUrl } from "../../src/adapters/smtp/url.js"
import {
  emailLocale,
  formatMailbox,
  isEmailAddress,
  messageIdFor,
  outboxKeys,
  parseMailbox,
  retryDelayMillis,
  teamLocale
} from "../../src/email/rules.js"

describe("addresses", () => {
  it("accepts plain addresses and refuses what would need quoting or could inject headers", () => {
    for (const ok of ["kari@example.com", "kari.nordmann+tag@sub.example.no", "x@localhost", "Æsir@eksempel.no"]) {
      expect(isEmailAddress(ok), ok).toBe(true)
    }
    for (
      const bad of [
        "",
        "kari",
        "kari@",
        "@example.com",
        "kari@example",
        "kari nordmann@example.com",
        "<kari@example.com>",
        "kari@example.com\r\nBcc: x@example.com",
        "a,b@example.com",
        "\"kari\"@example.com",
        `${"x".repeat(250)}@example.com`
      ]
    ) {
      expect(isEmailAddress(bad), bad).toBe(false)
    }
  })

  it("reads MAIL_FROM with or without a display name", () => {
    expect(parseMailbox("Fjord Explorer <booking@fjordexplorer.no>")).toEqual(
      Either.right({ name: "Fjord Explorer", address: "booking@fjordexplorer.no" })
    )
    expect(parseMailbox("\"Fjord, Explorer\" <booking@fjordexplorer.no>")).toEqual(
      Either.right({ name: "Fjord, Explorer", address: "booking@fjordexplorer.no" })
    )
    expect(parseMailbox(" booking@fjordexplorer.no ")).toEqual(
      Either.right({ name: null, address: "booking@fjordexplorer.no" })
    )
    expect(Either.isLeft(parseMailbox("Fjord Explorer"))).toBe(true)
    expect(Either.isLeft(parseMailbox("Fjord <not an address>"))).toBe(true)
    expect(formatMailbox({ name: "Fjord Explorer", address: "a@b.no" })).toBe("Fjord Explorer <a@b.no>")
    expect(formatMailbox({ name: "Fjord, Explorer", address: "a@b.no" })).toBe("\"Fjord, Explorer\" <a@b.no>")
    expect(formatMailbox({ name: null, address: "a@b.no" })).toBe("a@b.no")
  })

  it("names Message-IDs after the outbox id and the sender's domain", () => {
    expect(messageIdFor("0b6f2c9e-0000-4000-8000-000000000001", { name: null, address: "No-Reply@Fjord.NO" }))
      .toBe("<0b6f2c9e-0000-4000-8000-000000000001@fjord.no>")
  })

  it("writes Norwegian in bokmål, anything else in English", () => {
    expect(["nb", "no", "nn", "nb-NO", "NO_no"].map(emailLocale)).toEqual(["nb", "nb", "nb", "nb", "nb"])
    expect(["en", "de", "sv-SE", "", null, undefined].map(emailLocale)).toEqual(["en", "en", "en", "en", "en", "en"])
    expect(["Europe/Oslo", "Arctic/Longyearbyen", "Europe/Lisbon", null].map(teamLocale)).toEqual([
      "nb",
      "nb",
      "en",
      "en"
    ])
  })

  it("names dedupe keys by booking, event, occurrence and audience", () => {
    expect(outboxKeys.cancelled("b1", "guest")).toBe("booking:b1:cancelled:guest")
    expect(outboxKeys.cancelled("b1", "team")).toBe("booking:b1:cancelled:team")
    expect(outboxKeys.rescheduled("b1", "op7", "team")).toBe("booking:b1:rescheduled:op7:team")
    expect(outboxKeys.paymentLink("b1", "send3")).toBe("booking:b1:payment_link:send3:guest")
  })
})

describe("retry policy", () => {
  const policy = { baseMillis: 30_000, maxMillis: 3_600_000 }

  it("doubles from the base, is capped, and jitters between half and all of it", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMillis(n, policy, 0.999999))).toEqual([30_000, 60_000, 120_000, 240_000])
    expect([1, 2, 3, 4].map((n) => retryDelayMillis(n, policy, 0))).toEqual([15_000, 30_000, 60_000, 120_000])
    expect(retryDelayMillis(30, policy, 0.9999999)).toBe(3_600_000)
    expect(retryDelayMillis(1000, policy, 0.5)).toBe(2_700_000)
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, r) => {
          const d = retryDelayMillis(n, policy, r)
          const full = Math.min(policy.maxMillis, policy.baseMillis * 2 ** (n - 1))
          expect(d).toBeGreaterThanOrEqual(Math.floor(full / 2))
          expect(d).toBeLessThanOrEqual(full)
        }
      )
    )
  })
})

describe("SMTP_URL", () => {
  const parse = (url: string) => parseSmtpUrl(Redacted.make(url))

  it("reads host, port, TLS and percent-encoded credentials", () => {
    const s = Either.getOrThrow(parse("smtp://mailer%40fjord.no:p%40ss%3Aw%2Frd@smtp.example.com:2525"))
    expect({ ...s, password: s.password && Redacted.value(s.password) }).toEqual({
      host: "smtp.example.com",
      port: 2525,
      secure: false,
      user: "mailer@fjord.no",
      password: "p@ss:w/rd"
    })
    expect(Either.getOrThrow(parse("smtp://smtp.example.com"))).toMatchObject({
      port: 587,
      secure: false,
      user: null,
      password: null
    })
    expect(Either.getOrThrow(parse("smtps://u:p@smtp.example.com"))).toMatchObject({
      port: 465,
      secure: true,
      user: "u"
    })
  })

  it("refuses other schemes and extras without repeating the URL (it holds a password)", () => {
    for (
      const bad of [
        "http://u:secret@smtp.example.com",
        "smtp://u:secret@smtp.example.com:25/path",
        "smtp://u:secret@host?x=1",
        "not a url secret",
        "smtp://:secret@host"
      ]
    ) {
      const r = parse(bad)
      expect(Either.isLeft(r), bad).toBe(true)
      if (Either.isLeft(r)) expect(r.left).not.toContain("secret")
    }
  })
})

describe("SMTP failures", () => {
  const err = (fields: Record<string, unknown>) => Object.assign(new Error(String(fields.message ?? "failed")), fields)

  it("4xx replies, 503, timeouts, refused connections and refused credentials are transient", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ code: "EENVELOPE", responseCode: 451 }, "smtp_4xx"],
      [{ code: "EMESSAGE", responseCode: 452 }, "smtp_4xx"],
      [{ code: "EPROTOCOL", responseCode: 421 }, "smtp_4xx"],
      [{ code: "EENVELOPE", responseCode: 503 }, "smtp_4xx"],
      [{ code: "ETIMEDOUT" }, "timeout"],
      [{ code: "EABORT" }, "timeout"],
      [{ code: "ESOCKET", originalCode: "ECONNREFUSED" }, "connection"],
      [{ code: "ECONNECTION" }, "connection"],
      [{ code: "EDNS" }, "connection"],
      [{ code: "EAUTH", responseCode: 535 }, "auth"],
      [{ code: "EPROTOCOL" }, "protocol"],
      [{}, "other"]
    ]
    for (const [fields, reason] of cases) {
      const e = classifySmtpError(err(fields))
      expect(e._tag, JSON.stringify(fields)).toBe("MailUnavailable")
      expect(e.reason, JSON.stringify(fields)).toBe(reason)
    }
  })

  it("other 5xx replies and messages refused before sending are permanent", () => {
    for (
      const fields of [
        { code: "EENVELOPE", responseCode: 550 },
        { code: "EMESSAGE", responseCode: 554 },
        { responseCode: 552 },
        { code: "EENVELOPE" },
        { code: "EMESSAGE" }
      ]
    ) {
      expect(classifySmtpError(err(fields))._tag, JSON.stringify(fields)).toBe("MailRejected")
    }
  })

  it("scrubs credentials from the detail", () => {
    const e = classifySmtpError(
      err({ code: "EAUTH", message: "Invalid login for mailer@x.no with hunter22" }),
      (s) => s.replace("hunter22", "<redacted>")
    )
    expect(e.detail).not.toContain("hunter22")
  })
})
