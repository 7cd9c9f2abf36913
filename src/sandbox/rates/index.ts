/** The rates sandbox's public surface (Norges Bank's and the ECB's dialects). */
export {
  type HeldRate,
  type RateSourceScope,
  type RatesSandbox,
  RatesSandboxLive,
  RatesSandboxService,
  startRatesSandbox
} from "./sandbox.js"
export { addDays, isBankingDay, nokPerUnit, SANDBOX_CURRENCIES } from "./series.js"
