/** The repository itself: no file keeps the markers of an unresolved merge. */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const ROOT = path.resolve(import.meta.dirname, "..")

describe("repository", () => {
  it("no tracked text file has merge-conflict markers", () => {
    const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0")
      .filter((f) => /\.(ts|md|json|sh|yml|yaml|html|js)$/.test(f) || f === ".ci/run")
    const marked = files.filter((f) => {
      const full = path.join(ROOT, f)
      if (!fs.existsSync(full)) return false
      return /^(<{7}|>{7})( |$)|^={7}$/m.test(fs.readFileSync(full, "utf8"))
    })
    expect(marked).toEqual([])
  })
})
