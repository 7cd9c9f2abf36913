/**
 * Reading the HTTP timing records that bench/httpTiming.ts writes in the processes it is preloaded
 * into (`npm run bench:changes`, `npm run bench:desk`).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { LOG_DIR } from "./children.js"

export interface TimingRecord {
  readonly k: "server" | "client"
  /** Start, epoch ms. */
  readonly t: number
  /** Duration, ms. */
  readonly d: number
  readonly m: string
  readonly u: string
  readonly s: number
}

/** A timing file (bench/.data/logs/<name>.http.jsonl, emptied now) read incrementally. */
export const timingFile = (name: string) => {
  const file = path.join(LOG_DIR, `${name}.http.jsonl`)
  fs.mkdirSync(LOG_DIR, { recursive: true })
  fs.writeFileSync(file, "")
  let offset = 0
  let records: Array<TimingRecord> = []
  return {
    file,
    /** Every record written so far (the preload appends every 100 ms). */
    read: () => {
      const text = fs.readFileSync(file, "utf8")
      const fresh = text.slice(offset)
      const end = fresh.lastIndexOf("\n")
      if (end >= 0) {
        records = records.concat(
          fresh.slice(0, end).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as TimingRecord)
        )
        offset += end + 1
      }
      return records
    }
  }
}

/** `/booking.json/BHT-123/cancel` → `/booking.json/:id/cancel`: an operation, whatever the booking. */
export const operationOf = (method: string, url: string) =>
  `${method} ${url.replace(/^https?:\/\/[^/]+/, "").split("/").map((s) => (/\d/.test(s) ? ":id" : s)).join("/")}`

/** Epoch ms with sub-millisecond precision, comparable with the records' `t`. */
export const now = () => performance.timeOrigin + performance.now()
