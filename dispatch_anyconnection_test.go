package laraq_test

import (
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
)

func TestAnyConnection(t *testing.T) {
	p, _ := newTestProducer(t, testkit.DispatchSetup{})
	job := connJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Connection: testkit.Str("redis-long")}}}
	if _, err := p.Prepare(job); err == nil {
		t.Fatal("a job for another connection was accepted without AnyConnection")
	}
	m, err := p.Prepare(job, laraq.AnyConnection())
	if err != nil {
		t.Fatal(err)
	}
	// The property stays as the job has it; only the destination is this connection's.
	if !strings.Contains(string(m.Payload), `s:10:\"connection\";s:10:\"redis-long\";`) || m.Queue != "default" {
		t.Errorf("queue %s, payload %s", m.Queue, m.Payload)
	}
	// An explicit onConnection() to another connection is still refused.
	if _, err := p.Prepare(connJob{}, laraq.AnyConnection(), laraq.OnConnection("sqs")); err == nil {
		t.Error("Connection(sqs) accepted")
	}
}
