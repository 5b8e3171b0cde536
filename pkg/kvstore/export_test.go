package kvstore

// DecodeStateFast is decodeStateFast, for the external tests.
var DecodeStateFast = decodeStateFast

// DecodeSpecFast is decodeSpecFast, for the external tests.
var DecodeSpecFast = decodeSpecFast

// AppendJSON is State.appendJSON, for the external tests: the encoder
// appends to the buffer it is given.
var AppendJSON = State.appendJSON

// DecodeSpecSlow is DecodeSpec without its fast path.
var DecodeSpecSlow = decodeSpecStrict

// UnescapeTimerID is unescapeTimerID, for the external tests.
var UnescapeTimerID = unescapeTimerID
