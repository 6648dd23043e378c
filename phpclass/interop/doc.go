// Package interop holds the tests that prove, against every Laravel release the matrix
// has, that the facts package phpclass reads from PHP are enough to speak for a job class
// byte for byte: the Go types `laraq gen` writes compile, decode what PHP dispatched to
// the values PHP holds, and dispatch those values as bytes identical to PHP's, which the
// release's own Worker runs (unique locks released where PHP looks for them); and
// `laraq dispatch --classes` writes PHP's bytes for the same properties given by name.
// It has no code of its own.
package interop
