/**
 * Seeding the sandbox: vendors with products (vendors.ts), single bookings for tests
 * (singleBooking.ts), the demo's own bookings (importBookings.ts), deterministic generation over a range of days (generate.ts), volume for the
 * benchmark (bulk.ts) and the demo (demo.ts).
 */
export * from "./bulk.js"
export * from "./demo.js"
export * from "./generate.js"
export * from "./importBookings.js"
export * from "./singleBooking.js"
export * from "./vendors.js"
