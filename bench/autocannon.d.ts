/**
 * The part of autocannon 9's programmatic API the benchmark uses (the package ships no types and
 * @types/autocannon is not a dependency). See node_modules/autocannon/README.md.
 */
declare module "autocannon" {
  import type { EventEmitter } from "node:events"

  namespace autocannon {
    interface RawRequest {
      method?: string
      path?: string
      headers?: Record<string, string>
      body?: string | Buffer
      [key: string]: unknown
    }

    interface Request extends RawRequest {
      setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest | undefined
      onResponse?: (
        status: number,
        body: string,
        context: Record<string, unknown>,
        headers: Record<string, string>
      ) => void
    }

    interface Options {
      url: string
      connections?: number
      duration?: number | string
      amount?: number
      timeout?: number
      pipelining?: number
      method?: string
      title?: string
      headers?: Record<string, string>
      body?: string | Buffer
      requests?: ReadonlyArray<Request>
      initialContext?: Record<string, unknown>
      excludeErrorStats?: boolean
      sampleInt?: number
      /** Requests per second over all connections (a fixed rate). */
      overallRate?: number
    }

    /** hdr-histogram-percentiles-obj */
    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      total: number
      sent?: number
      p0_001: number
      p0_01: number
      p0_1: number
      p1: number
      p2_5: number
      p10: number
      p25: number
      p50: number
      p75: number
      p90: number
      p97_5: number
      p99: number
      p99_9: number
      p99_99: number
      p99_999: number
    }

    interface Result {
      title?: string
      url: string
      requests: Histogram
      latency: Histogram
      throughput: Histogram
      duration: number
      errors: number
      timeouts: number
      mismatches: number
      non2xx: number
      resets: number
      "1xx": number
      "2xx": number
      "3xx": number
      "4xx": number
      "5xx": number
      statusCodeStats: Record<string, { count: number }>
      start: Date
      finish: Date
      connections: number
      pipelining: number
    }

    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance

  export = autocannon
}
