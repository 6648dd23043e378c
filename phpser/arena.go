package phpser

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// Unmarshal's tree is scaffolding: once mapped into the caller's value it is garbage,
// unless the value keeps a piece of it. When the target's type cannot keep any (see
// keepsTree), Unmarshal decodes into entries the decoder kept from an earlier call and
// clears them afterwards, instead of allocating them anew: the tree is most of the
// bytes an Unmarshal allocates, and so most of the garbage collector's work for it.
// Strings are not part of it: they point into Unmarshal's own copy of the input, which
// the mapped value may keep.

// maxKeptEntries bounds the entries one pooled decoder keeps between calls (about
// 4.5 MB): a huge payload gets fresh memory, which the collector takes back.
const maxKeptEntries = 1 << 16

var keepsCache sync.Map // reflect.Type -> bool

// keepsTree reports whether mapping into a value of type t may leave a pointer into
// the decoded tree in it: a Value, *Value or Entry anywhere inside, or an Unmarshaler,
// which is handed the node and may keep it. `any` does not (the forms of Value.Decode's
// any are built anew), nor do time.Time, strings or numbers.
func keepsTree(t reflect.Type) bool {
	if k, ok := keepsCache.Load(t); ok {
		return k.(bool)
	}
	k := keepsTreeWalk(t, map[reflect.Type]bool{})
	keepsCache.Store(t, k)
	return k
}

func keepsTreeWalk(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // a recursive type: its other parts decide
	}
	seen[t] = true
	if t == valueType || t == valuePtrType || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return keepsTreeWalk(t.Elem(), seen)
	case reflect.Map:
		return keepsTreeWalk(t.Key(), seen) || keepsTreeWalk(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if keepsTreeWalk(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// unmarshalReusing is Unmarshal into target (a non-nil pointer to a type that keeps no
// part of the tree) with the tree in a pooled decoder's kept entries.
func (dc Decoder) unmarshalReusing(data []byte, target any) error {
	buf := make([]byte, len(data))
	copy(buf, data)
	d := decoderPool.Get().(*decoder)
	d.reuse = true
	root, err := dc.decodeWith(d, unsafe.String(&buf[0], len(buf)))
	if err == nil {
		err = root.Decode(target)
	}
	d.recycle()
	decoderPool.Put(d)
	return err
}

// allocKept is alloc from the entries kept by earlier calls, keeping what it has to
// allocate (up to maxKeptEntries).
func (d *decoder) allocKept(n int) []Entry {
	d.keepLen()
	for d.keptUsed < len(d.kept) {
		c := d.kept[d.keptUsed]
		d.keptUsed++
		if cap(c) >= n {
			d.chunk = c[:0]
			d.allocated += cap(c)
			return d.carve(n)
		}
	}
	d.chunk = d.newChunk(n)
	if size := cap(d.chunk); d.keptTotal+size <= maxKeptEntries {
		d.kept = append(d.kept, d.chunk)
		d.keptTotal += size
		d.keptUsed = len(d.kept)
	}
	return d.carve(n)
}

// keepLen notes how much of the current chunk, if it is the last kept one in use, was
// used: recycle clears that much.
func (d *decoder) keepLen() {
	if d.keptUsed > 0 && cap(d.chunk) > 0 && cap(d.kept[d.keptUsed-1]) == cap(d.chunk) &&
		unsafe.SliceData(d.kept[d.keptUsed-1]) == unsafe.SliceData(d.chunk) {
		d.kept[d.keptUsed-1] = d.chunk
	}
}

// recycle clears the kept entries the last decode used, so that they hold no strings
// for the collector and come back zeroed as new ones would, and leaves reuse mode.
func (d *decoder) recycle() {
	for i, c := range d.kept[:d.keptUsed] {
		clear(c)
		d.kept[i] = c[:0]
	}
	d.keptUsed, d.reuse = 0, false
}

// Small targets of one Unmarshal come from one allocation, not one each.

// stringSlab is how many strings newStrings allocates at once: the *string properties
// and string lists of a Laravel command (connection, queue, relations, tags, chained)
// fit in one.
const stringSlab = 16

// newStrings returns n zeroed strings carved from the call's slab (a slice whose
// capacity is n, so that appending to it cannot reach its neighbours), or a slice of
// their own when n is large.
func (m *mapper) newStrings(n int) []string {
	if n > stringSlab/2 {
		return make([]string, n)
	}
	if cap(m.strs)-len(m.strs) < n {
		m.strs = make([]string, 0, stringSlab)
	}
	l := len(m.strs)
	m.strs = m.strs[:l+n]
	return m.strs[l : l+n : l+n]
}

// zeroLen is what empty slices point at.
var zeroLen [0]byte

// sliceHeader is a slice's layout, written through a typed pointer so that the
// compiler keeps the write barrier on data.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// The arena: the entries of all the containers of a tree are carved from a few
// chunks, sized from the input (see decodeWith), instead of one allocation each.

// alloc carves n entries out of the arena. The capacity is clipped so that appending
// to one container's entries can never overwrite its neighbour's.
func (d *decoder) alloc(n int) []Entry {
	if n > cap(d.chunk)-len(d.chunk) {
		if d.reuse {
			return d.allocKept(n)
		}
		d.chunk = d.newChunk(n)
	}
	return d.carve(n)
}

// newChunk allocates the next chunk for a request of n entries: the first holds
// d.chunkN, a later one what is left of estTotal if that covers n, else twice what
// the previous fallback took, so that any input takes few chunks. It is as large as
// the size class the allocator rounds it up to anyway.
func (d *decoder) newChunk(n int) []Entry {
	size := max(n, d.chunkN)
	if d.allocated > 0 {
		// What the current chunk has left is too small for n and stays unused.
		used := d.allocated - (cap(d.chunk) - len(d.chunk))
		if d.estTotal < 0 {
			d.estTotal = (d.semis + strings.Count(d.s, "{") + 1) / 2
		}
		if rest := d.estTotal - used; rest >= n && rest <= 1<<16 {
			size = rest
		} else {
			d.chunkN = min(2*d.chunkN, 1<<16)
			size = max(n, d.chunkN)
		}
	}
	c := slices.Grow([]Entry(nil), size)
	d.allocated += cap(c)
	return c
}

// carve takes n entries from the current chunk, which has room for them.
func (d *decoder) carve(n int) []Entry {
	l := len(d.chunk)
	d.chunk = d.chunk[:l+n]
	return d.chunk[l : l+n : l+n]
}
