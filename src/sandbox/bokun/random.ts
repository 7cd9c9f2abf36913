/** A small seeded PRNG (mulberry32): the same seed gives the same sequence on every run. */
export interface Rng {
  /** In [0, 1). */
  readonly next: () => number
  /** An integer in [min, max]. */
  readonly int: (min: number, max: number) => number
  readonly pick: <A>(items: ReadonlyArray<A>) => A
  /** Picks by weight; items of weight 0 never. */
  readonly weighted: <A>(items: ReadonlyArray<A>, weight: (a: A) => number) => A
  readonly chance: (p: number) => boolean
}

export const seededRng = (seed: number): Rng => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  return {
    next,
    int,
    pick: (items) => items[Math.floor(next() * items.length)]!,
    weighted: (items, weight) => {
      const total = items.reduce((sum, item) => sum + Math.max(0, weight(item)), 0)
      let at = next() * total
      for (const item of items) {
        at -= Math.max(0, weight(item))
        if (at < 0) return item
      }
      return items[items.length - 1]!
    },
    chance: (p) => next() < p
  }
}
