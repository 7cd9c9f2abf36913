/** Shared post-processing of the generated OpenAPI documents (partner and quickbook). */

export type Json = Record<string, any>

/**
 * Drops the component schemas no path reaches any more (directly or through other schemas): the
 * per-error schemas HttpApi generates are replaced by one error schema in both documents.
 */
export const dropUnreachableSchemas = (spec: Json): Json => {
  const schemas: Json = spec.components.schemas
  const refsIn = (value: unknown) => [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!)
  const reachable = new Set<string>()
  const queue = refsIn(spec.paths)
  while (queue.length > 0) {
    const name = queue.pop()!
    if (reachable.has(name)) continue
    reachable.add(name)
    queue.push(...refsIn(schemas[name] ?? {}))
  }
  for (const name of Object.keys(schemas)) if (!reachable.has(name)) delete schemas[name]
  return spec
}
