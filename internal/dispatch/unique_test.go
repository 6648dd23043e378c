package dispatch

import (
	"testing"

	"github.com/laraq/laraq/payload"
)

// FuzzHiddenUniqueLock: the hidden Context of any payload is read without a panic, and a
// key is only ever a PHP string that was serialized there.
func FuzzHiddenUniqueLock(f *testing.F) {
	f.Add(`{"job":"x","data":{},"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:5:\"redis\";","laravel_unique_job_key":"s:21:\"laravel_unique_job:A:1\";","laravel_unique_job_lock_owner":"s:3:\"own\";"}},"id":"i","attempts":0}`)
	f.Add(`{"job":"x","illuminate:log:context":{"hidden":{"laravel_unique_job_key":"i:5;"}},"attempts":0}`)
	f.Add(`{"job":"x","illuminate:log:context":null,"attempts":0}`)
	f.Fuzz(func(t *testing.T, raw string) {
		env, err := payload.Parse([]byte(raw))
		if err != nil {
			return
		}
		key, _, ok := HiddenUniqueLock(env)
		if ok != (key != "") {
			t.Fatalf("ok %v with key %q", ok, key)
		}
	})
}

func TestHiddenUniqueLock(t *testing.T) {
	env, err := payload.Parse([]byte(`{"job":"x","data":{},"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:5:\"redis\";","laravel_unique_job_key":"s:22:\"laravel_unique_job:A:1\";","laravel_unique_job_lock_owner":"s:3:\"own\";"}},"id":"i","attempts":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if key, owner, ok := HiddenUniqueLock(env); !ok || key != "laravel_unique_job:A:1" || owner != "own" {
		t.Errorf("got %q %q %v", key, owner, ok)
	}
}
