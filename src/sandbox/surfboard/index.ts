/** The Surfboard sandbox's public surface. */
export {
  type MerchantSpec,
  type Paid,
  type RefundRecord,
  type Sandbox,
  type SandboxMerchant,
  type SandboxOptions,
  type SandboxPartner,
  type SaleSpec,
  startSandbox,
  SurfboardSandbox,
  SurfboardSandboxLive
} from "./sandbox.js"
export { NO_SWITCHES, type SurfboardSwitches } from "./switches.js"
export { SANDBOX_TABLES } from "./schema.js"
