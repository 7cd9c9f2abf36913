/** The Bókun sandbox's public surface. */
export type { FaultSettings, FaultState, LoggedRequest, RequestFilter } from "./faults.js"
export { BokunSandbox, BokunSandboxLive, type Sandbox, type SandboxOptions, startSandbox } from "./sandbox.js"
export {
  type BookingSpec,
  type BulkSpec,
  type ChannelClass,
  DEFAULT_CHANNELS,
  demoProducts,
  type DemoSpec,
  type GenerateSpec,
  type ImportedBooking,
  type ProductSpec,
  type SandboxProduct,
  type SandboxVendor,
  type SeededBooking,
  type VendorSpec
} from "./seed.js"
export { addDays, localDay } from "./time.js"
