package phpser

import (
	"sync"
	"testing"
)

func TestConcurrentUse(t *testing.T) {
	data := readFixture(t, "laravel_job.ser")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				var job fixturePodcast
				if err := Unmarshal(data, &job); err != nil {
					t.Error(err)
					return
				}
				if _, err := Marshal(job); err != nil {
					t.Error(err)
					return
				}
				v, _ := Decode(data)
				if _, err := MarshalReadable(v); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}
