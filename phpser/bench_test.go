package phpser

import (
	"testing"
)

// The benchmarks use laravel_job.ser, a 1,992-byte Laravel command (ModelIdentifiers,
// protected and private properties, Carbon, middleware, a chained job).
// scripts/bench-phpser.sh runs them next to PHP's own unserialize()/serialize().

func laravelJob(b *testing.B) []byte { return readFixture(b, "laravel_job.ser") }

func BenchmarkDecode(b *testing.B) {
	data := laravelJob(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeString is the path a worker takes: data.command is already a string
// (from the JSON payload), so there is nothing to copy.
func BenchmarkDecodeString(b *testing.B) {
	data := string(laravelJob(b))
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeString(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	data := laravelJob(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var job fixturePodcast
		if err := Unmarshal(data, &job); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	var job fixturePodcast
	if err := Unmarshal(laravelJob(b), &job); err != nil {
		b.Fatal(err)
	}
	out, _ := Marshal(job)
	b.ReportAllocs()
	b.SetBytes(int64(len(out)))
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		var err error
		if buf, err = AppendMarshal(buf[:0], job); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	v, err := Decode(laravelJob(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		if buf, err = AppendEncode(buf[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalReadable(b *testing.B) {
	v, err := Decode(laravelJob(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		if buf, err = AppendReadable(buf[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}
