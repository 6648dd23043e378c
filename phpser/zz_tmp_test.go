package phpser

import "testing"

func BenchmarkZZParseOnly(b *testing.B) {
	data := string(laravelJob(b))
	d := new(decoder)
	for b.Loop() {
		d.reuse = true
		if _, err := (Decoder{}).decodeWith(d, data); err != nil {
			b.Fatal(err)
		}
		d.recycle()
	}
}
