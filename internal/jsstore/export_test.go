package jsstore

// ShardsRead is how many shards' lists r has read (or begun to).
func (r *EndedReader) ShardsRead() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.lists)
}

// DeliveryOK reports whether deliveryOf reads reply.
func DeliveryOK(reply string) bool {
	_, ok := deliveryOf(reply)
	return ok
}
