// Package testkit holds the helpers that several test suites of laraq share: a test's
// own Redis prefix on its binary's redis-server with a settable clock and a failed store
// in memory (Env), the whole configuration of a worker or dispatcher under test (Setup,
// DispatchSetup), Laravel payloads of Go job types (Job), the Go twins of the PHP test
// jobs in testdata/php, runs of the PHP harness (PHPDispatch, RunWorker, ReadRecords),
// the lossless description of a PHP value PHP's test jobs report (Canon), and the two
// sides of a PHP-against-Go parity run (Side).
//
// It is imported by tests only: the root package's unit tests and the suites in
// internal/interop, internal/matrix, internal/parity and internal/faults. No library
// package may import it, so a program built on laraq never links it (the root's linking
// test builds such a program). Starting the peers themselves (redis-server, PHP, SQL
// servers) is internal/testenv's job.
//
//	func TestSomething(t *testing.T) {
//		e := testkit.NewEnv(t)
//		jobs := laraq.NewJobs()
//		testkit.Register(jobs, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *testkit.SendInvoice, j *laraq.JobInfo) error { return nil })
//		cfg := e.Config(jobs)
//		cfg.StopWhenEmpty = true
//		e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, nil))
//		_ = e.RunToEnd(e.Consumer(cfg))
//	}
package testkit
