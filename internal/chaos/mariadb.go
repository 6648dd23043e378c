package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

// MariaDB is a mariadbd owned by one scenario that can be stopped and started again on
// the same port and data directory, for failed-job stores that go away while jobs fail.
// It holds one database, "chaos", with the account chaos/chaos-pw.
type MariaDB struct {
	Port int
	dir  string

	mu     sync.Mutex
	proc   *Proc
	owner  *syscall.Credential // the account the server runs as when we are root
	starts int
}

// StartMariaDB initialises a data directory in dir and starts the server.
func StartMariaDB(dir string) (*MariaDB, error) {
	server, install := lookBinary("mariadbd", "mysqld"), lookBinary("mariadb-install-db", "mysql_install_db")
	if server == "" || install == "" {
		return nil, fmt.Errorf("chaos: mariadbd or mariadb-install-db not found (apt-get install mariadb-server)")
	}
	m := &MariaDB{dir: dir}
	args := []string{"--no-defaults", "--datadir=" + m.data(), "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve", "--innodb-log-file-size=16M"}
	if os.Geteuid() == 0 {
		// mariadbd refuses to run as root without --user, and --user would make it
		// switch accounts itself, which clears the parent-death signal.
		u, err := user.Lookup("mysql")
		if err != nil {
			return nil, fmt.Errorf("chaos: running as root and there is no mysql account to run mariadbd as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		m.owner = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
		args = append(args, "--user=mysql")
	}
	if out, err := exec.Command(install, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("chaos: mariadb-install-db: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	m.Port = port
	if err := m.Start(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := m.socketDB()
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	for _, stmt := range []string{
		"CREATE DATABASE chaos CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
		"CREATE USER 'chaos'@'%' IDENTIFIED BY 'chaos-pw'",
		"GRANT ALL PRIVILEGES ON chaos.* TO 'chaos'@'%'",
	} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			m.Close()
			return nil, fmt.Errorf("chaos: mariadb: %s: %w", stmt, err)
		}
	}
	return m, nil
}

func (m *MariaDB) data() string   { return filepath.Join(m.dir, "data") }
func (m *MariaDB) socket() string { return filepath.Join(m.dir, "mysqld.sock") }

// DSN is the database's DSN as `laraq work --database` takes it.
func (m *MariaDB) DSN() string {
	return fmt.Sprintf("mysql://chaos:chaos-pw@127.0.0.1:%d/chaos", m.Port)
}

// Start starts the server (again) on its port and data directory.
func (m *MariaDB) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc != nil && m.proc.Running() {
		return fmt.Errorf("chaos: mariadbd on %d is already running", m.Port)
	}
	m.starts++
	cmd := exec.Command(lookBinary("mariadbd", "mysqld"), "--no-defaults",
		"--datadir="+m.data(), "--socket="+m.socket(), "--pid-file="+filepath.Join(m.dir, "mysqld.pid"),
		"--tmpdir="+m.dir, "--port="+strconv.Itoa(m.Port), "--bind-address=127.0.0.1",
		"--skip-name-resolve", "--skip-log-bin", "--log-error="+filepath.Join(m.dir, "server.log"),
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_unicode_ci",
		"--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M", "--max-connections=200")
	if m.owner != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: m.owner}
	}
	p, err := StartProc(m.dir, "mariadb-"+strconv.Itoa(m.starts), cmd)
	if err != nil {
		return err
	}
	m.proc = p
	db, err := m.socketDB()
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if !p.Running() {
			log, _ := os.ReadFile(filepath.Join(m.dir, "server.log"))
			return fmt.Errorf("chaos: mariadbd exited at start:\n%s", log)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Kill9()
	return fmt.Errorf("chaos: mariadbd on %d did not answer", m.Port)
}

// Stop shuts the server down (SIGTERM) and waits for it: clients then get "connection
// refused", as when a database host is stopped for maintenance.
func (m *MariaDB) Stop() error {
	m.mu.Lock()
	p := m.proc
	m.mu.Unlock()
	if p == nil || !p.Running() {
		return nil
	}
	_ = p.Signal(syscall.SIGTERM)
	if _, err := p.Wait(30 * time.Second); err != nil {
		p.Kill9()
		return err
	}
	return nil
}

// Close kills the server; its directory is the caller's.
func (m *MariaDB) Close() {
	m.mu.Lock()
	p := m.proc
	m.mu.Unlock()
	if p != nil {
		p.Kill9()
	}
}

func (m *MariaDB) socketDB() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", m.socket()
	cfg.Timeout = time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(conn), nil
}

func lookBinary(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		if p := filepath.Join("/usr/sbin", n); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
