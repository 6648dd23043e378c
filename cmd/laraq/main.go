// Command laraq runs Go workers on Laravel's Redis queues, dispatches jobs PHP workers
// run, and inspects queues and failed jobs. `laraq demo` shows it at work with nothing
// but Go installed; `laraq help` lists the commands.
//
// This binary has no Go handlers of its own: `laraq work` runs jobs through --forward
// (an HTTP service) or follows --unhandled. A team's own binary registers its handlers
// and calls cli.Run (package github.com/laraq/laraq/cli).
package main

import (
	"os"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/cli"
)

func main() {
	os.Exit(cli.Run(laraq.NewJobs(), cli.WithCommand(demoCommand)))
}
