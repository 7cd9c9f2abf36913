/** What an error answer may quote of a client's input (src/http/echo.ts). */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { clipEchoes, echo, ECHO_MAX, MESSAGE_MAX } from "../../src/http/echo.js"

describe("echo and clipEchoes", () => {
  it("a short value is quoted whole; a long one cut to ECHO_MAX and counted", () => {
    expect(echo("2026-02-30")).toBe("2026-02-30")
    expect(echo("x".repeat(ECHO_MAX))).toBe("x".repeat(ECHO_MAX))
    expect(echo("x".repeat(10_000))).toBe(`${"x".repeat(ECHO_MAX)}… (10000 characters)`)
    // A surrogate pair is never split.
    expect(echo(`${"x".repeat(ECHO_MAX - 1)}😀${"y".repeat(100)}`)).toBe(
      `${"x".repeat(ECHO_MAX - 1)}… (165 characters)`
    )
  })

  it("a schema message's quoted values are cut, the rule kept", () => {
    const long = "x".repeat(10_000)
    expect(clipEchoes(`Expected a string at most 100 character(s) long, actual ${JSON.stringify(long)}`)).toBe(
      `Expected a string at most 100 character(s) long, actual "${"x".repeat(ECHO_MAX)}… (10000 characters)"`
    )
    expect(clipEchoes(`Expected string, actual {${JSON.stringify(long)}:${JSON.stringify(long)}}`)).toBe(
      `Expected string, actual {"${"x".repeat(ECHO_MAX)}… (10000 characters)":"${
        "x".repeat(ECHO_MAX)
      }… (10000 characters)"}`
    )
    expect(clipEchoes("must be a date YYYY-MM-DD")).toBe("must be a date YYYY-MM-DD")
    // Many short values: the message as a whole is cut.
    const many = clipEchoes(`Expected string, actual ${JSON.stringify(Array.from({ length: 2000 }, () => "ab"))}`)
    expect(many.length).toBeLessThanOrEqual(MESSAGE_MAX + 8)
    expect(many.endsWith("… (cut)")).toBe(true)
  })

  it("any message comes out bounded, and cutting twice changes nothing", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3000 }), fc.string({ maxLength: 3000, unit: "grapheme" }), (text, value) => {
        const once = clipEchoes(`${text} actual ${JSON.stringify(value)}`)
        expect(once.length).toBeLessThanOrEqual(MESSAGE_MAX + 8)
        expect(clipEchoes(once)).toBe(once)
        expect(echo(echo(value))).toBe(echo(value))
      }),
      { numRuns: 300 }
    )
  })
})
