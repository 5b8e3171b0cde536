package kvstore

// The values of Spec.Align.
const (
	// AlignAnchor counts an interval from Spec.Anchor, the time of the
	// first write unless given (Quartz, the reflow seed): the default. An
	// every spec written without align and anchor gets align "anchor"
	// and the time of its first write, to the second; re-registering the
	// same interval keeps them (docs/records.md).
	AlignAnchor = "anchor"
	// AlignEpoch counts an interval from the Unix epoch plus Spec.Phase
	// (Temporal).
	AlignEpoch = "epoch"
)
