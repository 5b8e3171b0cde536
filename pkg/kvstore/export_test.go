package kvstore

// DecodeStateFast is decodeStateFast, for the external tests.
var DecodeStateFast = decodeStateFast
