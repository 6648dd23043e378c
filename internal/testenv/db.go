package testenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// The database servers below follow RedisServer's pattern: one private server per test
// binary, started on first use on a free loopback port, with its data in a temporary
// directory. Each test gets its own freshly created database, so tests run in parallel.
//
// Both servers run as an unprivileged OS user when the tests run as root: PostgreSQL
// refuses to run as root, and MariaDB would otherwise switch users itself, which clears
// the parent-death signal that kills a server left behind by a crashed test binary.

// Credentials of the ordinary (non-admin) account the per-test DSNs use.
const (
	dbUser     = "laraq"
	dbPassword = "laraq-pw"
)

// DBServer is a database server process owned by the test binary.
type DBServer struct {
	Kind  string // "mariadb" or "postgres"
	Port  int
	dir   string
	cmd   *exec.Cmd
	done  chan struct{} // closed when the process has exited and been reaped
	admin *sql.DB
	log   string
}

type dbSlot struct {
	once sync.Once
	srv  *DBServer
	err  error
}

var (
	mariadbSlot  dbSlot
	postgresSlot dbSlot
	dbStopMu     sync.Mutex
	dbStopped    bool
)

// MariaDB returns a DSN `mysql://user:pass@127.0.0.1:PORT/DB` for a database created for
// this test only (utf8mb4, utf8mb4_unicode_ci, like a Laravel skeleton) on the MariaDB
// server shared by the test binary. A missing server fails the test in CI, skips it
// elsewhere. The database is dropped when the test ends.
func MariaDB(t testing.TB) string {
	t.Helper()
	srv := sharedDB(t, &mariadbSlot, StartMariaDB)
	name := "lq_" + RandomName(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := srv.admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		t.Fatalf("mariadb: create database: %v", err)
	}
	t.Cleanup(func() { srv.drop("DROP DATABASE IF EXISTS `" + name + "`") })
	return fmt.Sprintf("mysql://%s:%s@127.0.0.1:%d/%s", dbUser, dbPassword, srv.Port, name)
}

// Postgres returns a DSN `postgres://user:pass@127.0.0.1:PORT/DB` for a database created
// for this test only (owned by the DSN's user, UTF8) on the PostgreSQL server shared by the
// test binary. The same string works for pgx and for the PHP harness' LARAQ_FAILED_DB.
func Postgres(t testing.TB) string {
	t.Helper()
	srv := sharedDB(t, &postgresSlot, StartPostgres)
	name := "lq_" + RandomName(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := srv.admin.ExecContext(ctx, `CREATE DATABASE "`+name+`" OWNER `+dbUser+` ENCODING 'UTF8'`); err != nil {
		t.Fatalf("postgres: create database: %v", err)
	}
	t.Cleanup(func() { srv.drop(`DROP DATABASE IF EXISTS "` + name + `" WITH (FORCE)`) })
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s", dbUser, dbPassword, srv.Port, name)
}

// SQLite returns a DSN `sqlite:PATH` for a database file of this test only, removed when
// the test ends. The file itself is not created.
func SQLite(t testing.TB) string {
	t.Helper()
	dir, err := scratchDir(scratchRoot(), "sqlite")
	if err != nil {
		t.Fatalf("sqlite dir: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return "sqlite:" + filepath.Join(dir, "laraq.sqlite")
}

// scratchRoot is where database files go: a memory file system when there is one, since
// every commit of SQLite, MariaDB's DDL and PostgreSQL's CREATE DATABASE sync to disk,
// and on a shared disk those syncs stall every other test process for seconds.
func scratchRoot() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "laraq-probe-"); err == nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return os.TempDir()
}

// StopDatabases stops the shared database servers and removes their data; later calls
// of MariaDB/Postgres fail. TestMain should call it after m.Run. A server that is not
// stopped dies with the test binary (parent-death signal), and the next start removes
// the data directory it left.
func StopDatabases() {
	dbStopMu.Lock()
	defer dbStopMu.Unlock()
	dbStopped = true
	for _, s := range []*dbSlot{&mariadbSlot, &postgresSlot} {
		s.once.Do(func() { s.err = errors.New("database servers already stopped") })
		if s.srv != nil {
			s.srv.Stop()
		}
	}
}

func sharedDB(t testing.TB, slot *dbSlot, start func() (*DBServer, error)) *DBServer {
	t.Helper()
	dbStopMu.Lock()
	stopped := dbStopped
	dbStopMu.Unlock()
	if stopped {
		t.Fatalf("database servers already stopped")
	}
	slot.once.Do(func() { slot.srv, slot.err = start() })
	if slot.err != nil {
		Need(t, false, "%v", slot.err)
	}
	return slot.srv
}

func (s *DBServer) drop(stmt string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = s.admin.ExecContext(ctx, stmt)
}

// Stop shuts the server down and removes its data directory.
func (s *DBServer) Stop() {
	if s == nil || s.cmd == nil {
		return
	}
	if s.admin != nil {
		_ = s.admin.Close()
	}
	// SIGTERM lets both servers stop their children; SIGKILL after a grace period.
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	_ = os.RemoveAll(s.dir)
	s.cmd = nil
}

// Log returns the server's log so far, for failure messages.
func (s *DBServer) Log() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// runAs describes the OS account a server runs under; nil when the tests do not run as
// root (the server then runs as the current user).
type runAs struct {
	uid, gid uint32
}

func lookupRunAs(names ...string) (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &runAs{uid: uint32(uid), gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root and none of the accounts %v exists to run the server as", names)
}

func (r *runAs) attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if r != nil {
		a.Credential = &syscall.Credential{Uid: r.uid, Gid: r.gid, NoSetGroups: true}
	}
	return a
}

func (r *runAs) chown(paths ...string) error {
	if r == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, int(r.uid), int(r.gid)); err != nil {
			return err
		}
	}
	return nil
}

// serverDir creates the temporary directory of one server (see scratchDir) and gives it
// to the server's account.
func serverDir(kind string, owner *runAs) (string, error) {
	dir, err := scratchDir(scratchRoot(), kind)
	if err != nil {
		return "", err
	}
	if err := owner.chown(dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

func findBinary(candidates ...string) string {
	for _, c := range candidates {
		if strings.ContainsRune(c, '*') {
			m, _ := filepath.Glob(c)
			if len(m) > 0 {
				return m[len(m)-1]
			}
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// StartMariaDB initialises a data directory with mariadb-install-db and starts a private
// mariadbd on a free loopback port with an account laraq (all privileges). The caller must
// Stop it. Most tests want MariaDB instead.
func StartMariaDB() (*DBServer, error) {
	server := findBinary("mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld")
	install := findBinary("mariadb-install-db", "mysql_install_db")
	if server == "" || install == "" {
		return nil, fmt.Errorf("mariadbd or mariadb-install-db not found (apt-get install mariadb-server)")
	}
	owner, err := lookupRunAs("mysql", "nobody")
	if err != nil {
		return nil, err
	}
	dir, err := serverDir("mariadb", owner)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	logPath := filepath.Join(dir, "server.log")
	fail := func(err error) (*DBServer, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}

	args := []string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve", "--innodb-log-file-size=16M", "--innodb-flush-method=fsync"}
	if owner != nil {
		args = append(args, "--user="+userName(owner))
	}
	initCmd := exec.Command(install, args...)
	initCmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if out, err := initCmd.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("mariadb-install-db: %v\n%s", err, out))
	}

	sock := filepath.Join(dir, "mysqld.sock")
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		cmd := exec.Command(server, "--no-defaults",
			"--datadir="+data, "--socket="+sock, "--pid-file="+filepath.Join(dir, "mysqld.pid"),
			"--tmpdir="+dir, "--port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
			"--skip-name-resolve", "--skip-log-bin", "--log-error="+logPath,
			"--character-set-server=utf8mb4", "--collation-server=utf8mb4_unicode_ci",
			"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
			"--innodb-flush-log-at-trx-commit=0", "--innodb-flush-method=fsync", "--innodb-doublewrite=0",
			"--max-connections=500")
		cmd.SysProcAttr = owner.attr()
		srv := &DBServer{Kind: "mariadb", Port: port, dir: dir, cmd: cmd, log: logPath}
		cfg := mysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr = "root", "unix", sock
		cfg.Timeout = time.Second
		connector, err := mysql.NewConnector(cfg)
		if err != nil {
			return fail(err)
		}
		up, err := srv.bringUp(sql.OpenDB(connector), "Address already in use",
			"CREATE USER '"+dbUser+"'@'%' IDENTIFIED BY '"+dbPassword+"'",
			"GRANT ALL PRIVILEGES ON *.* TO '"+dbUser+"'@'%'")
		if err != nil {
			return fail(fmt.Errorf("mariadb: %w", err))
		}
		if up {
			return srv, nil
		}
	}
	return fail(fmt.Errorf("mariadbd did not start: no free port"))
}

// StartPostgres initialises a cluster with initdb and starts a private postgres on a free
// loopback port (fsync off) with a password-authenticated account laraq that may create
// databases. The caller must Stop it. Most tests want Postgres instead.
func StartPostgres() (*DBServer, error) {
	initdb := findBinary("initdb", "/usr/lib/postgresql/*/bin/initdb")
	if initdb == "" {
		return nil, fmt.Errorf("initdb not found (apt-get install postgresql)")
	}
	server := filepath.Join(filepath.Dir(initdb), "postgres")
	if _, err := os.Stat(server); err != nil {
		return nil, fmt.Errorf("postgres binary next to %s: %v", initdb, err)
	}
	owner, err := lookupRunAs("postgres", "nobody")
	if err != nil {
		return nil, err
	}
	dir, err := serverDir("postgres", owner)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	logPath := filepath.Join(dir, "server.log")
	fail := func(err error) (*DBServer, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	pwfile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwfile, []byte(RandomName(12)+"\n"), 0o600); err != nil {
		return fail(err)
	}
	if err := owner.chown(pwfile); err != nil {
		return fail(err)
	}
	// Local (socket) connections are trusted so the harness can administer the server;
	// TCP connections, which the tests and PHP use, must authenticate with a password.
	initCmd := exec.Command(initdb, "-D", data, "-U", "postgres", "--auth-local=trust",
		"--auth-host=scram-sha-256", "--pwfile="+pwfile, "-E", "UTF8", "--locale=C",
		"--no-sync", "--no-instructions")
	initCmd.SysProcAttr = owner.attr()
	initCmd.Dir = dir
	if out, err := initCmd.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}

	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		cmd := exec.Command(server, "-D", data, "-p", strconv.Itoa(port), "-k", dir, "-h", "127.0.0.1",
			"-F", "-c", "shared_buffers=16MB", "-c", "max_connections=300",
			"-c", "logging_collector=off", "-c", "log_min_messages=warning",
			// Segments live in the data directory, so a killed server leaves nothing behind.
			"-c", "dynamic_shared_memory_type=mmap")
		cmd.SysProcAttr = owner.attr()
		cmd.Dir = dir
		logf, err := os.Create(logPath)
		if err != nil {
			return fail(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		srv := &DBServer{Kind: "postgres", Port: port, dir: dir, cmd: cmd, log: logPath}
		admin, err := sql.Open("pgx", fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable connect_timeout=1", dir, port))
		if err != nil {
			_ = logf.Close()
			return fail(err)
		}
		up, err := srv.bringUp(admin, "already in use",
			"CREATE ROLE "+dbUser+" LOGIN CREATEDB PASSWORD '"+dbPassword+"'")
		_ = logf.Close()
		if err != nil {
			return fail(fmt.Errorf("postgres: %w", err))
		}
		if up {
			return srv, nil
		}
	}
	return fail(fmt.Errorf("postgres did not start: no free port"))
}

func userName(r *runAs) string {
	u, err := user.LookupId(strconv.Itoa(int(r.uid)))
	if err != nil {
		return strconv.Itoa(int(r.uid))
	}
	return u.Username
}

// start starts cmd and reaps it in the background, so that readiness polling can notice
// an early exit and Stop can wait for the end.
func (s *DBServer) start() error {
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	return nil
}

// bringUp starts the server, waits until admin answers and runs the setup statements.
// It reports up=false with no error when the port was taken meanwhile (the log contains
// portInUse), so the caller can try another port.
func (s *DBServer) bringUp(admin *sql.DB, portInUse string, setup ...string) (up bool, err error) {
	s.admin = admin
	if err := s.start(); err != nil {
		_ = admin.Close()
		return false, err
	}
	if pingUntil(admin, s.done, 15*time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, stmt := range setup {
			if _, err := admin.ExecContext(ctx, stmt); err != nil {
				s.kill()
				return false, fmt.Errorf("%s: %v\n%s", stmt, err, s.Log())
			}
		}
		return true, nil
	}
	s.kill()
	log := s.Log()
	if strings.Contains(log, portInUse) {
		return false, nil
	}
	return false, fmt.Errorf("server did not start:\n%s", log)
}

// kill ends a server that did not come up, keeping its directory for another attempt.
func (s *DBServer) kill() {
	_ = s.admin.Close()
	_ = s.cmd.Process.Kill()
	<-s.done
}

// pingUntil waits for the server to answer, giving up early when the process exits.
func pingUntil(db *sql.DB, exited <-chan struct{}, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return true
		}
		select {
		case <-exited:
			return false
		case <-time.After(25 * time.Millisecond):
		}
	}
	return false
}
