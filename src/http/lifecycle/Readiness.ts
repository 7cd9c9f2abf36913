/** Whether this instance takes new work: false from the moment its shutdown begins (GET /readyz answers 503). */
import { Context } from "effect"

export class Readiness extends Context.Tag("Http/Readiness")<Readiness, {
  /** True once the HTTP server drains (SIGTERM, SIGINT, or any other end of the service's scope). */
  readonly draining: () => boolean
}>() {}
