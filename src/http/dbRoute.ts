/**
 * The route option of every handler that queries the database: it runs uninterruptibly. When a
 * client hangs up mid-request, @effect/sql-pg 0.53 answers the interruption with
 * pg_cancel_backend(pid), and if the statement has already finished the cancel can land on the next
 * request's statement on that pooled connection (a 500 for an unrelated caller; seen in the
 * benchmark). Letting the request finish avoids it (docs/decisions.md).
 */
export const DB_ROUTE = { uninterruptible: true } as const
