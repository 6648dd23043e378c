package failed

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
)

// PHP class names laraq writes into failed-job records for failures Laravel itself
// names, so dashboards group them with PHP's.
const (
	// MaxAttemptsExceededClass is what Laravel's worker throws when a job has used up its
	// tries or its retryUntil (8.x–10.9 message: see MaxAttemptsExceededMessage).
	MaxAttemptsExceededClass = `Illuminate\Queue\MaxAttemptsExceededException`
	// ManuallyFailedClass is what Job::fail() records when called without an exception;
	// its message is empty.
	ManuallyFailedClass = `Illuminate\Queue\ManuallyFailedException`
	// PanicClass names a recovered Go panic (FromPanic).
	PanicClass = `Laraq\Panic`
	// DefaultClass names a Go error whose type gives no usable name.
	DefaultClass = `Laraq\GoError`
)

// maxFrames caps a captured trace; Go stacks deeper than this are recursion, not
// information.
const maxFrames = 100

// maxChain caps how many wrapped errors become "Next" sections.
const maxChain = 16

// MaxAttemptsExceededMessage is Laravel 6.x–10.9's message for a job that exceeded its
// tries or retryUntil; name is the payload's displayName (or job when that is empty).
func MaxAttemptsExceededMessage(name string) string {
	return name + " has been attempted too many times or run too long. The job may have previously timed out."
}

// Frame is one entry of a PHP trace: File and Line are where Function was called from.
// An empty File prints as "[internal function]", as PHP does for calls made by the
// engine (for Go: the entry function of a goroutine, called by the runtime).
type Frame struct {
	File     string
	Line     int
	Function string
}

// Exception is a failure in PHP's Throwable model. String renders it exactly the way
// PHP's (string)$exception does, which is what Laravel stores in failed_jobs.exception:
//
//	Class: message in /path/file.go:12
//	Stack trace:
//	#0 /path/caller.go(40): pkg.failingFunc()
//	#1 [internal function]: pkg.worker()
//	#2 {main}
//
// with every Previous exception printed first and the later ones each introduced by a
// blank line and "Next ". *Exception is an error; Unwrap returns the error it was captured
// from, so errors.Is/As keep working through it.
type Exception struct {
	Class    string
	Message  string
	File     string
	Line     int
	Trace    []Frame
	Previous *Exception
	err      error
}

// Error returns the message, like PHP's getMessage().
func (e *Exception) Error() string { return e.Message }

// Unwrap returns the Go error the exception was captured from, if any.
func (e *Exception) Unwrap() error { return e.err }

// PHPClass reports Class, so an Exception wrapped in another error keeps its name.
func (e *Exception) PHPClass() string { return e.Class }

// String renders the exception as PHP's Throwable::__toString does. The result is valid
// UTF-8: invalid bytes in any part become U+FFFD.
func (e *Exception) String() string {
	var chain []*Exception
	for x := e; x != nil && len(chain) < maxChain+1; x = x.Previous {
		chain = append(chain, x)
	}
	var b strings.Builder
	// PHP prints the innermost previous exception first.
	for i := len(chain) - 1; i >= 0; i-- {
		if i != len(chain)-1 {
			b.WriteString("\n\nNext ")
		}
		chain[i].writeOne(&b)
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

func (e *Exception) writeOne(b *strings.Builder) {
	class := e.Class
	if class == "" {
		class = DefaultClass
	}
	b.WriteString(class)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	b.WriteString(" in ")
	b.WriteString(e.File)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(e.Line))
	b.WriteString("\nStack trace:\n")
	for i, f := range e.Trace {
		b.WriteByte('#')
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(' ')
		if f.File == "" {
			b.WriteString("[internal function]")
		} else {
			b.WriteString(f.File)
			b.WriteByte('(')
			b.WriteString(strconv.Itoa(f.Line))
			b.WriteByte(')')
		}
		b.WriteString(": ")
		b.WriteString(f.Function)
		b.WriteString("()\n")
	}
	b.WriteByte('#')
	b.WriteString(strconv.Itoa(len(e.Trace)))
	b.WriteString(" {main}")
}

// FormatException renders err as PHP would print an exception of class (ClassOf(err) when
// empty) with the given message (err.Error() when empty), thrown at frames[0] with the
// rest of frames as its callers (innermost first, as runtime.CallersFrames yields them).
// Wrapped errors become the Previous chain as in Capture.
func FormatException(class, message string, err error, frames []Frame) string {
	ex := fromFrames(err, frames)
	if class != "" {
		ex.Class = class
	}
	if message != "" {
		ex.Message = message
	}
	return ex.String()
}

// Capture turns err into an Exception thrown at its caller's location (skip 0) or skip
// frames further up, with the current goroutine's stack as trace. Each error in its
// errors.Unwrap chain becomes a Previous exception located at the same place (Go errors
// carry no location of their own); an *Exception met in the chain is kept as it is, with
// its own location and trace. Capture(nil, …) returns nil.
func Capture(err error, skip int) *Exception {
	if err == nil {
		return nil
	}
	var ex *Exception
	if errors.As(err, &ex) && ex == err {
		return ex
	}
	return fromFrames(err, callers(skip+2))
}

// CaptureAt turns err into an Exception thrown at frame, with frame as its whole trace:
// for an error that has crossed a function boundary, such as a handler's return value,
// whose location is best told by the function that returned it. An *Exception is kept as
// it is, as in Capture.
func CaptureAt(err error, frame Frame) *Exception {
	if err == nil {
		return nil
	}
	var ex *Exception
	if errors.As(err, &ex) && ex == err {
		return ex
	}
	return fromFrames(err, []Frame{frame})
}

// NewAt returns an Exception of a PHP class with a message, thrown at frame.
func NewAt(class, message string, frame Frame) *Exception {
	ex := fromFrames(nil, []Frame{frame})
	ex.Class, ex.Message = class, message
	return ex
}

// New returns an Exception of a PHP class with a message, thrown at its caller's
// location (skip 0) or skip frames further up, e.g.
// New(MaxAttemptsExceededClass, MaxAttemptsExceededMessage(name), 0).
func New(class, message string, skip int) *Exception {
	ex := fromFrames(nil, callers(skip+2))
	ex.Class, ex.Message = class, message
	return ex
}

// FromPanic turns a value recovered from a panic into an Exception located where the
// panic happened, with the panicking goroutine's stack. Call it from the deferred
// function that recovers. A panic with an error value keeps that error (and its chain) as
// Previous; runtime errors (nil map writes, bad indexes, …) are not repeated as Previous.
// FromPanic(nil) returns nil, so FromPanic(recover()) can be checked directly.
func FromPanic(v any) *Exception {
	if v == nil {
		return nil
	}
	frames := callers(2)
	// While deferred calls run, the panicking frames are still on the stack below
	// runtime.gopanic; start the trace at the function that panicked.
	for i, f := range frames {
		if f.Function == "runtime.gopanic" {
			j := i + 1
			for j < len(frames)-1 && strings.HasPrefix(frames[j].Function, "runtime.") {
				j++ // runtime.sigpanic, runtime.panicmem, runtime.goPanicIndex, …
			}
			frames = frames[j:]
			break
		}
	}
	ex := fromFrames(nil, frames)
	ex.Class = PanicClass
	ex.Message = fmt.Sprint(v)
	if err, ok := v.(error); ok {
		ex.err = err
		if _, isRuntime := err.(runtime.Error); !isRuntime {
			ex.Previous = fromFrames(err, frames)
		}
	}
	return ex
}

// ClassOf returns the PHP class name used for err: its PHPClass() when it has such a
// method returning a non-empty name, else its Go type written as a PHP name
// (*os.PathError → os\PathError), else DefaultClass.
func ClassOf(err error) string {
	if err == nil {
		return DefaultClass
	}
	if c, ok := err.(interface{ PHPClass() string }); ok {
		if name := c.PHPClass(); name != "" {
			return name
		}
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.String()
	if t.Name() == "" || name == "" {
		return DefaultClass
	}
	var b strings.Builder
	for _, c := range name {
		switch {
		case c == '.' || c == '/':
			b.WriteByte('\\')
		case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'):
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// fromFrames builds the exception chain of err located at frames[0].
func fromFrames(err error, frames []Frame) *Exception {
	file, line, trace := phpTrace(frames)
	mk := func(e error) *Exception {
		ex := &Exception{File: file, Line: line, Trace: trace, err: e}
		if e != nil {
			ex.Class, ex.Message = ClassOf(e), e.Error()
		}
		return ex
	}
	top := mk(err)
	cur := top
	for e, n := errors.Unwrap(err), 0; e != nil && n < maxChain; e, n = errors.Unwrap(e), n+1 {
		var inner *Exception
		if errors.As(e, &inner) && inner == e {
			cur.Previous = inner
			break
		}
		next := mk(e)
		cur.Previous = next
		cur = next
	}
	return top
}

// phpTrace converts Go frames (innermost first, each with its own position) into PHP's
// model: the throw position, then for each call the caller's position and the callee.
func phpTrace(frames []Frame) (file string, line int, trace []Frame) {
	if len(frames) == 0 {
		return "", 0, nil
	}
	file, line = frames[0].File, frames[0].Line
	trace = make([]Frame, 0, len(frames))
	for i := range frames {
		f := Frame{Function: frames[i].Function}
		if i+1 < len(frames) {
			f.File, f.Line = frames[i+1].File, frames[i+1].Line
		}
		trace = append(trace, f)
	}
	return file, line, trace
}

// callers returns the goroutine's frames outwards, starting skip frames above callers
// itself (1 = the function calling callers), without the runtime's goroutine entry frames.
func callers(skip int) []Frame {
	pcs := make([]uintptr, maxFrames+8)
	n := runtime.Callers(skip+1, pcs)
	it := runtime.CallersFrames(pcs[:n])
	var out []Frame
	for {
		f, more := it.Next()
		if f.Function != "" {
			out = append(out, Frame{File: f.File, Line: f.Line, Function: f.Function})
		}
		if !more || len(out) == maxFrames {
			break
		}
	}
	for len(out) > 1 {
		last := out[len(out)-1].Function
		if last == "runtime.goexit" || last == "runtime.main" {
			out = out[:len(out)-1]
			continue
		}
		break
	}
	return out
}
