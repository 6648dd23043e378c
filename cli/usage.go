package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// helpSection is a heading of a command's --help and the flags under it, in order. A
// name that is no flag ("CONNECTION") is an argument, described by its text.
type helpSection struct {
	title string
	names []string
	args  map[string]string // argument name -> its description
}

// printFlag writes one flag as the README writes it: --name VALUE, the usage indented
// below, and the default when it says something.
func printFlag(w io.Writer, f *flag.Flag) {
	value, usage := flag.UnquoteUsage(f)
	fmt.Fprintf(w, "  --%s", f.Name)
	if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); !isBool && value != "" {
		fmt.Fprintf(w, " %s", value)
	}
	usage = strings.ReplaceAll(usage, "\n", "\n        ")
	fmt.Fprintf(w, "\n        %s", usage)
	switch f.DefValue {
	case "", "0", "false", "[]":
	default:
		if !strings.Contains(usage, "(default") {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
	}
	fmt.Fprintln(w)
}

// printSections writes the flags of fs section by section, then the flags no section
// names under "Other flags".
func printSections(w io.Writer, fs *flag.FlagSet, sections []helpSection) {
	listed := map[string]bool{}
	for _, s := range sections {
		fmt.Fprintf(w, "%s:\n", s.title)
		for _, n := range s.names {
			listed[n] = true
			if text, ok := s.args[n]; ok {
				fmt.Fprintf(w, "  %s\n        %s\n", n, strings.ReplaceAll(text, "\n", "\n        "))
				continue
			}
			if f := fs.Lookup(n); f != nil {
				printFlag(w, f)
			}
		}
		fmt.Fprintln(w)
	}
	var rest []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		// Spellings of another flag ("-v: same as --verbose") go unlisted.
		if !listed[f.Name] && !strings.HasPrefix(f.Usage, "same as --") {
			rest = append(rest, f)
		}
	})
	if len(rest) == 0 {
		return
	}
	fmt.Fprintln(w, "Other flags:")
	for _, f := range rest {
		printFlag(w, f)
	}
	fmt.Fprintln(w)
}
