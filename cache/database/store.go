// Package database is Laravel's database cache store (Illuminate\Cache\DatabaseStore and
// DatabaseLock) on the application's cache and cache_locks tables, for package cache:
// the default store of Laravel 11+ skeletons (CACHE_STORE=database). SQLite,
// MySQL/MariaDB and PostgreSQL, through failed/database's drivers or a caller's
// *sql.DB.
package database

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/laraq/laraq/cache"
	fdb "github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/phpser"
)

// Defaults of Options: config/cache.php's stores.database in the skeletons.
const (
	DefaultTable     = "cache"
	DefaultLockTable = "cache_locks"
	// DefaultLockTimeout is DatabaseStore's defaultLockTimeoutInSeconds: the lifetime of
	// a lock taken for 0 seconds.
	DefaultLockTimeout = 86400
)

// DefaultLockLottery is DatabaseStore's lock lottery: expired locks are pruned after 2
// in 100 acquisitions.
var DefaultLockLottery = [2]int{2, 100}

// ErrNoTable is wrapped by Open and New when a table is missing (the application has
// not run the cache table migration: `php artisan cache:table` / `make:cache-table`).
var ErrNoTable = errors.New("cache: table missing or incomplete (php artisan make:cache-table, cache:table before 11.x, then migrate)")

// Options configure a Store. The zero value is the skeleton's.
type Options struct {
	// Table is stores.database.table (DB_CACHE_TABLE). Default DefaultTable.
	Table string
	// LockTable is stores.database.lock_table (DB_CACHE_LOCK_TABLE). Default
	// DefaultLockTable.
	LockTable string
	// Prefix is the cache prefix (stores.database.prefix ?? cache.prefix), put before
	// every key and lock name as DatabaseStore does. Default "".
	Prefix string
	// LockLottery is stores.database.lock_lottery: after taking a lock (or failing to),
	// expired rows of the lock table are deleted with the odds LockLottery[0] in
	// LockLottery[1], as DatabaseLock::acquire draws them. Default [2, 100]; [0, 1]
	// never prunes.
	LockLottery [2]int
	// LockTimeout is stores.database.lock_timeout: the seconds a lock taken for 0
	// seconds lasts. Default DefaultLockTimeout.
	LockTimeout int64
	// Now is the clock of expirations. Default time.Now.
	Now func() time.Time
}

// Store is cache.Store on a database/sql handle.
type Store struct {
	db        *sql.DB
	owned     bool
	dialect   fdb.Dialect
	table     string // quoted
	lockTable string // quoted
	prefix    string
	lottery   [2]int
	forever   int64           // the lifetime of a lock taken for 0 seconds
	draw      func(n int) int // 1..n, PHP's random_int(1, n)
	now       func() time.Time
	name      string
}

var _ cache.Store = (*Store)(nil)

// Open opens the database a DSN names (sqlite:PATH, mysql://…, postgres://…, as
// failed/database takes them) and returns the store on its tables. Close closes the
// database.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	db, d, display, err := fdb.OpenDB(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	s, err := newStore(ctx, db, d, opts, true)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.name = "database cache " + s.table + " on " + display
	return s, nil
}

// New returns the store on a handle the caller owns (Close leaves it open). Its driver
// must speak the dialect's SQL and placeholders. For SQLite, begin transactions
// IMMEDIATE (modernc.org/sqlite: _txlock=immediate), as Open does.
func New(ctx context.Context, db *sql.DB, dialect fdb.Dialect, opts Options) (*Store, error) {
	return newStore(ctx, db, dialect, opts, false)
}

func newStore(ctx context.Context, db *sql.DB, d fdb.Dialect, opts Options, owned bool) (*Store, error) {
	table, lockTable := cmp(opts.Table, DefaultTable), cmp(opts.LockTable, DefaultLockTable)
	qt, err := fdb.QuoteTable(d, table)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	ql, err := fdb.QuoteTable(d, lockTable)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	s := &Store{db: db, owned: owned, dialect: d, table: qt, lockTable: ql, prefix: opts.Prefix, lottery: opts.LockLottery,
		draw: func(n int) int { return rand.IntN(n) + 1 }, now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	s.forever = opts.LockTimeout
	if s.forever <= 0 {
		s.forever = DefaultLockTimeout
	}
	if s.lottery == [2]int{} {
		s.lottery = DefaultLockLottery
	}
	if s.lottery[1] < 1 {
		return nil, fmt.Errorf("cache: lock lottery %v: the odds need a positive second number", s.lottery)
	}
	s.name = "database cache " + qt + " on " + d.String()
	for t, cols := range map[string]string{table: "key, value, expiration", lockTable: "key, owner, expiration"} {
		q, _ := fdb.QuoteTable(d, t)
		if _, err := db.ExecContext(ctx, "select "+s.columns(cols)+" from "+q+" where 1 = 0"); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrNoTable, t, err)
		}
	}
	return s, nil
}

func cmp(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// ident quotes a column as Laravel's grammar of the dialect does.
func (s *Store) ident(name string) string {
	if s.dialect == fdb.MySQL {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}

// columns quotes a comma-separated column list.
func (s *Store) columns(list string) string {
	parts := strings.Split(list, ", ")
	for i, p := range parts {
		parts[i] = s.ident(p)
	}
	return strings.Join(parts, ", ")
}

// sql replaces the ? placeholders of q with the dialect's.
func (s *Store) sql(q string) string {
	if s.dialect != fdb.PostgreSQL {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *Store) unix() int64 { return s.now().Unix() }

// String names the store and its database, without a password.
func (s *Store) String() string { return s.name }

// Close closes the database when Open opened it.
func (s *Store) Close() error {
	if s.owned {
		return s.db.Close()
	}
	return nil
}

// Get is DatabaseStore::get: the row of prefix+key; an expired row (expiration <= now)
// is deleted and reads as missing. The value is unserialize()'s input: base64 is undone
// for SQLite and PostgreSQL when the text has neither ':' nor ';', as DatabaseStore does
// for values it had to encode.
func (s *Store) Get(ctx context.Context, key string) (string, bool, error) {
	k := s.prefix + key
	var value string
	var expiration int64
	err := s.db.QueryRowContext(ctx, s.sql("select "+s.columns("value, expiration")+" from "+s.table+" where "+s.ident("key")+" = ?"), k).
		Scan(&value, &expiration)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("cache: read %s: %w", k, err)
	}
	if now := s.unix(); expiration <= now {
		_, err := s.db.ExecContext(ctx, s.sql("delete from "+s.table+" where "+s.ident("key")+" = ? and "+s.ident("expiration")+" <= ?"), k, now)
		if err != nil {
			return "", false, fmt.Errorf("cache: forget expired %s: %w", k, err)
		}
		return "", false, nil
	}
	return s.decode(value), true, nil
}

func (s *Store) decode(v string) string {
	if s.dialect == fdb.MySQL || strings.ContainsAny(v, ":;") {
		return v
	}
	if b, err := base64.StdEncoding.DecodeString(v); err == nil {
		return string(b)
	}
	return v
}

func (s *Store) encode(v string) string {
	if s.dialect != fdb.MySQL && strings.Contains(v, "\x00") {
		return base64.StdEncoding.EncodeToString([]byte(v))
	}
	return v
}

// Put is DatabaseStore::put: an upsert of prefix+key with expiration now + seconds.
func (s *Store) Put(ctx context.Context, key, value string, seconds int64) error {
	k := s.prefix + key
	cols := s.columns("key, value, expiration")
	q := "insert into " + s.table + " (" + cols + ") values (?, ?, ?) "
	if s.dialect == fdb.MySQL {
		q += "on duplicate key update " + s.ident("value") + " = values(" + s.ident("value") + "), " +
			s.ident("expiration") + " = values(" + s.ident("expiration") + ")"
	} else {
		q += "on conflict (" + s.ident("key") + ") do update set " + s.ident("value") + " = " + s.ident("excluded") + "." + s.ident("value") +
			", " + s.ident("expiration") + " = " + s.ident("excluded") + "." + s.ident("expiration")
	}
	if _, err := s.db.ExecContext(ctx, s.sql(q), k, s.encode(value), s.unix()+seconds); err != nil {
		return fmt.Errorf("cache: write %s: %w", k, err)
	}
	return nil
}

// Add is DatabaseStore::add (10.x+): when get() finds no unexpired row (deleting an
// expired one, as get() does), an insert that ignores a row another writer added
// meanwhile; added says whether the row is this call's. 8.x and 9.x insert first and, when
// a row exists, update it only if it expired: the same rows result.
func (s *Store) Add(ctx context.Context, key, value string, seconds int64) (bool, error) {
	if _, found, err := s.Get(ctx, key); err != nil || found {
		return false, err
	}
	k := s.prefix + key
	cols := "(" + s.columns("key, value, expiration") + ") values (?, ?, ?)"
	var q string
	switch s.dialect {
	case fdb.MySQL:
		q = "insert ignore into " + s.table + " " + cols
	case fdb.PostgreSQL:
		q = "insert into " + s.table + " " + cols + " on conflict do nothing"
	default:
		q = "insert or ignore into " + s.table + " " + cols
	}
	res, err := s.db.ExecContext(ctx, s.sql(q), k, s.encode(value), s.unix()+seconds)
	if err != nil {
		return false, fmt.Errorf("cache: add %s: %w", k, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("cache: add %s: %w", k, err)
	}
	return n > 0, nil
}

// Forget is DatabaseStore::forget: the row of prefix+key is deleted.
func (s *Store) Forget(ctx context.Context, key string) error {
	k := s.prefix + key
	if _, err := s.db.ExecContext(ctx, s.sql("delete from "+s.table+" where "+s.ident("key")+" = ?"), k); err != nil {
		return fmt.Errorf("cache: forget %s: %w", k, err)
	}
	return nil
}

// Increment is DatabaseStore::increment: in a transaction, the row is read (locked for
// update on MySQL and PostgreSQL; SQLite's IMMEDIATE transaction locks the database) and,
// when its value is numeric, updated to (int) value + by. Expiration is not checked, as
// in PHP.
func (s *Store) Increment(ctx context.Context, key string, by int64) (int64, bool, error) {
	k := s.prefix + key
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, fmt.Errorf("cache: increment %s: %w", k, err)
	}
	defer func() { _ = tx.Rollback() }()
	lock := ""
	if s.dialect != fdb.SQLite {
		lock = " for update"
	}
	var value string
	err = tx.QueryRowContext(ctx, s.sql("select "+s.ident("value")+" from "+s.table+" where "+s.ident("key")+" = ? limit 1"+lock), k).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("cache: increment %s: %w", k, err)
	}
	cur, ok := serializedNumber(s.decode(value))
	if !ok {
		return 0, false, nil
	}
	n := cur + by
	if _, err := tx.ExecContext(ctx, s.sql("update "+s.table+" set "+s.ident("value")+" = ? where "+s.ident("key")+" = ?"),
		"i:"+strconv.FormatInt(n, 10)+";", k); err != nil {
		return 0, false, fmt.Errorf("cache: increment %s: %w", k, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, false, fmt.Errorf("cache: increment %s: %w", k, err)
	}
	return n, true, nil
}

// serializedNumber unserializes a stored value and reads it as DatabaseStore's increment
// does: (int) of the value, and whether is_numeric() holds for it (an int, a float, or a
// numeric string).
func serializedNumber(v string) (int64, bool) {
	val, err := phpser.DecodeString(v)
	if err != nil {
		return 0, false
	}
	switch val.Kind() {
	case phpser.KindInt:
		return val.Int(), true
	case phpser.KindFloat:
		return int64(val.Float()), true
	case phpser.KindString:
		if php.IsNumeric(val.Str()) {
			return php.Intval(val.Str()), true
		}
	}
	return 0, false
}

// AcquireLock is DatabaseLock::acquire: an insert of the lock row, or when that fails (the
// row exists), an update of a row that owner holds or that expired; then, with the odds
// of the lock lottery, the deletion of every expired lock row. As with PHP's PDO, MySQL
// counts only changed rows: an owner re-taking its lock for the same expiry within the
// same second gets false there.
func (s *Store) AcquireLock(ctx context.Context, name, owner string, seconds int64) (bool, error) {
	k := s.prefix + name
	if seconds <= 0 {
		seconds = s.forever
	}
	now := s.unix()
	acquired := false
	_, err := s.db.ExecContext(ctx, s.sql("insert into "+s.lockTable+" ("+s.columns("key, owner, expiration")+") values (?, ?, ?)"), k, owner, now+seconds)
	if err == nil {
		acquired = true
	} else {
		res, err := s.db.ExecContext(ctx, s.sql("update "+s.lockTable+" set "+s.ident("owner")+" = ?, "+s.ident("expiration")+" = ? where "+
			s.ident("key")+" = ? and ("+s.ident("owner")+" = ? or "+s.ident("expiration")+" <= ?)"), owner, now+seconds, k, owner, now)
		if err != nil {
			return false, fmt.Errorf("cache: acquire lock %s: %w", k, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, fmt.Errorf("cache: acquire lock %s: %w", k, err)
		}
		acquired = n >= 1
	}
	if s.draw(s.lottery[1]) <= s.lottery[0] {
		// Housekeeping, as DatabaseLock::pruneExpiredLocks: a deadlock with another
		// prune is ignored there, and any failure here leaves rows the next draw prunes.
		_, _ = s.db.ExecContext(ctx, s.sql("delete from "+s.lockTable+" where "+s.ident("expiration")+" <= ?"), now)
	}
	return acquired, nil
}

// ReleaseLock is DatabaseLock::release: the row of name and owner is deleted.
func (s *Store) ReleaseLock(ctx context.Context, name, owner string) (bool, error) {
	return s.deleteLock(ctx, name, " and "+s.ident("owner")+" = ?", owner)
}

// ForceReleaseLock is DatabaseLock::forceRelease: the row of name is deleted.
func (s *Store) ForceReleaseLock(ctx context.Context, name string) (bool, error) {
	return s.deleteLock(ctx, name, "")
}

func (s *Store) deleteLock(ctx context.Context, name, cond string, args ...any) (bool, error) {
	k := s.prefix + name
	res, err := s.db.ExecContext(ctx, s.sql("delete from "+s.lockTable+" where "+s.ident("key")+" = ?"+cond), append([]any{k}, args...)...)
	if err != nil {
		return false, fmt.Errorf("cache: release lock %s: %w", k, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// LockOwner is DatabaseLock::getCurrentOwner: the owner of the unexpired row of name.
func (s *Store) LockOwner(ctx context.Context, name string) (string, bool, error) {
	k := s.prefix + name
	var owner string
	err := s.db.QueryRowContext(ctx, s.sql("select "+s.ident("owner")+" from "+s.lockTable+" where "+s.ident("key")+" = ? and "+
		s.ident("expiration")+" > ? limit 1"), k, s.unix()).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("cache: read lock %s: %w", k, err)
	}
	return owner, true, nil
}
