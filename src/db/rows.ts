/** Row and request schemas several repositories share (each repository's own rows stay beside its SQL). */
import { Schema } from "effect"

/** A row read only for its id: the row a statement found, claimed or wrote (`RETURNING id`). */
export const IdRow = Schema.Struct({ id: Schema.String })

/** A record a caller names, looked up only among the caller's operators (anything else is not found). */
export const IdAmongOperators = Schema.Struct({ id: Schema.String, operatorIds: Schema.Array(Schema.String) })
