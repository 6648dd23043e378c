// Package phpclass holds the facts of PHP classes, read by PHP's own reflection, so that
// Go knows a Laravel job class as PHP does: its properties in the order serialize()
// writes them (name, visibility, declared type, default, readonly, promoted, the trait
// each comes from), its traits, interfaces (ShouldQueue, ShouldBeUnique,
// ShouldBeUniqueUntilProcessing, ShouldBeEncrypted, ...), 13.x attributes, the methods
// that decide how Laravel queues it (tries(), backoff(), uniqueId(), ...) with their
// source, and the Laravel release the application runs.
//
// Extract runs php with the application's autoloader (vendor/autoload.php, or any file
// that makes the classes loadable) and reads the classes named, or every ShouldQueue
// class under the application's PSR-4 roots. No PHP is parsed in Go: the facts are
// exact by construction, and the order of the properties is read back from a real
// serialize() of each class. The facts are kept as a Manifest, a versioned JSON file
// (Load, Write) that a worker host without PHP or the application's code can use.
//
//	m, err := phpclass.Extract(ctx, phpclass.Options{Root: "/srv/app"})
//	...
//	err = m.Write(f)                      // laraq classes -o classes.json
//	g, err := phpclass.Generate(m, phpclass.GenOptions{Package: "jobs"}) // laraq gen
//
// Generate writes Go types for the classes: php tags with the right names, visibility and
// defaults, laraq.Queueable for the Queueable traits, the interface methods laraq acts on,
// and, for the PHP methods Go must compute itself, their source beside a Go method to
// write.
//
// Check compares a hand-written Go type with its class and names each mistake with its
// fix: a property no field takes (a type may leave some out on purpose with
// PHPUnmapped), a field no property has (case included: PHP property names are
// case-sensitive), a visibility or default that differs, a unique or encrypted class
// whose type does not say so, SerializesModels said wrongly. CheckTypes checks the Go
// types a worker or dispatcher declares, as a start-up check:
//
//	if err := phpclass.CheckTypes(m, types); err != nil {
//		log.Fatal(err) // every problem, one per line
//	}
package phpclass
