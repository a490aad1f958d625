// Package minheap is a binary min-heap over a slice of a concrete type, as
// the operators keep their queues of due times: typed, so that a push or
// pop allocates nothing (container/heap boxes every element in an
// interface).
package minheap

// Ordered is an element that orders itself before another.
type Ordered[T any] interface {
	Less(T) bool
}

// Push adds e to heap h and returns the heap.
func Push[T Ordered[T]](h []T, e T) []T {
	h = append(h, e)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].Less(h[p]) {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

// Pop removes the least element of the non-empty heap h and returns it
// and the heap. The vacated slot is zeroed (it may hold references).
func Pop[T Ordered[T]](h []T) (T, []T) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	var zero T
	h[n] = zero
	h = h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h[c+1].Less(h[c]) {
			c++
		}
		if !h[c].Less(h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	return top, h
}
