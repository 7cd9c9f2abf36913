/**
 * Quickbook rate limits (spec §8): separate per-terminal budgets, each a fixed one-minute window.
 * Writes (quote, reserve, release) 60, books 60, reads (tours, slots, sales, ticket) 300. Each
 * endpoint declares its budget; the counter bucket is per budget and terminal, so spending one
 * budget never touches another and two terminals on one key never share a budget.
 */
export type QuickbookBudget = "writes" | "books" | "reads"

export const QUICKBOOK_BUDGETS: Record<QuickbookBudget, { readonly perMinute: number }> = {
  writes: { perMinute: 60 },
  books: { perMinute: 60 },
  reads: { perMinute: 300 }
}

export const QUICKBOOK_WINDOW_SECONDS = 60

/** The shared-counter bucket of a budget for a terminal. */
export const quickbookBucket = (budget: QuickbookBudget, terminalId: string) => `quickbook:${budget}:${terminalId}`

/** The budget of an operation by its spec name. */
export const budgetOfOperation = (operation: string): QuickbookBudget => {
  switch (operation) {
    case "quote":
    case "reserve":
    case "release":
      return "writes"
    case "book":
      return "books"
    default:
      return "reads"
  }
}
