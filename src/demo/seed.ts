/**
 * The demo dataset, created on an empty database when DEMO_DATA is on (the default):
 * four operators (Fjord Explorer owns fjordexplorer.no and resells Arctic Whale Safari's tours there;
 * Arctic Whale Safari is only added to that site; Lisboa Tejo Cruises sells in EUR on its own site;
 * Nordkapp Coastal Tours, with no tours here, has a booking system whose sales cannot be read),
 * users with every role, tours with their catalogue content (src/demo/catalogue.ts), 2,400 bookings
 * around today, and one key per purpose, written with their secrets to `<DATA_DIR>/demo.json`.
 *
 * A linked tour's bookings are priced as its booking-system product prices them (per guest, or per
 * booking for the private ones), so that they match the bookings the demo writes into the sandbox
 * (bookingSystem.ts, which also gives them their `provider_reference`). A pay-later balance is
 * charged three days before departure (09:00 local): `upcoming` while that is ahead, `collected`
 * (or, for some, `failed`) once it has passed, `cancelled` on a cancelled booking.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import { Operators } from "../operators/Operators.js"
import { PublishableKeys } from "../partner/auth/PublishableKeys.js"
import { SCOPES } from "../partner/auth/scopes.js"
import { QuickbookKeys } from "../quickbook/terminals/QuickbookKeys.js"
import { demoProducts } from "../sandbox/bokun/index.js"
import { DEMO_VENDORS } from "./bookingSystem.js"
import { DEMO_CATALOGUE } from "./catalogue.js"
import { seedFinanceStatements } from "./financeStatements.js"
import { writeTourContent } from "./tourContent.js"

export interface DemoKey {
  readonly name: string
  readonly secret: string
  readonly id: string
  readonly scopes: ReadonlyArray<string>
  readonly partners: ReadonlyArray<{ id: string; name: string }>
  /** active, expired, revoked, or creator_demoted (its creator lost admin rights: answers 401). */
  readonly state: "active" | "expired" | "revoked" | "creator_demoted"
  readonly note: string
}

export interface DemoFile {
  readonly generated_at: string
  readonly note: string
  readonly keys: ReadonlyArray<DemoKey>
  readonly operators: ReadonlyArray<{ id: string; name: string; timezone: string }>
  readonly users: ReadonlyArray<{ email: string; name: string; roles: Record<string, string> }>
  /** Publishable keys (`?key=pk_widget_...`) of the demo sites, for the catalogue from a web page. */
  readonly publishable_keys: ReadonlyArray<{ site: string; key: string; allowed_origins: ReadonlyArray<string> }>
  /**
   * The Quickbook (desk sales) API: a terminal and a test key bound to it (send both on every call);
   * `paymentTerminalId` is the desk's card terminal at the Surfboard sandbox (filled in at start,
   * once the sandbox merchant exists).
   */
  readonly quickbook: {
    readonly terminals: ReadonlyArray<
      { id: string; name: string; operator: string; active: boolean; paymentTerminalId: string | null }
    >
    readonly keys: ReadonlyArray<
      {
        id: string
        mode: "live" | "test"
        name: string
        secret: string
        terminals: ReadonlyArray<string>
        note: string
      }
    >
    /** Where the demo's Surfboard sandbox listens (filled in at start): take the desk's card payments there. */
    readonly paymentSandboxUrl?: string
  }
  /**
   * A Fjord Explorer booking to try each partner write on with the `Demo: everything` key, picked
   * when the demo was created (a check-in takes a row of today's manifest instead).
   */
  readonly examples: {
    /** Pay-later, its balance charged later: `POST /bookings/{id}/payment-link` sends a `deferred_balance` link. */
    readonly payment_link: DemoExample
    /** Paid in full: `POST /bookings/{id}/cancel` returns the money at the payment sandbox. */
    readonly cancel: DemoExample
    /** An Oslofjord cruise a week or more ahead: `GET /bookings/{id}/reschedule-options?date=` and `POST /bookings/{id}/reschedule`. */
    readonly reschedule: DemoExample
  }
}

export interface DemoExample {
  readonly booking_id: string
  readonly confirmation_code: string
  readonly experience_date: string
  readonly note: string
}

export const BOOKING_COUNT = 3600
const DAY = 86_400_000

/**
 * The price of a demo tour linked to a sandbox product (bookingSystem.ts): its first rate's price
 * of the default category, per guest or per booking as the product is priced. Undefined: not linked.
 */
const bookingSystemPrice = (title: string) => {
  for (const vendor of DEMO_VENDORS) {
    const index = vendor.tours[title]
    if (index === undefined) continue
    const product = demoProducts(vendor.currency)[index]!
    const categories = product.pricingCategories ?? [{ title: "Adult", isDefault: true }]
    const adult = categories.find((c) => c.isDefault) ?? categories[0]!
    return { price: product.rates![0]!.prices[adult.title]!, perBooking: product.pricedPerBooking === true }
  }
  return undefined
}

export const seedDemo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const admin = yield* Operators
  const now = Date.now()

  const fjord = yield* admin.createOperator({
    name: "Fjord Explorer AS",
    timezone: "Europe/Oslo",
    legalName: "Fjord Explorer AS",
    orgNumber: "912345678"
  })
  const arctic = yield* admin.createOperator({
    name: "Arctic Whale Safari AS",
    timezone: "Europe/Oslo",
    legalName: "Arctic Whale Safari AS",
    orgNumber: "923456789"
  })
  const lisboa = yield* admin.createOperator({
    name: "Lisboa Tejo Cruises Lda",
    timezone: "Europe/Lisbon",
    legalName: "Lisboa Tejo Cruises Lda",
    orgNumber: "PT509876543"
  })
  // A small operator with no tours here: its booking system's sales cannot be read (bookingSystem.ts),
  // so its sales figures show `available: false` for other channels.
  const nordkapp = yield* admin.createOperator({
    name: "Nordkapp Coastal Tours AS",
    timezone: "Europe/Oslo",
    legalName: "Nordkapp Coastal Tours AS",
    orgNumber: "934567890"
  })
  const operators = [
    { id: fjord, name: "Fjord Explorer AS", timezone: "Europe/Oslo" },
    { id: arctic, name: "Arctic Whale Safari AS", timezone: "Europe/Oslo" },
    { id: lisboa, name: "Lisboa Tejo Cruises Lda", timezone: "Europe/Lisbon" },
    { id: nordkapp, name: "Nordkapp Coastal Tours AS", timezone: "Europe/Oslo" }
  ]

  const users = [
    { email: "ingrid@fjordexplorer.no", name: "Ingrid Berg", roles: { [fjord]: "owner" } },
    { email: "ola@arcticwhale.no", name: "Ola Nordmann", roles: { [arctic]: "owner", [fjord]: "admin" } },
    { email: "kari@fjordexplorer.no", name: "Kari Hansen", roles: { [fjord]: "member" } },
    { email: "joao@tejocruises.pt", name: "João Silva", roles: { [lisboa]: "owner" } },
    { email: "maria@tejocruises.pt", name: "Maria Costa", roles: { [lisboa]: "admin" } },
    { email: "sigrid@nordkapptours.no", name: "Sigrid Eide", roles: { [nordkapp]: "owner" } }
  ] as const
  const userIds: Record<string, string> = {}
  for (const u of users) {
    userIds[u.email] = yield* admin.createUser(u)
    for (const [operatorId, role] of Object.entries(u.roles)) {
      yield* admin.setMembership(operatorId, userIds[u.email]!, role as "owner" | "admin" | "member")
    }
  }

  const fjordSite = yield* admin.createSite({
    domain: "fjordexplorer.no",
    name: "Fjord Explorer",
    ownerOperatorId: fjord
  })
  yield* admin.addSiteOperator(fjordSite, arctic)
  const lisboaSite = yield* admin.createSite({
    domain: "tejocruises.pt",
    name: "Tejo Cruises",
    ownerOperatorId: lisboa
  })

  // Departure times follow the Bókun sandbox products the demo links these tours to (bookingSystem.ts);
  // the kayak has no booking system. Arctic Whale Safari's tours are resold by Fjord Explorer on its site.
  const tours = [
    {
      op: fjord,
      site: fjordSite,
      title: "Oslofjord Sightseeing Cruise",
      slug: "oslofjord-cruise",
      tz: "Europe/Oslo",
      cur: "NOK",
      price: 49900,
      times: ["09:00", "12:30", "16:00"],
      status: "published"
    },
    {
      op: fjord,
      site: fjordSite,
      title: "Fjord & Fortress Kayak",
      slug: "fortress-kayak",
      tz: "Europe/Oslo",
      cur: "NOK",
      price: 89000,
      times: ["09:00", "14:00"],
      status: "published"
    },
    {
      op: arctic,
      site: fjordSite,
      title: "Whale Safari from Tromsø",
      slug: "whale-safari",
      tz: "Europe/Oslo",
      cur: "NOK",
      price: 159000,
      times: ["10:00", "14:00"],
      status: "published"
    },
    {
      op: arctic,
      site: fjordSite,
      title: "Northern Lights Chase",
      slug: "northern-lights",
      tz: "Europe/Oslo",
      cur: "NOK",
      price: 129000,
      times: ["19:30"],
      status: "published"
    },
    {
      op: lisboa,
      site: lisboaSite,
      title: "Tagus Sunset Sail",
      slug: "tagus-sunset",
      tz: "Europe/Lisbon",
      cur: "EUR",
      price: 4500,
      times: ["19:30"],
      status: "published"
    },
    {
      op: lisboa,
      site: lisboaSite,
      title: "Lisbon Dolphin Watch",
      slug: "dolphin-watch",
      tz: "Europe/Lisbon",
      cur: "EUR",
      price: 6500,
      times: ["10:00", "14:00"],
      status: "published"
    },
    {
      op: lisboa,
      site: lisboaSite,
      title: "Douro Day Trip (draft)",
      slug: null,
      tz: "Europe/Lisbon",
      cur: "EUR",
      price: 11000,
      times: ["07:00"],
      status: "draft"
    }
  ]
  const tourRows: Array<
    {
      id: string
      op: string
      site: string
      title: string
      tz: string
      cur: string
      price: number
      per_booking: boolean
      times: ReadonlyArray<string>
      resold: boolean
    }
  > = []
  const tourIds: Record<string, string> = {}
  for (const [i, t] of tours.entries()) {
    // Created an hour apart, so the catalogue (oldest first) lists them in this order.
    const createdAt = new Date(now - (tours.length - i) * 3_600_000)
    const [row] = yield* sql<{ id: string }>`
      INSERT INTO tours (operator_id, slug, title, status, timezone, currency, created_at, updated_at)
      VALUES (${t.op}, ${t.slug}, ${t.title}, ${t.status}, ${t.tz}, ${t.cur}, ${createdAt}, ${createdAt}) RETURNING id`
    const soldBy = t.op === arctic ? "site_owner" : "operator"
    yield* sql`INSERT INTO site_tours (site_id, tour_id, position, sold_by) VALUES (${t.site}, ${
      row!.id
    }, ${tourRows.length}, ${soldBy})`
    tourIds[t.title] = row!.id
    if (t.status === "published") {
      const linked = bookingSystemPrice(t.title)
      tourRows.push({
        id: row!.id,
        op: t.op,
        site: t.site,
        title: t.title,
        tz: t.tz,
        cur: t.cur,
        price: linked?.price ?? t.price,
        per_booking: linked?.perBooking ?? false,
        times: t.times,
        resold: t.op === arctic
      })
    }
  }
  for (const [title, content] of Object.entries(DEMO_CATALOGUE)) {
    yield* writeTourContent(tourIds[title]!, {
      ...content,
      linkedProducts: (content.linkedProducts ?? []).map((l) => ({
        ...l,
        tourId: l.tourId ? tourIds[l.tourId]! : null
      }))
    })
  }

  // Bookings: generated in one statement from a fixed random seed, two in three created over the last
  // 120 days and one in three over the 280 days before (so sales have 400 days of history), with
  // departures up to 75 days after booking, so both past and coming days are full.
  // No provider_reference yet: the demo's booking system gives the linked tours' bookings theirs.
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT setseed(0.4242)`
    yield* sql`
      WITH tour AS (
        SELECT row_number() OVER () - 1 AS n, t.* FROM jsonb_to_recordset(${JSON.stringify(tourRows)}::jsonb)
          AS t(id uuid, op uuid, site uuid, title text, tz text, cur text, price int, per_booking boolean, times text[], resold boolean)
      ), gen AS (
        SELECT g, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5,
          (floor(random() * (SELECT count(*) FROM tour)))::int AS tn
        FROM generate_series(1, ${BOOKING_COUNT}) g
      ), b AS (
        SELECT gen.*, tour.*,
          to_timestamp(${now / 1000})
            - make_interval(secs => CASE WHEN g % 3 = 0 THEN 120 + gen.r1 * 280 ELSE gen.r1 * 120 END * 86400) AS created,
          1 + floor(gen.r2 * 6)::int AS pax
        FROM gen JOIN tour ON tour.n = gen.tn
      ), s AS (
        SELECT b.*,
          CASE WHEN r3 < 0.78 THEN 'CONFIRMED' WHEN r3 < 0.83 THEN 'RESERVED' WHEN r3 < 0.91 THEN 'CANCELLED'
               WHEN r3 < 0.97 THEN 'REFUNDED' WHEN r3 < 0.985 THEN 'HOLD' ELSE 'ABANDONED' END AS status,
          ((created AT TIME ZONE tz)::date + floor(r4 * 75)::int) AS day,
          CASE WHEN per_booking THEN price ELSE price * pax END AS amount,
          r1 < 0.2 AS pay_later,
          CASE WHEN r3 >= 0.83 AND r3 < 0.97 THEN least(created + make_interval(secs => r4 * 5 * 86400), to_timestamp(${
      now / 1000
    })) END
            AS cancelled_at
        FROM b
      ), c AS (
        -- The balance is charged three days before departure at 09:00 local, never before the booking.
        SELECT s.*, greatest(created + interval '1 hour', ((day - 3) + time '09:00') AT TIME ZONE tz) AS charge_at FROM s
      ), p AS (
        SELECT c.*,
          CASE WHEN NOT pay_later THEN NULL
               WHEN cancelled_at IS NOT NULL THEN 'cancelled'
               WHEN charge_at > to_timestamp(${now / 1000}) THEN 'upcoming'
               WHEN g % 8 = 3 THEN 'failed'
               ELSE 'collected' END AS balance
        FROM c
      )
      INSERT INTO bookings (
        confirmation_code, status, operator_id, tour_id, tour_name, site_id, experience_date, start_time, timezone,
        participants, amount_minor, currency, channel, guest_name, guest_email, guest_phone, provider_reference,
        payment_strategy, pay_later_status, pay_later_amount_minor, pay_later_currency, pay_later_charge_at, pay_later_paid_at,
        commission_amount_minor, commission_rate_percent, commission_currency, commission_status,
        booked_at, created_at, updated_at
      )
      SELECT
        'DEMO-' || lpad(g::text, 6, '0'),
        status,
        op, id, title, site,
        day,
        times[1 + floor(r5 * array_length(times, 1))::int],
        tz, pax, amount, cur,
        (ARRAY['website', 'widget', 'getyourguide', 'viator', 'desk'])[1 + floor(r2 * 5)::int],
        (ARRAY['Emma Johansen', 'Lars Olsen', 'Sofia Pereira', 'Noah Smith', 'Mia Schulz', 'Lucas Martin', 'Aiko Tanaka', 'Nora Lie'])[1 + (g % 8)],
        'guest' || g || '@example.com',
        '+47 4' || lpad((g * 7919 % 10000000)::text, 7, '0'),
        NULL,
        CASE WHEN pay_later THEN 'pay_later' ELSE 'pay_now' END,
        balance,
        CASE WHEN pay_later THEN amount - (amount / 5) END,
        CASE WHEN pay_later THEN cur END,
        CASE WHEN pay_later THEN charge_at END,
        -- Collected: charged on time; a cancelled booking's balance was collected if charged before the cancel.
        CASE WHEN balance = 'collected' OR (balance = 'cancelled' AND charge_at < cancelled_at) THEN charge_at END,
        CASE WHEN resold THEN amount * 15 / 100 ELSE amount * 8 / 100 END,
        CASE WHEN resold THEN 15 ELSE 8 END,
        cur,
        CASE WHEN cancelled_at IS NOT NULL THEN 'voided' ELSE 'pending' END,
        CASE WHEN r3 < 0.97 THEN created END,
        created,
        cancelled_at
      FROM p
      ORDER BY g`
  }))

  // A booking for each partner write, so a newcomer can try each one (README, demo.json `examples`).
  const example = (where: Statement.Fragment, note: string) =>
    Effect.map(
      sql<{ booking_id: string; confirmation_code: string; experience_date: string }>`
        SELECT b.id AS booking_id, b.confirmation_code, b.experience_date FROM bookings b JOIN tours t ON t.id = b.tour_id
        WHERE b.operator_id = ${fjord} AND b.status = 'CONFIRMED' AND ${where}
        ORDER BY b.experience_date, b.confirmation_code LIMIT 1`,
      ([row]): DemoExample => ({ ...row!, note })
    )
  const reschedule = yield* example(
    sql`t.title = ${"Oslofjord Sightseeing Cruise"} AND b.payment_strategy = 'pay_now' AND b.participants <= 4
      AND b.experience_date BETWEEN current_date + 7 AND current_date + 20`,
    "an Oslofjord cruise paid in full: GET /api/v1/bookings/{id}/reschedule-options?date=<a later day>, then POST /api/v1/bookings/{id}/reschedule"
  )
  const examples = {
    payment_link: yield* example(
      sql`b.payment_strategy = 'pay_later' AND b.pay_later_status = 'upcoming' AND b.experience_date >= current_date + 7`,
      "pay-later, balance not charged yet: POST /api/v1/bookings/{id}/payment-link sends the guest a deferred_balance link"
    ),
    cancel: yield* example(
      sql`b.payment_strategy = 'pay_now' AND b.experience_date >= current_date + 2 AND b.id <> ${reschedule.booking_id}::uuid`,
      "paid in full: POST /api/v1/bookings/{id}/cancel releases the seats and refunds at the payment sandbox"
    ),
    reschedule
  }

  // Keys: one per scope, a contact-free reader, a multi-operator key, and the 401 cases.
  const ingrid = userIds["ingrid@fjordexplorer.no"]!
  const ola = userIds["ola@arcticwhale.no"]!
  const joao = userIds["joao@tejocruises.pt"]!
  const maria = userIds["maria@tejocruises.pt"]!
  const sigrid = userIds["sigrid@nordkapptours.no"]!
  const year = new Date(now + 365 * DAY)
  const partnersOf = (ids: ReadonlyArray<string>) =>
    operators.filter((o) => ids.includes(o.id)).map(({ id, name }) => ({ id, name }))
  const keys: Array<DemoKey> = []
  const make = (
    spec: {
      name: string
      by: string
      scopes: ReadonlyArray<string>
      ops: ReadonlyArray<string>
      state?: DemoKey["state"]
      note: string
      expiresAt?: Date
      createdAt?: Date
    }
  ) =>
    Effect.gen(function*() {
      const created = yield* admin.createKey({
        createdBy: spec.by,
        name: spec.name,
        scopes: spec.scopes,
        operatorIds: spec.ops,
        expiresAt: spec.expiresAt ?? year,
        ...(spec.createdAt ? { createdAt: spec.createdAt } : {})
      })
      keys.push({
        name: spec.name,
        secret: created.token,
        id: created.id,
        scopes: spec.scopes,
        partners: partnersOf(spec.ops),
        state: spec.state ?? "active",
        note: spec.note
      })
      return created
    })

  yield* make({
    name: "Demo: everything",
    by: ingrid,
    scopes: SCOPES,
    ops: [fjord],
    note: "Fjord Explorer, every scope"
  })
  for (const scope of SCOPES) {
    yield* make({ name: `Demo: ${scope}`, by: ingrid, scopes: [scope], ops: [fjord], note: `only ${scope}` })
  }
  yield* make({
    name: "Demo: bookings without guest contact",
    by: joao,
    scopes: ["bookings:read", "manifest:read"],
    ops: [lisboa],
    note: "no guests.contact:read: guest email and phone keys are absent"
  })
  yield* make({
    name: "Demo: two operators",
    by: ola,
    scopes: ["bookings:read", "guests.contact:read", "manifest:read", "finance:read"],
    ops: [fjord, arctic],
    note: "acts for Fjord Explorer and Arctic Whale Safari (Ola is admin of one, owner of the other)"
  })
  yield* make({
    name: "Demo: analytics, added operator",
    by: ola,
    scopes: ["analytics:read"],
    ops: [arctic],
    note: "Arctic Whale Safari is only added to fjordexplorer.no: site traffic, its own tours' funnel and sales there"
  })
  yield* make({
    name: "Demo: sales unavailable",
    by: sigrid,
    scopes: ["finance:read"],
    ops: [nordkapp],
    note:
      "Nordkapp Coastal Tours: its booking system's sales cannot be read, so GET /sales shows other channels `available: false`"
  })
  // Commission statements (issue 15): seven small operators, their bookings and the finance keys.
  const finance = yield* seedFinanceStatements(now, {
    addOperators: (ops) => operators.push(...ops),
    make,
    fjord: { operator: fjord, by: ingrid },
    lisboa: { operator: lisboa, by: joao },
    nordkapp
  })
  yield* make({
    name: "Demo: expired",
    by: ingrid,
    scopes: ["bookings:read"],
    ops: [fjord],
    state: "expired",
    note: "expired yesterday: answers 401",
    createdAt: new Date(now - 30 * DAY),
    expiresAt: new Date(now - DAY)
  })
  const revoked = yield* make({
    name: "Demo: revoked",
    by: ingrid,
    scopes: ["bookings:read"],
    ops: [fjord],
    state: "revoked",
    note: "revoked: answers 401"
  })
  yield* admin.revokeKey(revoked.id, new Date(now - DAY))
  yield* make({
    name: "Demo: creator demoted",
    by: maria,
    scopes: ["bookings:read"],
    ops: [lisboa],
    state: "creator_demoted",
    note: "Maria was admin when she made it and is now a member: answers 401"
  })
  yield* admin.changeRole(lisboa, maria, "member")

  // Publishable keys: the sites' own domains, and localhost for trying the examples/ page.
  const publishable = yield* PublishableKeys
  const publishable_keys: Array<{ site: string; key: string; allowed_origins: ReadonlyArray<string> }> = []
  for (
    const [siteId, domain, by] of [[fjordSite, "fjordexplorer.no", ingrid], [
      lisboaSite,
      "tejocruises.pt",
      joao
    ]] as const
  ) {
    const made = yield* publishable.create({
      siteId,
      createdBy: by,
      name: "Demo: website widgets",
      origins: [domain, `*.${domain}`, "http://localhost:8080", "http://127.0.0.1:8080"]
    })
    publishable_keys.push({ site: domain, key: made.key, allowed_origins: made.allowedOrigins })
  }

  // Quickbook: Fjord Explorer's harbour desk with a test key (sandboxes only); a second desk deactivated.
  const quickbookKeys = yield* QuickbookKeys
  const desk = yield* quickbookKeys.registerTerminal(fjord, "Fjord Explorer: Aker Brygge desk")
  const closedDesk = yield* quickbookKeys.registerTerminal(fjord, "Fjord Explorer: closed kiosk")
  const deskKey = yield* quickbookKeys.issueKey({
    mode: "test",
    name: "Demo: desk app (test)",
    terminals: [desk.id, closedDesk.id]
  })
  yield* quickbookKeys.deactivateTerminal(closedDesk.id)
  const quickbook = {
    terminals: [
      { id: desk.id, name: desk.name, operator: "Fjord Explorer AS", active: true, paymentTerminalId: null },
      {
        id: closedDesk.id,
        name: closedDesk.name,
        operator: "Fjord Explorer AS",
        active: false,
        paymentTerminalId: null
      }
    ],
    keys: [{
      id: deskKey.id,
      mode: deskKey.mode,
      name: deskKey.name,
      secret: deskKey.token,
      terminals: [desk.id, closedDesk.id],
      note:
        "send `Authorization: Bearer <secret>` and `Quickbook-Terminal: <terminal id>`; the closed kiosk answers 403 terminal_not_registered"
    }]
  }

  const roleUsers = users.map((u) => ({
    email: u.email,
    name: u.name,
    roles: Object.fromEntries(
      Object.entries(u.roles).map(([op, role]) => [operators.find((o) => o.id === op)!.name, role])
    )
  }))
  roleUsers.find((u) => u.email === "maria@tejocruises.pt")!.roles["Lisboa Tejo Cruises Lda"] = "member"

  return {
    generated_at: new Date(now).toISOString(),
    note: "Demo keys with their secrets. Demo data only: real keys are shown once and never stored.",
    keys,
    operators,
    users: [...roleUsers, finance.user],
    publishable_keys,
    quickbook,
    examples
  } satisfies DemoFile
})
