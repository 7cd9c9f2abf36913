/** The Surfboard sandbox's public surface. */
export {
  type MerchantSpec,
  type Paid,
  type RefundRecord,
  type SaleSpec,
  type Sandbox,
  type SandboxMerchant,
  type SandboxOptions,
  type SandboxPartner,
  startSandbox,
  SurfboardSandbox,
  SurfboardSandboxLive
} from "./sandbox.js"
export { SANDBOX_TABLES } from "./schema.js"
export { NO_SWITCHES, type SurfboardSwitches } from "./switches.js"
