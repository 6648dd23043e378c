package phpser

import "testing"

func TestTruthy(t *testing.T) {
	for in, want := range map[string]bool{
		`N;`: false, `b:0;`: false, `b:1;`: true, `i:0;`: false, `i:-1;`: true, `d:0;`: false, `d:-0;`: false,
		`d:0.5;`: true, `d:NAN;`: true, `s:0:"";`: false, `s:1:"0";`: false, `s:2:"00";`: true, `s:1:" ";`: true,
		`a:0:{}`: false, `a:1:{i:0;N;}`: true, `O:8:"stdClass":0:{}`: true,
	} {
		v, err := Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Truthy(); got != want {
			t.Errorf("%s: Truthy() = %v, want %v", in, got, want)
		}
	}
	if (*Value)(nil).Truthy() {
		t.Error("nil is truthy")
	}
}
