/**
 * The desk ticket as a PDF (pdfkit): the ticket's 48-character lines in Courier, under them the QR
 * code of `qrPayload` (qrcode; error correction M, a 4-module quiet zone) drawn as vector squares.
 * One page, as tall as the ticket needs, about A6 wide. The standard Courier font covers Windows-1252,
 * so Norwegian letters print; characters outside it do not (the layout never needs them).
 */
import { Effect } from "effect"
import PDFDocument from "pdfkit"
import QRCode from "qrcode"
import type { Ticket } from "./ticket.js"

const FONT_SIZE = 9
const LINE_HEIGHT = 12
const MARGIN = 20
/** Courier is 0.6 em wide per character: 48 characters at 9 pt. */
const TEXT_WIDTH = 48 * FONT_SIZE * 0.6
const MODULE = 3
const QUIET_ZONE = 4

/** The QR code's modules of a payload: `size` × `size`, true for a dark module. */
export const qrMatrix = (
  payload: string
): { readonly size: number; readonly dark: (row: number, col: number) => boolean } => {
  const { modules } = QRCode.create(payload, { errorCorrectionLevel: "M" })
  return { size: modules.size, dark: (row, col) => modules.get(row, col) === 1 }
}

/** The PDF bytes of a ticket (`title` becomes the document's title). */
export const ticketPdf = (ticket: Ticket, title: string): Effect.Effect<Uint8Array> =>
  Effect.async<Uint8Array>((resume) => {
    const qr = qrMatrix(ticket.qrPayload)
    const qrSide = (qr.size + 2 * QUIET_ZONE) * MODULE
    const width = Math.ceil(TEXT_WIDTH + 2 * MARGIN)
    const height = Math.ceil(2 * MARGIN + ticket.lines48.length * LINE_HEIGHT + LINE_HEIGHT + qrSide)
    const doc = new PDFDocument({ size: [width, height], margin: MARGIN, info: { Title: title }, autoFirstPage: true })
    const chunks: Array<Buffer> = []
    doc.on("data", (chunk: Buffer) => chunks.push(chunk))
    doc.on("end", () => resume(Effect.succeed(new Uint8Array(Buffer.concat(chunks)))))
    doc.on("error", (e: unknown) => resume(Effect.die(e)))
    doc.font("Courier").fontSize(FONT_SIZE).fillColor("black")
    ticket.lines48.forEach((line, i) => {
      doc.text(line, MARGIN, MARGIN + i * LINE_HEIGHT, { lineBreak: false })
    })
    // The QR code: one rectangle per horizontal run of dark modules, filled at once.
    const left = (width - qrSide) / 2 + QUIET_ZONE * MODULE
    const top = MARGIN + (ticket.lines48.length + 1) * LINE_HEIGHT + QUIET_ZONE * MODULE
    for (let row = 0; row < qr.size; row++) {
      let col = 0
      while (col < qr.size) {
        if (!qr.dark(row, col)) {
          col++
          continue
        }
        const start = col
        while (col < qr.size && qr.dark(row, col)) col++
        doc.rect(left + start * MODULE, top + row * MODULE, (col - start) * MODULE, MODULE)
      }
    }
    doc.fill("black")
    doc.end()
  })
