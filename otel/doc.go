// Package laraqotel carries OpenTelemetry traces across Laravel's queues, the way
// opentelemetry-php-contrib's Laravel instrumentation does in PHP, so that one trace runs
// from the PHP request that dispatched a job through the Go worker that runs it, and on
// to a service `laraq work --forward` hands it to.
//
// The wire fact: PHP's instrumentation hooks Illuminate\Queue\Queue::createPayloadArray
// and has TraceContextPropagator inject the active span into the payload array, so the
// W3C trace context travels as two top-level members of the job's JSON, "traceparent"
// and (when not empty) "tracestate". The hook fires for the parent's createPayloadArray
// that RedisQueue's override calls first, so the members sit after the keys Laravel's
// Queue writes (createdAt and any createPayloadUsing keys included) and before the "id"
// and "attempts" RedisQueue adds; its worker extracts them from $job->payload().
//
//   - Extract reads a payload's context; Inject writes the active span's into a payload
//     being dispatched, exactly there, and returns a payload without an active span
//     byte for byte as it was.
//   - Tracer.Middleware (Handle, as a laraq.Middleware) starts a consumer span per attempt ("process queues:NAME") as
//     the child of the payload's context, with the messaging attributes PHP's worker
//     span carries (system redis, destination queues:NAME, message id = uuid, job name,
//     attempts) plus the class and connection, and hands the handler a ctx carrying it;
//     Tracer.OnEvent records the attempt's outcome (done, released, failed, abandoned)
//     and exceptions from the worker's events and ends the span.
//   - Headers writes traceparent/tracestate for an HTTP request (--forward): the
//     attempt's span when there is one, else the payload's own context, so a service in
//     any language continues the trace with or without an exporter configured.
//
// This package links the OpenTelemetry API only; a program that does not import it (a
// worker with handlers only) links no OpenTelemetry at all. The SDK and its exporter are
// the program's choice; `laraq work --otel` installs the OTLP exporter.
//
//	tr := laraqotel.New(laraqotel.Config{})
//	cfg := laraq.QueueWork()
//	cfg.Middleware = append(cfg.Middleware, tr)        // a span per attempt
//	cfg.OnEvent = tr.OnEvent                           // ended with the attempt's outcome
//	cfg.CreatePayloadUsing = tr.CreatePayload          // a chain's next job continues the trace
//	d, err := laraq.NewDispatcher(conn, laraq.CreatePayloadUsing(tr.CreatePayload)) // dispatches too
package laraqotel
