// Package phpser reads and writes PHP's serialize() format, the encoding of every
// Laravel queue command (the data.command string of a job payload).
//
// Decode parses bytes into a Value tree that keeps everything PHP wrote: the order of
// array entries and properties, int versus string keys, class names, property
// visibility (protected "\0*\0name", private "\0Class\0name"), enum cases (E:),
// Serializable payloads (C:) and references (r: object handles, R: PHP & references,
// cycles included). Encode is its exact inverse, so a command can be inspected and
// written back unchanged.
//
// Unmarshal maps a payload into Go values. A struct field tagged `php:"podcast"`
// takes the property podcast whatever its visibility; ModelIdentifier is ready for
// what SerializesModels writes for Eloquent models; time.Time takes Carbon and
// DateTime objects; string types take enum cases. Marshal goes the other way: a
// struct with a PHPClass method becomes an object of that class, and tags such as
// `php:"podcast,protected"` or `php:"options,private"` give each property the
// visibility PHP expects, so PHP's unserialize() rebuilds the very object Laravel
// would have queued.
//
// # Class defaults
//
// PHP's unserialize() creates an object without its constructor, every property at its
// declared default, then sets the properties the payload holds; and Laravel's
// SerializesModels leaves out, from 9.4.0 on, every property identical (===) to its
// declared default, so an 11.x `new SendInvoice(7)` arrives as
// O:20:"App\Jobs\SendInvoice":1:{s:7:"orderId";i:7;}. A field declares its class
// default with a last tag option holding a JSON literal, taken as the field's Go type
// holds it:
//
//	Tries   int     `php:"tries,default=3"`          // public $tries = 3;
//	Queue   *string `php:"queue,default=null"`       // public $queue;  (untyped: null)
//	Chained []any   `php:"chained,default=[]"`       // public $chained = [];
//	Locale  string  `php:"locale,protected,default=\"en\""`
//	Ratio   float64 `php:"ratio,default=1"`          // a float field: the float 1.0
//
// Unmarshal gives a field whose property the object lacks its default; Encoder's
// OmitDefaults leaves such properties out as SerializesModels does, and its
// ZeroMeansDefault writes a field left at its Go zero value as its default, as PHP's
// `new` would have it; Defaults returns a type's declared defaults. A typed PHP property
// without an initializer, and a typed constructor-promoted one, have no default
// (SerializesModels always writes them once initialized): their fields declare none.
// An untyped promoted property defaults to null. SerializesModels never writes the
// private properties a parent class declares (ReflectionClass::getProperties() of the
// child leaves them out), so their fields do not belong in the struct.
//
// MarshalReadable shows a value as JSON for people ({"@class": "App\\Jobs\\X",
// "podcast": {...}}), as `laraq decode` prints it; UnmarshalReadable builds a value
// back from that form.
//
// # Generic values
//
// Decoded into an `any`, ints are int64, floats float64, strings string; an array
// whose keys are 0..n-1 in order is a []any, any other array a map[string]any (int
// keys in decimal); objects are Object (class and properties by plain name), enum
// cases EnumCase and C: objects Custom. Where PHP's order or int keys matter, decode
// into Map, an ordered list of key/value pairs that Marshal writes back in order.
// Go maps are always written sorted by key, so output is deterministic.
//
// # Untrusted input
//
// Payloads come from outside, so decoding never panics and every limit is checked
// before memory is spent: a length or count larger than the rest of the input is an
// error at once, counts and closing braces must match exactly, trailing bytes are an
// error and the work is linear in the input size. Nesting is limited exactly as PHP's
// unserialize() limits it (Decoder.MaxDepth, by default PHP's unserialize_max_depth of
// 4096 levels, an object or non-empty array being a level), so a payload PHP would run
// is never refused for its depth, and Marshal never writes one PHP would refuse. Every
// walk of a tree is bounded by that depth (and MaxDepthCeiling for trees built by
// hand), so deep input ends in an error, never a stack overflow. Mapping or printing
// follows references by copying their target, which is capped at MaxRefExpansion
// values so that nested references cannot blow a small payload up. Errors say what was
// expected and where: SyntaxError carries the byte offset, UnmarshalTypeError the
// property path (App\Jobs\X.podcast.id) as well.
//
// # Memory
//
// Decode copies its input once; the strings, keys and class names of the tree are
// slices of that copy, which is never modified, and the array and object entries of
// the whole tree share a few large allocations. A string kept from the tree keeps the
// copy of the input alive. DecodeString does not copy at all.
package phpser
