/** Guest names for generated bookings. */
export const FIRST_NAMES = ["Anna", "Lars", "Sofia", "Ola", "Emma", "Noah", "Ingrid", "Mateo", "Yuki", "Aisha", "Liam", "Chloé",
  "Kari", "João", "Maria", "Jonas", "Elif", "Priya", "Tomás", "Freya", "Hiroshi", "Zanele", "Nora", "Luca"]
export const LAST_NAMES = ["Berg", "Hansen", "Silva", "García", "Müller", "Smith", "Tanaka", "Kowalski", "Johansson", "Dubois",
  "Rossi", "Nguyen", "Olsen", "Costa", "Patel", "O'Brien", "Novak", "Lindqvist", "Santos", "Kim"]
