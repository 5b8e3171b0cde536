package kvstore

// DecodeStateFast is decodeStateFast, for the external tests.
var DecodeStateFast = decodeStateFast

// DecodeSpecFast is decodeSpecFast, for the external tests.
var DecodeSpecFast = decodeSpecFast

// DecodeSpecSlow is DecodeSpec without its fast path.
var DecodeSpecSlow = decodeSpecStrict
