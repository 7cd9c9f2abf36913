/** Reading back what the service's PDFs (pdfkit: desk tickets, commission invoices) draw. */
import { inflateSync } from "node:zlib"

/** The text a pdfkit document draws: each TJ/Tj operator's string in Windows-1252 (content streams inflated). */
export const pdfText = (pdf: Buffer): Array<string> => {
  const raw = pdf.toString("latin1")
  const streams = [...raw.matchAll(/stream\r?\n([\s\S]*?)\r?\nendstream/g)].map((m) => {
    const body = Buffer.from(m[1]!, "latin1")
    try {
      return inflateSync(body).toString("latin1")
    } catch {
      return body.toString("latin1")
    }
  })
  const texts: Array<string> = []
  for (const s of streams) {
    for (const op of s.matchAll(/\[([^\]]*)\]\s*TJ|<([0-9a-fA-F]*)>\s*Tj/g)) {
      const hex = op[1] !== undefined ? [...op[1].matchAll(/<([0-9a-fA-F]*)>/g)].map((h) => h[1]).join("") : op[2]!
      texts.push(new TextDecoder("windows-1252").decode(Buffer.from(hex, "hex")))
    }
  }
  return texts
}
