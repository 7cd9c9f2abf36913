/**
 * The repository edge (src/db/repoEdge.ts): the database's own failures become defects there, once,
 * and a statement that must give a row and gives none is such a failure (`theRow`), never an
 * `undefined` read further on.
 */
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { repoEdge, theRow } from "../../src/db/repoEdge.js"

class Refused {
  readonly _tag = "Refused"
}

describe("repoEdge", () => {
  it.effect("theRow gives the first row, and none is a NoSuchElementException", () =>
    Effect.gen(function*() {
      expect(yield* theRow([{ n: 1 }, { n: 2 }])).toEqual({ n: 1 })
      const none = yield* Effect.flip(theRow([]))
      expect(Cause.isNoSuchElementException(none)).toBe(true)
    }))

  it.effect("a missing row, a SqlError: defects at the edge; the feature's own errors pass through", () =>
    Effect.gen(function*() {
      const repo = repoEdge.untraced({
        noRow: () => Effect.flatMap(Effect.succeed([] as Array<{ n: number }>), theRow),
        broken: () => Effect.fail(new SqlError({ cause: new Error("connection lost") })),
        refused: () => Effect.fail(new Refused())
      })
      const traced = repoEdge("TestRepo", { noRow: () => Effect.flatMap(Effect.succeed([]), theRow) })
      for (const exit of [yield* Effect.exit(repo.noRow()), yield* Effect.exit(traced.noRow())]) {
        expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
      }
      const broken = yield* Effect.exit(repo.broken())
      expect(Exit.isFailure(broken) && Cause.isDie(broken.cause)).toBe(true)
      expect(yield* Effect.flip(repo.refused())).toBeInstanceOf(Refused)
    }))
})
