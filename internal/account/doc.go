// Package account lists the occurrences a schedule owes and what became
// of each: fired (the fire stream's message), or not fired with a reason
// (the ledger's entry, or the calendar's rule), or unaccounted
// (docs/protocol.md, "Every slot accounted for"). Its reference model
// (Recurrence.Walk) is written plainly from the documented rules, apart
// from the engine's plan, so that the two check each other.
package account
