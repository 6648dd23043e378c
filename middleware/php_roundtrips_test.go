package middleware_test

import (
	"bufio"
	"context"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

// connectionCommands are what a client sends to set itself up, not for the middleware.
var connectionCommands = map[string]bool{
	"select": true, "client": true, "hello": true, "info": true, "ping": true, "auth": true,
	"command": true, "script": true, "echo": true,
}

// monitor follows a redis-server's MONITOR stream: every command a client sends, and,
// marked "lua", every command a script runs.
type monitor struct {
	conn  net.Conn
	mu    sync.Mutex
	lines []string
}

func startMonitor(t *testing.T, addr string) *monitor {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	m := &monitor{conn: conn}
	rd := bufio.NewReader(conn)
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
		t.Fatalf("MONITOR: %q %v", line, err)
	}
	go func() {
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			m.mu.Lock()
			m.lines = append(m.lines, strings.TrimSpace(line))
			m.mu.Unlock()
		}
	}()
	return m
}

// caughtUp returns the lines seen since the last call: a marker sent through c tells
// when the stream has caught up.
func (m *monitor) caughtUp(t *testing.T, c *redis.Client) []string {
	t.Helper()
	marker := "marker-" + testenv.RandomName(6)
	if err := c.Echo(context.Background(), marker).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.mu.Lock()
		done := len(m.lines) > 0 && strings.Contains(m.lines[len(m.lines)-1], marker)
		lines := m.lines
		if done {
			m.lines = nil
		}
		m.mu.Unlock()
		if done {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatal("MONITOR did not catch up")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// since returns the round trips (commands clients sent, EVALSHA as EVAL, SETNX as SET NX)
// and the commands scripts ran, seen since the last call.
func (m *monitor) since(t *testing.T, c *redis.Client) (trips, inScripts string) {
	t.Helper()
	var client, lua []string
	for _, l := range m.caughtUp(t, c) {
		name, inLua := monitored(l)
		switch {
		case name == "" || connectionCommands[name]:
		case inLua:
			lua = append(lua, name)
		default:
			client = append(client, name)
		}
	}
	sort.Strings(client)
	sort.Strings(lua)
	return strings.Join(client, " "), strings.Join(lua, " ")
}

// take returns the commands clients sent (not those scripts ran) since the last call
// that keep accepts, sorted, named as since names them; keep nil takes none (a sync).
func (m *monitor) take(t *testing.T, c *redis.Client, keep func(line string) bool) []string {
	t.Helper()
	var out []string
	for _, l := range m.caughtUp(t, c) {
		if name, inLua := monitored(l); name != "" && !inLua && keep != nil && keep(l) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// monitoredServer is a redis-server of the test's own, watched with MONITOR from the
// start, and a client on its database 0.
func monitoredServer(t *testing.T) (*testenv.Redis, *monitor, *redis.Client) {
	t.Helper()
	srv, err := testenv.StartRedis()
	if err != nil {
		testenv.Need(t, false, "redis-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	return srv, startMonitor(t, srv.Addr), srv.Client(t, 0)
}

// monitored reads one MONITOR line: `+TS [DB ADDR] "cmd" "arg" ...`, ADDR "lua" for a
// script's commands.
func monitored(line string) (name string, inLua bool) {
	open, end := strings.IndexByte(line, '['), strings.IndexByte(line, ']')
	if open < 0 || end < open {
		return "", false
	}
	rest := strings.TrimSpace(line[end+1:])
	if !strings.HasPrefix(rest, `"`) {
		return "", false
	}
	name = strings.ToLower(rest[1 : 1+strings.IndexByte(rest[1:], '"')])
	switch name {
	case "evalsha":
		name = "eval"
	case "setnx":
		name = "set"
	}
	return name, strings.Contains(line[open:end], "lua")
}

// TestRoundTripsMatchPHP: for each Redis scenario, the Go attempt sends the commands the
// PHP attempt sends, as many of each, no more (MONITOR on a server of its own; EVALSHA
// counted as the EVAL PHP sends, the scripts loaded beforehand as a running worker has
// them, SETNX as the SET NX go-redis sends). What the scripts run inside Redis is shown,
// not compared: a Go script may read a field once where Laravel's reads it twice.
func TestRoundTripsMatchPHP(t *testing.T) {
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.JobMiddleware)
		srv, mon, c := monitoredServer(t)
		if err := rdb.LoadMiddlewareScripts(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		rel := releaseOf(t, major)
		checked := 0
		for _, sc := range scenarios() {
			if sc.database || (sc.ships != nil && !sc.ships(rel)) {
				continue
			}
			checked++
			t.Run(sc.name, func(t *testing.T) {
				seeds := sc.seeds(t, major)
				bare := sc
				bare.seed, bare.seedFor = nil, nil

				php := newSide(t, false)
				seedGo(t, srv, php, seeds, time.Now().Unix())
				mon.since(t, c)
				runPHP(t, srv, major, bare, php, false)
				phpTrips, phpLua := mon.since(t, c)

				goSide := newSide(t, false)
				seedGo(t, srv, goSide, seeds, time.Now().Unix())
				mon.since(t, c)
				runGo(t, srv, major, bare, goSide, sc.goMW)
				goTrips, goLua := mon.since(t, c)
				if goTrips != phpTrips {
					t.Errorf("round trips\n  PHP: %s\n   Go: %s", phpTrips, goTrips)
				}
				if testing.Verbose() {
					t.Logf("round trips: %s; in scripts: PHP %s, Go %s", goTrips, phpLua, goLua)
				}
			})
		}
		if checked == 0 {
			t.Fatal("no scenario checked")
		}
	})
}
