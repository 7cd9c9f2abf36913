/**
 * Catalogue content of the demo tours, by tour title: English on the tour, Norwegian bokmål for the
 * tours sold on fjordexplorer.no, Portuguese for the Lisbon ones. Facts of the tours linked to the
 * Bókun sandbox (duration, priced per booking, start times, rating, rates and pricing categories in
 * the same order) follow the sandbox demo products (src/sandbox/bokun/demo.ts); their ids are
 * replaced with the sandbox's when the demo links the booking system (src/demo/bookingSystem.ts),
 * and the season refresh at start then takes those facts from the sandbox (src/catalogue/TourSeason.ts).
 * Photos are picsum.photos URLs with a fixed seed, so a browser shows the same picture every time.
 */
import type { TourContent } from "./tourContent.js"

const photos = (slug: string, count: number) =>
  Array.from({ length: count }, (_, i) => `https://picsum.photos/seed/${slug}-${i + 1}/1200/800`)

/** Bókun sandbox demo categories ("Adult" default 16+, "Child" 4-15). */
const ADULT_CHILD = [
  { id: "adult", title: "Adult", isDefault: true, minAge: 16 },
  { id: "child", title: "Child", minAge: 4, maxAge: 15 }
] as const

const NB_ADULT_CHILD = { adult: "Voksen", child: "Barn" }
const PT_ADULT_CHILD = { adult: "Adulto", child: "Criança" }

/** The one rate of a tour sold at a single price. */
const STANDARD_RATE = [{ id: "standard", title: "Standard", description: null }]
const NB_STANDARD_RATE = { standard: { title: "Standard" } }

/** Free cancellation up to `hours` before departure, and its title in each language. */
const freeCancellation = (hours: number) => ({
  title: `Free cancellation up to ${hours} hours before departure`,
  freeHours: hours
})
const FREE_CANCELLATION_TITLE = {
  nb: (hours: number) => `Gratis avbestilling inntil ${hours} timer før avgang`,
  pt: (hours: number) => `Cancelamento gratuito até ${hours} horas antes da partida`
}

/** Demo content by tour title; `linkedProducts[].tourId` holds a demo tour's title, resolved by the seed. */
export const DEMO_CATALOGUE: Readonly<Record<string, TourContent>> = {
  "Oslofjord Sightseeing Cruise": {
    excerpt: "Three hours among the islands, forts and summer houses of the inner Oslofjord, with a live guide.",
    durationMinutes: 180,
    languages: ["en", "nb", "de"],
    rating: { average: 4.7, count: 1284 },
    meetingPoint: {
      name: "City Hall Pier 3 (Rådhusbrygge 3)",
      address: "Rådhusplassen, 0160 Oslo",
      lat: 59.9107,
      lng: 10.7316
    },
    cancellation: freeCancellation(24),
    minAge: null,
    difficulty: "very_easy",
    departureTimes: ["09:00", "12:30", "16:00"],
    descriptionHtml:
      "<p>Leave the City Hall pier on a quiet electric boat and glide past <strong>Akershus Fortress</strong>, " +
      "the Opera House and the islands of the inner fjord.</p><h3>On the way</h3><ul><li>Hovedøya and its monastery ruins</li>" +
      "<li>The summer houses of Bygdøy</li><li>Seals on the skerries in early summer</li></ul>" +
      "<p>See the <a href=\"https://www.visitoslo.com/en/\" target=\"_blank\">Visit Oslo guide</a> for more to do after the cruise.</p>",
    includedHtml: "<ul><li>Live guide in English and Norwegian</li><li>Blankets on the open deck</li></ul>",
    excludedHtml: "<p>Food and drinks (the on-board kiosk takes cards).</p>",
    inclusions: ["Live guide", "Blankets on deck", "Toilets on board"],
    exclusions: ["Food and drinks", "Hotel pickup"],
    highlights: ["Akershus Fortress from the water", "Quiet electric boat", "Islands of the inner Oslofjord"],
    knowBefore: ["Be at the pier 15 minutes before departure", "Wheelchair accessible", "Dress for wind on deck"],
    photos: photos("oslofjord", 4),
    pricingCategories: ADULT_CHILD,
    rates: [
      { id: "standard", title: "Standard", description: null },
      { id: "lunch", title: "Lunch included", description: "Shrimp sandwich and a soft drink served on board." }
    ],
    linkedProducts: [{
      label: "Paddle it yourself: Fjord & Fortress Kayak",
      language: null,
      tourId: "Fjord & Fortress Kayak"
    }],
    translations: {
      nb: {
        title: "Sightseeing på Oslofjorden",
        excerpt: "Tre timer blant øyer, festninger og sommerhus i indre Oslofjord, med guide om bord.",
        descriptionHtml:
          "<p>Seil fra Rådhusbrygga med en stille elbåt forbi <strong>Akershus festning</strong>, Operaen og øyene i " +
          "indre Oslofjord.</p><h3>Underveis</h3><ul><li>Hovedøya og klosterruinene</li><li>Sommerhusene på Bygdøy</li>" +
          "<li>Sel på skjærene tidlig på sommeren</li></ul>",
        includedHtml: "<ul><li>Guide på engelsk og norsk</li><li>Pledd på dekk</li></ul>",
        excludedHtml: "<p>Mat og drikke (kiosken om bord tar kort).</p>",
        inclusions: ["Guide", "Pledd på dekk", "Toalett om bord"],
        exclusions: ["Mat og drikke", "Henting på hotell"],
        highlights: ["Akershus festning fra sjøen", "Stille elbåt", "Øyene i indre Oslofjord"],
        knowBefore: [
          "Møt opp på brygga 15 minutter før avgang",
          "Tilgjengelig med rullestol",
          "Kle deg for vind på dekk"
        ],
        meetingPointName: "Rådhusbrygge 3",
        cancellationTitle: FREE_CANCELLATION_TITLE.nb(24),
        pricingCategories: NB_ADULT_CHILD,
        rates: {
          standard: { title: "Standard" },
          lunch: { title: "Med lunsj", description: "Rekesmørbrød og mineralvann servert om bord." }
        }
      }
    }
  },
  "Fjord & Fortress Kayak": {
    excerpt: "Paddle a sea kayak from Bygdøy to the old fortress islands, with a break for coffee on a beach.",
    durationMinutes: 240,
    languages: ["en", "nb"],
    rating: null,
    meetingPoint: { name: "Kayak base at Huk, Bygdøy", address: "Huk aveny, 0287 Oslo", lat: 59.8966, lng: 10.6741 },
    cancellation: freeCancellation(48),
    minAge: 12,
    difficulty: "moderate",
    departureTimes: ["14:00", "09:00"],
    descriptionHtml:
      "<p>A guided paddle for beginners and improvers. After a safety briefing we cross to the islands where " +
      "the old <em>coastal fortresses</em> guarded the way to Oslo.</p><p>Groups are at most 10 guests per guide.</p>",
    includedHtml:
      "<ul><li>Sea kayak, paddle and spray deck</li><li>Life jacket and dry bag</li><li>Coffee and a cinnamon bun</li></ul>",
    excludedHtml: "<p>Transport to Bygdøy (bus 30 stops at Huk).</p>",
    inclusions: ["Kayak and safety gear", "Certified guide", "Coffee and cinnamon bun"],
    exclusions: ["Transport to Bygdøy", "Wetsuit (bring warm layers)"],
    highlights: ["Fortress islands seen from the water", "Small groups", "No experience needed"],
    knowBefore: ["You must be able to swim", "Minimum age 12, under 16 with an adult", "Bring a change of clothes"],
    photos: photos("fortress-kayak", 3),
    pricingCategories: [{ id: "adult", title: "Adult", isDefault: true, minAge: 12 }],
    rates: STANDARD_RATE,
    translations: {
      nb: {
        title: "Kajakk til festningsøyene",
        excerpt: "Padle havkajakk fra Bygdøy til de gamle festningsøyene, med kaffepause på en strand.",
        descriptionHtml:
          "<p>En guidet tur for nybegynnere og viderekomne. Etter sikkerhetsgjennomgang padler vi over til øyene der " +
          "de gamle <em>kystfestningene</em> voktet innseilingen til Oslo.</p><p>Høyst 10 gjester per guide.</p>",
        includedHtml:
          "<ul><li>Havkajakk, åre og spruttrekk</li><li>Redningsvest og vanntett pose</li><li>Kaffe og kanelbolle</li></ul>",
        excludedHtml: "<p>Transport til Bygdøy (buss 30 stopper på Huk).</p>",
        inclusions: ["Kajakk og sikkerhetsutstyr", "Sertifisert guide", "Kaffe og kanelbolle"],
        exclusions: ["Transport til Bygdøy", "Våtdrakt (ta med varme klær)"],
        highlights: ["Festningsøyene sett fra sjøen", "Små grupper", "Ingen erfaring nødvendig"],
        knowBefore: ["Du må kunne svømme", "Nedre aldersgrense 12 år, under 16 med voksen", "Ta med skift"],
        meetingPointName: "Kajakkbasen på Huk, Bygdøy",
        cancellationTitle: FREE_CANCELLATION_TITLE.nb(48),
        pricingCategories: { adult: "Voksen" },
        rates: NB_STANDARD_RATE
      }
    }
  },
  "Whale Safari from Tromsø": {
    excerpt: "A fast RIB trip to the fjords north of Tromsø where humpbacks and orcas feed in winter.",
    durationMinutes: 120,
    languages: ["en", "nb"],
    rating: { average: 4.8, count: 532 },
    meetingPoint: {
      name: "Prostneset quay, gate B",
      address: "Samuel Arnesens gate 5, 9008 Tromsø",
      lat: 69.6484,
      lng: 18.9603
    },
    cancellation: freeCancellation(24),
    minAge: 8,
    difficulty: "challenging",
    departureTimes: ["10:00", "14:00"],
    descriptionHtml:
      "<p>Our RIB boats reach the whales' feeding grounds in under an hour. Guides follow the animals at a " +
      "respectful distance and tell you what you are seeing.</p><h3>Season</h3><p>Humpback whales and orcas " +
      "are here from <strong>November to January</strong>.</p>",
    includedHtml: "<ul><li>Full-body flotation suit, gloves and goggles</li><li>Hot drink after the trip</li></ul>",
    excludedHtml: "<p>Hotel pickup.</p>",
    inclusions: ["Flotation suit, gloves and goggles", "Hot drink", "Guide"],
    exclusions: ["Hotel pickup", "Food"],
    highlights: ["Humpbacks and orcas", "Fast RIB boats", "Small groups of 12"],
    knowBefore: ["Not suitable for pregnant guests or back problems", "Sightings are likely, not guaranteed"],
    photos: photos("whale-safari", 3),
    pricingCategories: ADULT_CHILD,
    rates: STANDARD_RATE,
    translations: {
      nb: {
        title: "Hvalsafari fra Tromsø",
        excerpt: "En rask RIB-tur til fjordene nord for Tromsø der knølhval og spekkhogger beiter om vinteren.",
        descriptionHtml:
          "<p>RIB-båtene våre når hvalenes beiteområder på under en time. Guidene følger dyrene på respektfull " +
          "avstand og forteller hva du ser.</p><h3>Sesong</h3><p>Knølhval og spekkhogger er her fra " +
          "<strong>november til januar</strong>.</p>",
        includedHtml: "<ul><li>Flytedress, hansker og briller</li><li>Varm drikke etter turen</li></ul>",
        excludedHtml: "<p>Henting på hotell.</p>",
        inclusions: ["Flytedress, hansker og briller", "Varm drikke", "Guide"],
        exclusions: ["Henting på hotell", "Mat"],
        highlights: ["Knølhval og spekkhogger", "Raske RIB-båter", "Små grupper på 12"],
        knowBefore: ["Ikke egnet for gravide eller ved ryggplager", "Vi ser som regel hval, men det er ingen garanti"],
        meetingPointName: "Prostneset kai, port B",
        cancellationTitle: FREE_CANCELLATION_TITLE.nb(24),
        pricingCategories: NB_ADULT_CHILD,
        rates: NB_STANDARD_RATE
      }
    }
  },
  "Northern Lights Chase": {
    excerpt: "A private minibus for your group that drives wherever the sky is clear, up to the Finnish border.",
    durationMinutes: 150,
    pricedPerBooking: true,
    languages: ["en", "nb", "es"],
    rating: null,
    meetingPoint: {
      name: "Outside Radisson Blu Hotel Tromsø",
      address: "Sjøgata 7, 9008 Tromsø",
      lat: 69.6496,
      lng: 18.958
    },
    cancellation: freeCancellation(72),
    minAge: null,
    difficulty: "easy",
    departureTimes: ["19:30"],
    descriptionHtml:
      "<p>Your own guide and minibus for the evening. We check the forecasts and drive to where the clouds " +
      "break, with a campfire, tripods and photos of your group under the aurora.</p>",
    includedHtml:
      "<ul><li>Private minibus and guide for up to 8 guests</li><li>Thermal suits and boots</li><li>Campfire snacks</li></ul>",
    excludedHtml: "",
    inclusions: ["Private minibus and guide", "Thermal suits and boots", "Photos of your group"],
    exclusions: ["Dinner"],
    highlights: ["Private: only your group", "We chase clear skies", "Aurora photos included"],
    knowBefore: ["The price is for the whole group of up to 8", "The aurora is never guaranteed"],
    photos: photos("northern-lights", 3),
    pricingCategories: [{ id: "guest", title: "Guest", isDefault: true }],
    rates: [{ id: "private", title: "Whole group (private)", description: "Up to 8 guests in one minibus." }],
    linkedProducts: [{ label: "Caza de auroras en español", language: "es", tourId: null }],
    translations: {
      nb: {
        title: "Nordlysjakt",
        excerpt: "En privat minibuss for gruppen din som kjører dit himmelen er klar, helt til finskegrensen.",
        descriptionHtml:
          "<p>Din egen guide og minibuss for kvelden. Vi følger værmeldingene og kjører dit skyene sprekker opp, " +
          "med bål, stativ og bilder av gruppen under nordlyset.</p>",
        includedHtml:
          "<ul><li>Privat minibuss og guide for opptil 8 gjester</li><li>Termodresser og støvler</li><li>Bålmat</li></ul>",
        inclusions: ["Privat minibuss og guide", "Termodresser og støvler", "Bilder av gruppen"],
        exclusions: ["Middag"],
        highlights: ["Privat: bare gruppen din", "Vi jager klar himmel", "Nordlysbilder inkludert"],
        knowBefore: ["Prisen gjelder hele gruppen på opptil 8", "Nordlys kan aldri garanteres"],
        meetingPointName: "Utenfor Radisson Blu Hotel Tromsø",
        cancellationTitle: FREE_CANCELLATION_TITLE.nb(72),
        pricingCategories: { guest: "Gjest" },
        rates: { private: { title: "Hele gruppen (privat)", description: "Opptil 8 gjester i én minibuss." } }
      }
    }
  },
  "Tagus Sunset Sail": {
    excerpt: "Your own sailing yacht on the Tagus at sunset, past Belém Tower and under the 25 de Abril bridge.",
    durationMinutes: 150,
    pricedPerBooking: true,
    languages: ["en", "pt", "es"],
    rating: null,
    meetingPoint: {
      name: "Doca de Santo Amaro, pontoon B",
      address: "Doca de Santo Amaro, 1350-353 Lisboa",
      lat: 38.7031,
      lng: -9.1748
    },
    cancellation: freeCancellation(48),
    minAge: null,
    difficulty: "very_easy",
    departureTimes: ["19:30"],
    descriptionHtml:
      "<p>Sail the river at golden hour with a skipper for your group only. Take the helm if you like, or " +
      "relax on deck with a glass of <em>vinho verde</em>.</p>",
    includedHtml:
      "<ul><li>Private yacht and skipper for up to 8 guests</li><li>A bottle of vinho verde and snacks</li></ul>",
    excludedHtml: "<p>Transfers to the marina.</p>",
    inclusions: ["Private yacht and skipper", "Vinho verde and snacks"],
    exclusions: ["Transfers"],
    highlights: ["Belém Tower at sunset", "Under the 25 de Abril bridge", "Only your group on board"],
    knowBefore: ["The price is for the whole boat, up to 8 guests", "Soft-soled shoes on deck"],
    photos: photos("tagus-sunset", 3),
    pricingCategories: [{ id: "guest", title: "Guest", isDefault: true }],
    rates: [{ id: "whole-boat", title: "Whole boat", description: "Up to 8 guests." }],
    translations: {
      pt: {
        title: "Pôr do sol à vela no Tejo",
        excerpt: "O seu próprio veleiro no Tejo ao pôr do sol, pela Torre de Belém e sob a ponte 25 de Abril.",
        descriptionHtml:
          "<p>Navegue no rio à hora dourada com um skipper só para o seu grupo. Pegue no leme se quiser, ou " +
          "relaxe no convés com um copo de <em>vinho verde</em>.</p>",
        includedHtml:
          "<ul><li>Veleiro privado e skipper para até 8 pessoas</li><li>Uma garrafa de vinho verde e petiscos</li></ul>",
        excludedHtml: "<p>Transferes para a marina.</p>",
        inclusions: ["Veleiro privado e skipper", "Vinho verde e petiscos"],
        exclusions: ["Transferes"],
        highlights: ["Torre de Belém ao pôr do sol", "Sob a ponte 25 de Abril", "Só o seu grupo a bordo"],
        knowBefore: ["O preço é para o barco inteiro, até 8 pessoas", "Sapatos de sola macia no convés"],
        meetingPointName: "Doca de Santo Amaro, pontão B",
        cancellationTitle: FREE_CANCELLATION_TITLE.pt(48),
        pricingCategories: { guest: "Convidado" },
        rates: { "whole-boat": { title: "Barco inteiro", description: "Até 8 pessoas." } }
      }
    }
  },
  "Lisbon Dolphin Watch": {
    excerpt: "Two hours on a fast boat from Belém to the mouth of the Tagus, where common dolphins hunt.",
    durationMinutes: 120,
    languages: ["en", "pt"],
    rating: { average: 4.8, count: 532 },
    meetingPoint: {
      name: "Doca de Belém, next to the Padrão dos Descobrimentos",
      address: "Av. Brasília, 1400-038 Lisboa",
      lat: 38.6935,
      lng: -9.2056
    },
    cancellation: freeCancellation(24),
    minAge: 4,
    difficulty: "easy",
    departureTimes: ["10:00", "14:00"],
    descriptionHtml:
      "<p>A marine biologist guides every trip. We look for the <strong>common dolphins</strong> that follow " +
      "the sardines into the estuary, and sometimes bottlenose dolphins and sunfish.</p>",
    includedHtml: "<ul><li>Marine biologist guide</li><li>Waterproof jackets</li></ul>",
    excludedHtml: "<p>Food and drinks.</p>",
    inclusions: ["Marine biologist guide", "Waterproof jackets", "Free second trip if we see no dolphins"],
    exclusions: ["Food and drinks", "Hotel pickup"],
    highlights: ["Dolphins in the Tagus estuary", "Sights of Belém from the river"],
    knowBefore: ["Not suitable for guests with back problems", "Children under 16 with an adult"],
    photos: photos("dolphin-watch", 3),
    pricingCategories: ADULT_CHILD,
    rates: STANDARD_RATE,
    linkedProducts: [{ label: "Sunset on the river: Tagus Sunset Sail", language: null, tourId: "Tagus Sunset Sail" }],
    translations: {
      pt: {
        title: "Observação de golfinhos em Lisboa",
        excerpt: "Duas horas num barco rápido de Belém até à foz do Tejo, onde caçam os golfinhos-comuns.",
        descriptionHtml:
          "<p>Um biólogo marinho acompanha todas as saídas. Procuramos os <strong>golfinhos-comuns</strong> que " +
          "seguem as sardinhas até ao estuário e, por vezes, roazes e peixes-lua.</p>",
        includedHtml: "<ul><li>Guia biólogo marinho</li><li>Casacos impermeáveis</li></ul>",
        excludedHtml: "<p>Comida e bebidas.</p>",
        inclusions: ["Guia biólogo marinho", "Casacos impermeáveis", "Segunda saída grátis se não virmos golfinhos"],
        exclusions: ["Comida e bebidas", "Recolha no hotel"],
        highlights: ["Golfinhos no estuário do Tejo", "Belém vista do rio"],
        knowBefore: ["Não recomendado a pessoas com problemas de costas", "Menores de 16 acompanhados por um adulto"],
        meetingPointName: "Doca de Belém, junto ao Padrão dos Descobrimentos",
        cancellationTitle: FREE_CANCELLATION_TITLE.pt(24),
        pricingCategories: PT_ADULT_CHILD,
        rates: { standard: { title: "Normal" } }
      }
    }
  },
  "Douro Day Trip (draft)": {
    excerpt: "A full day in the Douro valley with two quintas and lunch. Not on sale yet.",
    durationMinutes: 660,
    languages: ["en", "pt"],
    meetingPoint: {
      name: "Lisboa Oriente station, main entrance",
      address: "Av. Dom João II, 1990-233 Lisboa",
      lat: 38.7679,
      lng: -9.0992
    },
    departureTimes: ["07:00"],
    descriptionHtml: "<p>Work in progress.</p>",
    photos: photos("douro", 1),
    pricingCategories: [{ id: "adult", title: "Adult", isDefault: true, minAge: 18 }],
    rates: STANDARD_RATE
  }
}
