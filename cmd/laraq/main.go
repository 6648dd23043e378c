// Command laraq runs Go workers on Laravel's Redis queues, dispatches jobs PHP workers run,
// and inspects queues and failed jobs. Run `laraq help` for the commands.
package main

import (
	"os"

	"github.com/laraq/laraq/cli"
	"github.com/laraq/laraq/handlers"
)

func main() {
	os.Exit(cli.Run(handlers.NewRegistry()))
}
