/**
 * A commission invoice or credit note as a PDF (pdfkit, A4, Helvetica: Windows-1252, so Norwegian
 * letters print) with what a Norwegian invoice must show (bokføringsforskriften § 5-1-1): the
 * seller's name, organisation number with "MVA" and address; the buyer's name and organisation
 * number; the number; the issue date; the delivery period; what was delivered (a line per booking);
 * net, the VAT rate and amount, gross; the due date; and on a credit note the invoice(s) it corrects.
 * Deterministic: the same document gives the same bytes (the creation date is the issue time), so a
 * re-issue stores the same file.
 */
import { Effect } from "effect"
import PDFDocument from "pdfkit"
import { correctedInvoices, type InvoiceDocument } from "./document.js"
import { monthEnd, vatNumberOf } from "./rules.js"

const MARGIN = 50
const PAGE_WIDTH = 595.28
const PAGE_HEIGHT = 841.89
const RIGHT = PAGE_WIDTH - MARGIN
const FACTS_X = 300

/** Minor units as a Norwegian amount: 1234567 → "12 345,67". */
export const amount = (minor: number) => {
  const sign = minor < 0 ? "-" : ""
  const abs = Math.abs(minor)
  const whole = String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, " ")
  return `${sign}${whole},${String(abs % 100).padStart(2, "0")}`
}

/** YYYY-MM-DD as DD.MM.YYYY. */
const day = (iso: string) => `${iso.slice(8, 10)}.${iso.slice(5, 7)}.${iso.slice(0, 4)}`

/** Table columns (x and width): an invoice's, and a credit note's with the invoice corrected and the fee kept. */
const col = (x: number, w: number) => ({ x: MARGIN + x, w })
const INVOICE_COLS = {
  booking: col(0, 95),
  description: col(100, 200),
  corrects: null,
  fee: null,
  net: col(305, 60),
  vat: col(370, 55),
  gross: col(430, 65)
}
const CREDIT_COLS = {
  booking: col(0, 70),
  description: col(75, 130),
  corrects: col(210, 55),
  fee: col(270, 50),
  net: col(325, 55),
  vat: col(385, 50),
  gross: col(440, 55)
}

export const invoicePdf = (doc: InvoiceDocument): Effect.Effect<Uint8Array> =>
  Effect.async<Uint8Array>((resume) => {
    const credit = doc.type === "credit_note"
    const COLS = credit ? CREDIT_COLS : INVOICE_COLS
    const title = `${credit ? "Kreditnota" : "Faktura"} ${doc.number}`
    const pdf = new PDFDocument({
      size: "A4",
      margin: MARGIN,
      info: { Title: title, Author: doc.seller.name, CreationDate: doc.issuedAt, ModDate: doc.issuedAt }
    })
    const chunks: Array<Buffer> = []
    pdf.on("data", (chunk: Buffer) => chunks.push(chunk))
    pdf.on("end", () => resume(Effect.succeed(new Uint8Array(Buffer.concat(chunks)))))
    pdf.on("error", (e: unknown) => resume(Effect.die(e)))

    const text = (s: string, x: number, y: number, options: PDFKit.Mixins.TextOptions = {}) =>
      pdf.text(s, x, y, { lineBreak: false, ...options })
    const right = (s: string, col: { x: number; w: number }, y: number) =>
      text(s, col.x, y, { width: col.w, align: "right" })
    /** `s` cut to `width` points at the current font, with "…" when cut (one line per table cell). */
    const fit = (s: string, width: number) => {
      if (pdf.widthOfString(s) <= width) return s
      let cut = s
      while (cut.length > 0 && pdf.widthOfString(`${cut}…`) > width) cut = cut.slice(0, -1)
      return `${cut.trimEnd()}…`
    }

    // Heading and seller.
    pdf.font("Helvetica-Bold").fontSize(20)
    text(credit ? "KREDITNOTA" : "FAKTURA", MARGIN, MARGIN)
    pdf.font("Helvetica").fontSize(9)
    text(credit ? "Credit note" : "Invoice", MARGIN, MARGIN + 24)
    let y = MARGIN
    pdf.font("Helvetica-Bold").fontSize(10)
    text(doc.seller.name, 330, y)
    pdf.font("Helvetica").fontSize(9)
    for (const line of doc.seller.address.split(",").map((s) => s.trim()).filter((s) => s !== "")) {
      y += 12
      text(line, 330, y)
    }
    y += 12
    text(`Org.nr. ${vatNumberOf(doc.seller.orgNumber)}`, 330, y)
    if (doc.seller.email) {
      y += 12
      text(doc.seller.email, 330, y)
    }

    // Buyer and the document's facts.
    y = Math.max(y, MARGIN + 60) + 30
    pdf.font("Helvetica-Bold").fontSize(9)
    text("Kunde (buyer)", MARGIN, y)
    text(credit ? "Kreditnota (credit note)" : "Faktura (invoice)", FACTS_X, y)
    pdf.font("Helvetica")
    const facts: Array<[string, string]> = [
      ["Nummer (number)", doc.number],
      ["Fakturadato (issue date)", day(doc.issueDate)],
      ["Leveringsperiode (period)", `${day(`${doc.month}-01`)} - ${day(monthEnd(doc.month))}`],
      ["Forfallsdato (due date)", day(doc.dueDate)],
      ["Valuta (currency)", doc.currency]
    ]
    const buyer = [doc.buyer.name, `Org.nr. ${doc.buyer.orgNumber ?? "-"}`]
    buyer.forEach((line, i) => text(line, MARGIN, y + 14 + i * 12))
    facts.forEach(([label, value], i) => {
      text(label, FACTS_X, y + 14 + i * 12)
      text(value, FACTS_X, y + 14 + i * 12, { width: RIGHT - FACTS_X, align: "right" })
    })
    y += 14 + facts.length * 12 + 10
    const corrected = correctedInvoices(doc)
    if (credit) {
      pdf.font("Helvetica-Bold")
      text(
        `Korrigerer faktura (corrects invoice): ${corrected.map((c) => c.number).join(", ") || "-"}`,
        MARGIN,
        y,
        { width: RIGHT - MARGIN, lineBreak: true }
      )
      pdf.font("Helvetica")
      y = pdf.y + 8
    }
    text(
      credit
        ? "Kreditert provisjon for formidling av turer (commission credited for bookings cancelled or refunded)."
        : "Provisjon for formidling av turer (commission for bookings sold through the marketplace).",
      MARGIN,
      y,
      { width: RIGHT - MARGIN, lineBreak: true }
    )
    y = pdf.y + 12

    // Lines.
    const header = () => {
      pdf.font("Helvetica-Bold").fontSize(8)
      text("Booking", COLS.booking.x, y)
      text("Beskrivelse (description)", COLS.description.x, y)
      if (COLS.corrects) text("Korrigerer", COLS.corrects.x, y)
      if (COLS.fee) right("Gebyr (fee)", COLS.fee, y)
      right("Netto", COLS.net, y)
      right(`MVA ${doc.vatRatePercent} %`, COLS.vat, y)
      right("Brutto", COLS.gross, y)
      y += 12
      pdf.moveTo(MARGIN, y - 2).lineTo(RIGHT, y - 2).lineWidth(0.5).stroke()
      pdf.font("Helvetica").fontSize(8)
    }
    header()
    for (const line of doc.lines) {
      if (y > PAGE_HEIGHT - MARGIN - 40) {
        pdf.addPage()
        y = MARGIN
        header()
      }
      text(fit(line.confirmationCode, COLS.booking.w), COLS.booking.x, y)
      text(fit(`${line.operatorName}: ${line.tour ?? "-"}`, COLS.description.w), COLS.description.x, y)
      if (COLS.corrects) text(line.correctsInvoiceNumber ?? "-", COLS.corrects.x, y)
      if (COLS.fee) right(line.cancellationFeeMinor === null ? "-" : amount(line.cancellationFeeMinor), COLS.fee, y)
      right(amount(line.netMinor), COLS.net, y)
      right(amount(line.vatMinor), COLS.vat, y)
      right(amount(line.grossMinor), COLS.gross, y)
      y += 11
    }
    if (y > PAGE_HEIGHT - MARGIN - 120) {
      pdf.addPage()
      y = MARGIN
    }

    // Totals.
    pdf.moveTo(MARGIN, y + 2).lineTo(RIGHT, y + 2).lineWidth(0.5).stroke()
    y += 10
    pdf.fontSize(9)
    const totals: Array<[string, number, boolean]> = [
      ["Sum netto (net)", doc.netMinor, false],
      [`MVA ${doc.vatRatePercent} % (VAT)`, doc.vatMinor, false],
      [`Sum inkl. MVA (gross) ${doc.currency}`, doc.grossMinor, true],
      ["Trukket i utbetalinger (deducted from payouts)", doc.deductedMinor, false],
      [credit ? "Til gode (owed to you)" : "Å betale (still payable)", doc.payableMinor, true]
    ]
    for (const [label, value, bold] of totals) {
      pdf.font(bold ? "Helvetica-Bold" : "Helvetica")
      text(label, 280, y)
      text(amount(value), 280, y, { width: RIGHT - 280, align: "right" })
      y += 13
    }
    pdf.font("Helvetica").fontSize(8)
    y += 10
    const payment = doc.payableMinor > 0 && doc.seller.bankAccount
      ? `Betales til konto ${doc.seller.bankAccount} innen ${day(doc.dueDate)}, merk med ${doc.number}. `
      : ""
    text(
      `${payment}Provisjonen trekkes ved betaling gjennom betalingsleverandøren; MVA som ikke er trukket faktureres her. ` +
        (credit ? "Gebyr: provisjon som beholdes ved avbestilling (cancellation fee kept; not credited). " : "") +
        "Spesifikasjon per booking: CSV-filen med samme nummer.",
      MARGIN,
      y,
      { width: RIGHT - MARGIN, lineBreak: true }
    )
    pdf.end()
  })
