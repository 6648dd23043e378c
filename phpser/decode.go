package phpser

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// DefaultMaxDepth is how deeply arrays and objects may nest unless Decoder.MaxDepth
// says otherwise: PHP's own default unserialize_max_depth, so that every payload PHP's
// unserialize() accepts decodes here too, and every payload it refuses for its depth is
// refused here. Queue commands rarely go past 10.
//
// PHP counts the levels as its var_unserializer does (checked with PHP 8.2): every
// object is a level, and so is every array with at least one element; an empty array
// (a:0:{}), an enum, a C: object's data and a reference are not. 4096 levels nested
// that way are accepted, 4097 are not.
const DefaultMaxDepth = 4096

// MaxDepthCeiling caps Decoder.MaxDepth: decoding recurses once per level, and a
// goroutine's stack must stay far from Go's 1 GB limit whatever the caller asks for.
const MaxDepthCeiling = 1 << 16

// directDepth is the nesting below which containers are decoded straight into the arena
// (see directEntries). Deeper containers go through the stack, which holds only
// entries actually read, so that a crafted run of 4096 nested containers, each
// claiming more elements than it has, cannot make the arena allocate for all of them.
const directDepth = 512

// minEntryLen is the fewest bytes an array element or property can take: "i:0;N;".
// A count that cannot fit in what is left of the input is rejected up front.
const minEntryLen = 6

// Decoder decodes PHP serialize() output with options. The zero Decoder uses the
// defaults; Decode and Unmarshal use the zero Decoder.
type Decoder struct {
	// MaxDepth is the deepest nesting of arrays and objects accepted, counted the way
	// PHP's unserialize_max_depth counts it: objects and non-empty arrays are levels,
	// empty arrays are not. Default DefaultMaxDepth (4096, PHP's default); values
	// above MaxDepthCeiling (65536) count as MaxDepthCeiling.
	MaxDepth int
}

// SyntaxError reports input that is not valid PHP serialize() output.
type SyntaxError struct {
	Offset int    // byte offset in the input where the problem was found
	Msg    string // what was expected or wrong, e.g. "expected ';'"
}

func (e *SyntaxError) Error() string {
	return "phpser: " + e.Msg + " at offset " + strconv.Itoa(e.Offset)
}

// Decode parses one serialized value. See Decoder.Decode.
func Decode(data []byte) (*Value, error) { return Decoder{}.Decode(data) }

// Decode parses one serialized value, which must span all of data. It keeps one copy
// of data: strings, keys and class names in the tree are slices of that copy (which is
// never modified), so the caller may reuse data afterwards.
//
// Every form PHP 8 writes is accepted: N b i d s a O C E r R. References are resolved
// (Value.Target); a cycle is just a pointer back up the tree. The data of a C: value is
// opaque and counts as one value for r:/R: numbering; a Serializable class whose own
// unserialize() reads nested values from it would make PHP number later values
// differently (no class in Laravel's payloads does that).
func (dc Decoder) Decode(data []byte) (*Value, error) {
	if len(data) == 0 {
		return nil, &SyntaxError{Offset: 0, Msg: "unexpected end of input, expected a value"}
	}
	buf := make([]byte, len(data))
	copy(buf, data)
	// buf is private to this call and never written again, so viewing it as a string
	// is safe and lets every token be a substring without further copies.
	return dc.decode(unsafe.String(&buf[0], len(buf)))
}

// DecodeString is Decode for input that is already a string; it does not copy s.
func (dc Decoder) DecodeString(s string) (*Value, error) {
	if len(s) == 0 {
		return nil, &SyntaxError{Offset: 0, Msg: "unexpected end of input, expected a value"}
	}
	return dc.decode(s)
}

// DecodeString parses one serialized value held in a string without copying it.
func DecodeString(s string) (*Value, error) { return Decoder{}.DecodeString(s) }

type decoder struct {
	s        string
	pos      int
	maxDepth int
	slots    int // values numbered so far, as PHP's var_hash numbers them for r:/R:
	refs     int
	stack    []Entry // entries of the containers being decoded, innermost on top
	hw       int     // high-water mark of stack, to clear it before pooling
	chunk    []Entry // arena the finished containers' entries are carved from
	chunkN   int     // size of the next chunk, when estTotal does not tell it
	// estTotal is the number of entries the input's ';' and '{' suggest, allocated the
	// capacity of the chunks taken so far.
	estTotal, allocated int
	semis               int // ';' in the input

	// With reuse (Unmarshal, see arena.go) the arena is carved from kept, chunks kept
	// from earlier calls: keptUsed of them are in use, keptTotal entries in all.
	reuse     bool
	kept      [][]Entry
	keptUsed  int
	keptTotal int
}

var decoderPool = sync.Pool{New: func() any { return new(decoder) }}

func (dc Decoder) decode(s string) (*Value, error) {
	d := decoderPool.Get().(*decoder)
	v, err := dc.decodeWith(d, s)
	decoderPool.Put(d)
	return v, err
}

// decodeWith decodes s with d, leaving d reset for reuse except for d.slots.
func (dc Decoder) decodeWith(d *decoder, s string) (*Value, error) {
	d.s, d.pos, d.slots, d.refs, d.hw = s, 0, 0, 0, 0
	d.maxDepth = dc.MaxDepth
	if d.maxDepth <= 0 {
		d.maxDepth = DefaultMaxDepth
	}
	d.maxDepth = min(d.maxDepth, MaxDepthCeiling)
	// Every key ends in ';', and so does every value but a container, which opens with
	// '{' instead: with no ';' or '{' inside strings, (';' + '{' + 1) / 2 is exactly the
	// number of entries (the root's included). The first chunk takes half the ';' count,
	// which leaves out the containers' share but also half of the ';' inside strings,
	// so that a payload carrying serialized commands as strings (chained jobs) is not
	// overestimated; when a plain payload outgrows it, the second chunk is sized to the
	// rest of the exact count instead of doubling (see newChunk).
	d.semis = strings.Count(s, ";")
	d.chunkN = min(d.semis/2+1, 4096)
	d.estTotal, d.allocated = -1, 0 // estTotal is counted when the first chunk runs out
	d.chunk = nil
	root := &d.alloc(1)[0].Value
	err := d.value(root, 0)
	if err == nil && d.pos != len(s) {
		err = d.errAt(d.pos, "unexpected data after the value")
	}
	if err == nil && d.refs > 0 {
		err = d.resolve(root)
	}
	if d.reuse {
		d.keepLen()
	}
	d.hw = max(d.hw, len(d.stack))
	clear(d.stack[:d.hw])
	d.stack = d.stack[:0]
	if cap(d.stack) > 1<<16 {
		d.stack = nil
	}
	d.s, d.chunk = "", nil
	if err != nil {
		return nil, err
	}
	return root, nil
}

func (d *decoder) errAt(off int, msg string) error {
	if off >= len(d.s) {
		return &SyntaxError{Offset: len(d.s), Msg: "unexpected end of input, " + msg}
	}
	return &SyntaxError{Offset: off, Msg: msg}
}

// expect reports what should have been at off.
func (d *decoder) expect(off int, what string) error {
	if off >= len(d.s) {
		return &SyntaxError{Offset: len(d.s), Msg: "unexpected end of input, expected " + what}
	}
	return &SyntaxError{Offset: off, Msg: "expected " + what + ", found " + quoteByte(d.s[off])}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f && c != '\'' {
		return "'" + string(rune(c)) + "'"
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

func (d *decoder) value(v *Value, depth int) error {
	s := d.s
	p := d.pos
	if p >= len(s) {
		return d.expect(p, "a value")
	}
	if uint64(p) <= math.MaxUint32 {
		v.off = uint32(p)
		v.flags = flagHasOff
	}
	c := s[p]
	if c != 'R' {
		d.slots++
	}
	if c != 'N' && (p+1 >= len(s) || s[p+1] != ':') {
		if !strings.ContainsRune("bidsaOCErR", rune(c)) {
			return d.errAt(p, "unknown value type "+quoteByte(c))
		}
		return d.expect(p+1, "':'")
	}
	switch c {
	case 'N':
		if p+1 < len(s) && s[p+1] == ';' {
			v.kind = KindNull
			d.pos = p + 2
			return nil
		}
		return d.expect(p+1, "';'")
	case 'b':
		if p+2 >= len(s) || (s[p+2] != '0' && s[p+2] != '1') {
			return d.expect(p+2, "'0' or '1'")
		}
		if p+3 >= len(s) || s[p+3] != ';' {
			return d.expect(p+3, "';'")
		}
		v.kind, v.num = KindBool, int64(s[p+2]-'0')
		d.pos = p + 4
		return nil
	case 'i':
		n, end, err := d.integer(p + 2)
		if err != nil {
			return err
		}
		v.kind, v.num = KindInt, n
		// Keep the spelling only when Encode could not reproduce it (i:+5; i:007;):
		// every string stored here is one more pointer for the GC to trace.
		if t := s[p+2 : end]; t[0] == '+' || (len(t) > 1 && (t[0] == '0' || (t[0] == '-' && t[1] == '0'))) {
			v.str = t
		}
		d.pos = end + 1
		return nil
	case 'd':
		return d.float(v, p+2)
	case 's':
		// The fast path of key, for string values, written out again: as a shared
		// function it is too large to inline, and the call cost more than it saved.
		i := p + 2
		n := 0
		for ; i < len(s) && i < p+8; i++ {
			c := s[i] - '0'
			if c > 9 {
				break
			}
			n = n*10 + int(c)
		}
		if i > p+2 && i+1 < len(s) && s[i] == ':' && s[i+1] == '"' {
			end := i + 2 + n
			if end+1 < len(s) && s[end] == '"' && s[end+1] == ';' {
				v.kind, v.str = KindString, s[i+2:end]
				d.pos = end + 2
				return nil
			}
		}
		str, err := d.quoted(p+2, ';')
		if err != nil {
			return err
		}
		v.kind, v.str = KindString, str
		return nil
	case 'a':
		n, q, err := d.count(p + 2)
		if err != nil {
			return err
		}
		ents, err := d.body(p, p+2, q, n, depth, "array of ", " elements")
		if err != nil {
			return err
		}
		v.kind = KindArray
		v.setEnts(ents)
		return nil
	case 'O':
		class, err := d.className(p + 2)
		if err != nil {
			return err
		}
		q := d.pos
		if q >= len(s) || s[q] != ':' {
			return d.expect(q, "':'")
		}
		cs := q + 1
		n, q, err := d.count(cs)
		if err != nil {
			return err
		}
		ents, err := d.body(p, cs, q, n, depth, "object of ", " properties")
		if err != nil {
			return err
		}
		v.kind, v.str = KindObject, class
		v.setEnts(ents)
		return nil
	case 'C':
		class, err := d.className(p + 2)
		if err != nil {
			return err
		}
		q := d.pos
		if q >= len(s) || s[q] != ':' {
			return d.expect(q, "':'")
		}
		data, err := d.quoted(q+1, '}')
		if err != nil {
			return err
		}
		// Class and data are not adjacent in the input; C: is rare enough that one
		// concatenation is cheaper than a wider Value.
		v.kind, v.str, v.num = KindCustom, class+data, int64(len(class))
		d.slots += nestedSlots(data, d.maxDepth-depth)
		return nil
	case 'E':
		str, err := d.quoted(p+2, ';')
		if err != nil {
			return err
		}
		colon := strings.IndexByte(str, ':')
		if colon < 0 || !validClass(str[:colon]) || !validIdent(str[colon+1:]) {
			return d.errAt(p, "invalid enum name "+strconv.Quote(str)+", want \"Class:Case\"")
		}
		v.kind, v.str = KindEnum, str
		return nil
	case 'r', 'R':
		n, q, err := d.count(p + 2)
		if err != nil {
			return err
		}
		if q >= len(s) || s[q] != ';' {
			return d.expect(q, "';'")
		}
		// PHP numbers values from 1 in stream order; r: takes a number itself, R: does
		// not. Either must point strictly backwards.
		limit := d.slots
		if c == 'r' {
			limit--
		}
		if n < 1 || n > limit {
			return d.errAt(p, string(c)+":"+s[p+2:q]+" refers to no earlier value (valid: 1.."+strconv.Itoa(limit)+")")
		}
		v.kind, v.num = KindRef, int64(n)
		if c == 'R' {
			v.flags |= flagHardRef
		}
		d.refs++
		d.pos = q + 1
		return nil
	}
	return d.errAt(p, "unknown value type "+quoteByte(c))
}

// body reads the ":{...}" of an array or object whose count n was read from s[cs:q]:
// the count must fit in the bytes left (checked before anything is allocated) and the
// nesting stays under the depth limit; p is where the value starts, depth the levels
// around it.
func (d *decoder) body(p, cs, q, n, depth int, what, unit string) ([]Entry, error) {
	s := d.s
	if n > (len(s)-q)/minEntryLen {
		return nil, d.errAt(cs, what+s[cs:q]+unit+" exceeds the "+strconv.Itoa(len(s)-q)+" bytes left")
	}
	if q+1 >= len(s) || s[q] != ':' || s[q+1] != '{' {
		if q < len(s) && s[q] == ':' {
			return nil, d.expect(q+1, "'{'")
		}
		return nil, d.expect(q, "':'")
	}
	// PHP checks its depth before the elements of an object (even an empty one) and
	// of an array that has any; an empty array is never refused.
	if depth >= d.maxDepth && (n > 0 || s[p] == 'O') {
		kind := "array"
		if s[p] == 'O' {
			kind = "object"
		}
		return nil, d.errAt(p, kind+" nested "+strconv.Itoa(depth+1)+
			" levels deep, deeper than the limit of "+strconv.Itoa(d.maxDepth)+" (PHP's unserialize_max_depth)")
	}
	d.pos = q + 2
	return d.entries(n, depth+1)
}

// entries decodes n key/value pairs and the closing '}'. Pairs collect on the shared
// stack and are copied into the arena once the count is proven, so a lying count
// costs nothing.
func (d *decoder) entries(n int, depth int) ([]Entry, error) {
	if n <= directEntries && depth < directDepth {
		return d.directEntries(n, depth)
	}
	base := len(d.stack)
	for i := 0; i < n; i++ {
		var e Entry
		if err := d.key(&e.Key); err != nil {
			return nil, err
		}
		if err := d.value(&e.Value, depth); err != nil {
			return nil, err
		}
		d.stack = append(d.stack, e)
	}
	if d.pos >= len(d.s) || d.s[d.pos] != '}' {
		return nil, d.expect(d.pos, "'}' after "+strconv.Itoa(n)+" elements")
	}
	d.pos++
	if n == 0 {
		return nil, nil
	}
	if l := len(d.stack); l > d.hw {
		d.hw = l
	}
	ents := d.alloc(n)
	copy(ents, d.stack[base:])
	d.stack = d.stack[:base]
	return ents, nil
}

// directEntries is the largest container decoded straight into the arena. Writing in
// place saves two copies of every entry (and their GC write barriers); the limit
// bounds what a count that later proves false can make us allocate: at most this
// many entries per open container, and containers nest at most MaxDepth deep.
const directEntries = 64

func (d *decoder) directEntries(n int, depth int) ([]Entry, error) {
	if n == 0 {
		if d.pos >= len(d.s) || d.s[d.pos] != '}' {
			return nil, d.expect(d.pos, "'}' after 0 elements")
		}
		d.pos++
		return nil, nil
	}
	ents := d.alloc(n)
	for i := range ents {
		e := &ents[i]
		if err := d.key(&e.Key); err != nil {
			return nil, err
		}
		if err := d.value(&e.Value, depth); err != nil {
			return nil, err
		}
	}
	if d.pos >= len(d.s) || d.s[d.pos] != '}' {
		return nil, d.expect(d.pos, "'}' after "+strconv.Itoa(n)+" elements")
	}
	d.pos++
	return ents, nil
}

func (d *decoder) key(k *Key) error {
	s, p := d.s, d.pos
	if p >= len(s) {
		return d.expect(p, "a key")
	}
	switch s[p] {
	case 'i':
		if p+1 >= len(s) || s[p+1] != ':' {
			return d.expect(p+1, "':'")
		}
		n, end, err := d.integer(p + 2)
		if err != nil {
			return err
		}
		*k = IntKey(n)
		d.pos = end + 1
		return nil
	case 's':
		// Inline fast path for the commonest token, s:<len>:"<name>";
		i := p + 2
		n := 0
		for ; i < len(s) && i < p+8; i++ {
			c := s[i] - '0'
			if c > 9 {
				break
			}
			n = n*10 + int(c)
		}
		if p+1 < len(s) && s[p+1] == ':' && i > p+2 && i+1 < len(s) && s[i] == ':' && s[i+1] == '"' {
			end := i + 2 + n
			if end+1 < len(s) && s[end] == '"' && s[end+1] == ';' {
				*k = Key{s: s[i+2 : end]}
				d.pos = end + 2
				return nil
			}
		}
		if p+1 >= len(s) || s[p+1] != ':' {
			return d.expect(p+1, "':'")
		}
		str, err := d.quoted(p+2, ';')
		if err != nil {
			return err
		}
		*k = Key{s: str}
		return nil
	}
	return d.expect(p, "a key (i: or s:)")
}

// nestedSlots counts the values PHP numbers inside the data of a C: object. A
// Serializable class whose unserialize() calls unserialize() on its data (Opis and
// Laravel closures do, after an "@<signature>." prefix when signed) shares PHP's
// numbering with the outer payload, so the values in it take numbers that r:/R: later
// in the payload count. Data that is not one serialized value (a UUID, JSON) takes none.
func nestedSlots(data string, maxDepth int) int {
	if len(data) > 1 && data[0] == '@' && data[1] != '{' {
		if i := strings.IndexByte(data, '.'); i > 0 {
			data = data[i+1:]
		}
	}
	if len(data) < 2 || maxDepth <= 0 || data[1] != ':' || !strings.ContainsRune("NbidsaOCE", rune(data[0])) {
		return 0
	}
	d := decoderPool.Get().(*decoder)
	defer decoderPool.Put(d)
	_, err := (Decoder{MaxDepth: maxDepth}).decodeWith(d, data)
	if err != nil {
		return 0
	}
	return d.slots
}

// resolve points every reference at its target. PHP numbers the values in pre-order
// (a container before its elements; array keys are not numbered); an r: takes a
// number and stands for the object it points to, an R: takes none.
func (d *decoder) resolve(root *Value) error {
	table := make([]*Value, 0, d.slots)
	var walk func(v *Value, depth int) error
	walk = func(v *Value, depth int) error {
		if v.kind == KindRef {
			n := int(v.num)
			if n < 1 || n > len(table) {
				return &SyntaxError{Offset: int(v.off), Msg: "reference " + strconv.Itoa(n) + " out of range"}
			}
			t := table[n-1]
			if t == nil {
				return &SyntaxError{Offset: int(v.off), Msg: string("rR"[v.flags&flagHardRef]) + ":" + strconv.Itoa(n) + " refers to a value inside the data of a C: object"}
			}
			v.p = unsafe.Pointer(t)
			if v.flags&flagHardRef == 0 {
				// PHP refuses r: to anything but an object (enums are objects).
				if t.kind != KindObject && t.kind != KindCustom && t.kind != KindEnum {
					return &SyntaxError{Offset: int(v.off), Msg: "r:" + strconv.Itoa(n) + " refers to a " + t.kind.String() + ", not an object"}
				}
				table = append(table, t)
			}
			return nil
		}
		table = append(table, v)
		if v.kind == KindCustom {
			for n := nestedSlots(v.CustomData(), d.maxDepth-depth); n > 0; n-- {
				table = append(table, nil)
			}
		}
		ents := v.ents()
		for i := range ents {
			if err := walk(&ents[i].Value, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root, 0)
}
