/** Every migration, in order. Forward only: never edit one that has shipped; add the next number. */
import m0001 from "./0001_core.js"
import m0002 from "./0002_api_keys.js"
import m0003 from "./0003_booking_system_mirror.js"
import m0004 from "./0004_writes.js"
import m0005 from "./0005_account_service_channel.js"
import m0006 from "./0006_job_run_slots.js"
import m0007 from "./0007_email_outbox.js"
import m0008 from "./0008_booking_changes.js"
import m0009 from "./0009_payment_links.js"
import m0010 from "./0010_cancellations.js"
import m0011 from "./0011_payment_link_watch.js"
import m0012 from "./0012_tour_catalogue.js"
import m0013 from "./0013_publishable_keys.js"
import m0014 from "./0014_quickbook_terminals.js"
import m0015 from "./0015_quickbook_sales.js"
import m0016 from "./0016_quickbook_holds.js"
import m0017 from "./0017_quickbook_book.js"
import m0018 from "./0018_quickbook_sandbox_accounts.js"
import m0019 from "./0019_quickbook_stray_payments.js"
import m0020 from "./0020_payment_links_once.js"
import m0021 from "./0021_payment_link_refunds.js"
import m0022 from "./0022_exchange_rates.js"
import m0023 from "./0023_sales_ledger.js"
import m0024 from "./0024_sales_rollups.js"
import m0025 from "./0025_site_events.js"
import m0026 from "./0026_site_rollups.js"
import m0027 from "./0027_analytics_reads.js"
import m0028 from "./0028_sales_day_totals.js"
import m0029 from "./0029_commission_entries.js"
import m0030 from "./0030_settlements.js"
import m0031 from "./0031_pay_later_charges.js"
import m0032 from "./0032_commission_ledger.js"
import m0033 from "./0033_commission_invoices.js"
import m0034 from "./0034_assistant_oauth.js"
import m0035 from "./0035_assistant_confirmations.js"
import m0036 from "./0036_outbox_trace_context.js"

export const migrations = {
  "0001_core": m0001,
  "0002_api_keys": m0002,
  "0003_booking_system_mirror": m0003,
  "0004_writes": m0004,
  "0005_account_service_channel": m0005,
  "0006_job_run_slots": m0006,
  "0007_email_outbox": m0007,
  "0008_booking_changes": m0008,
  "0009_payment_links": m0009,
  "0010_cancellations": m0010,
  "0011_payment_link_watch": m0011,
  "0012_tour_catalogue": m0012,
  "0013_publishable_keys": m0013,
  "0014_quickbook_terminals": m0014,
  "0015_quickbook_sales": m0015,
  "0016_quickbook_holds": m0016,
  "0017_quickbook_book": m0017,
  "0018_quickbook_sandbox_accounts": m0018,
  "0019_quickbook_stray_payments": m0019,
  "0020_payment_links_once": m0020,
  "0021_payment_link_refunds": m0021,
  "0022_exchange_rates": m0022,
  "0023_sales_ledger": m0023,
  "0024_sales_rollups": m0024,
  "0025_site_events": m0025,
  "0026_site_rollups": m0026,
  "0027_analytics_reads": m0027,
  "0028_sales_day_totals": m0028,
  "0029_commission_entries": m0029,
  "0030_settlements": m0030,
  "0031_pay_later_charges": m0031,
  "0032_commission_ledger": m0032,
  "0033_commission_invoices": m0033,
  "0034_assistant_oauth": m0034,
  "0035_assistant_confirmations": m0035,
  "0036_outbox_trace_context": m0036
}
