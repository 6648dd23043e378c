// Package cli is the `laraq` command line, importable so that a team's own binary gets
// the same commands with its Go handlers registered:
//
//	func main() {
//		reg := handlers.NewRegistry()
//		handlers.Register(reg, `App\Jobs\SendWelcomeEmail`, sendWelcome)
//		os.Exit(cli.Run(reg))
//	}
//
// Signals are handled here and only here: SIGTERM and SIGINT stop a worker gracefully,
// SIGUSR2 pauses it and SIGCONT resumes it, as `php artisan queue:work` does.
package cli
