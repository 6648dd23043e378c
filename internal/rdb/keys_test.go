package rdb

import (
	"testing"
)

func TestNewQueueKeys(t *testing.T) {
	for _, tc := range []struct {
		prefix, name string
		tags         bool
		queue        string
	}{
		{"laravel_database_", "default", false, "laravel_database_queues:default"},
		{"laravel-database-", "default", false, "laravel-database-queues:default"},
		{"", "emails:high", false, "queues:emails:high"},
		{"laravel_database_", "default", true, "laravel_database_queues:{default}"},
		{"laravel_database_", "{default}", true, "laravel_database_queues:{default}"},
		{"laravel_database_", "{default}", false, "laravel_database_queues:{default}"},
		{"", "a{b}c", true, "queues:a{b}c"},
		// Empty braces are no tag: Redis hashes the whole key, so the name is wrapped.
		{"", "a{}b", true, "queues:{a{}b}"},
		// Laravel 13.5+ wraps this one too, but "{}" is an empty tag: Redis hashes whole
		// keys and the four keys land in different slots (no better name exists for it).
		{"", "}x{", true, "queues:{}x{}"},
	} {
		k := NewQueueKeys(tc.prefix, tc.name, tc.tags)
		if k.Queue != tc.queue || k.Delayed != tc.queue+":delayed" || k.Reserved != tc.queue+":reserved" ||
			k.Notify != tc.queue+":notify" || k.Invalid != tc.queue+":invalid" || k.Name != tc.name {
			t.Errorf("NewQueueKeys(%q, %q, %v) = %+v, want queue %q", tc.prefix, tc.name, tc.tags, k, tc.queue)
		}
		if tc.tags && tc.name != "}x{" {
			// The reason for the tags: every key of the queue hashes to one slot.
			for _, key := range []string{k.Delayed, k.Reserved, k.Notify, k.Invalid} {
				if slot(key) != slot(k.Queue) {
					t.Errorf("%s and %s hash to slots %d and %d", key, k.Queue, slot(key), slot(k.Queue))
				}
			}
		}
	}
}

func TestHasHashTag(t *testing.T) {
	for s, want := range map[string]bool{
		"default": false, "{default}": true, "a{b}": true, "{}": false, "{": false, "}{": false,
		"a{}b{c}": false, "{{}": true, "x{y": false, "x{y}z{": true,
	} {
		if got := HasHashTag(s); got != want {
			t.Errorf("HasHashTag(%q) = %v, want %v", s, got, want)
		}
	}
	for s, want := range map[string]string{
		"queues:{default}:notify": "default", "queues:default": "queues:default", "a{}b{c}": "a{}b{c}", "{{}": "{",
	} {
		if got := HashTag(s); got != want {
			t.Errorf("HashTag(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestQueueNameFromKey(t *testing.T) {
	for _, tc := range []struct {
		prefix, key, name string
		ok                bool
	}{
		{"p_", "p_queues:default", "default", true},
		{"p_", "p_queues:default:delayed", "default", true},
		{"p_", "p_queues:default:reserved", "default", true},
		{"p_", "p_queues:default:notify", "default", true},
		{"p_", "p_queues:default:invalid", "default", true},
		{"p_", "p_queues:a:b:notify", "a:b", true},
		{"p_", "p_queues:{default}:notify", "{default}", true},
		{"p_", "q_queues:default", "", false},
		{"p_", "p_queues:", "", false},
		{"p_", "p_queues::notify", "", false},
		{"", "queues:x", "x", true},
	} {
		name, ok := QueueNameFromKey(tc.prefix, tc.key)
		if name != tc.name || ok != tc.ok {
			t.Errorf("QueueNameFromKey(%q, %q) = %q, %v", tc.prefix, tc.key, name, ok)
		}
	}
	if got := queuesPattern(`a*b?[c]\`); got != `a\*b\?\[c\]\\queues:*` {
		t.Errorf("pattern = %q", got)
	}
}

func TestCacheKeys(t *testing.T) {
	for _, tc := range []struct {
		keys CacheKeys
		want string
	}{
		// 8.x skeleton: RedisStore adds ":" after the store prefix.
		{CacheKeys{RedisPrefix: "laravel_database_", Prefix: "laravel_cache", Separator: true}, "laravel_database_laravel_cache:illuminate:queue:restart"},
		// 9.x–10.x skeleton.
		{CacheKeys{RedisPrefix: "laravel_database_", Prefix: "laravel_cache_", Separator: true}, "laravel_database_laravel_cache_:illuminate:queue:restart"},
		// 11.x: no separator.
		{CacheKeys{RedisPrefix: "laravel_database_", Prefix: "laravel_cache_"}, "laravel_database_laravel_cache_illuminate:queue:restart"},
		// 12.x skeleton.
		{CacheKeys{RedisPrefix: "laravel-database-", Prefix: "laravel-cache-"}, "laravel-database-laravel-cache-illuminate:queue:restart"},
		// An empty store prefix gets no separator even on ≤10.x.
		{CacheKeys{Separator: true}, "illuminate:queue:restart"},
	} {
		if got := tc.keys.Restart(); got != tc.want {
			t.Errorf("%+v: Restart() = %q, want %q", tc.keys, got, tc.want)
		}
	}
	k := CacheKeys{RedisPrefix: "r_", Prefix: "c"}
	for got, want := range map[string]string{
		k.Paused("redis", "emails"): "r_cilluminate:queue:paused:redis:emails",
		k.PausedAll():               "r_cilluminate:queues:paused",
		k.JobExceptions("u-1"):      "r_cjob-exceptions:u-1",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

// slot is Redis Cluster's key slot: CRC16 (XMODEM) of the hash tag, mod 16384.
func slot(key string) uint16 {
	var crc uint16
	for _, b := range []byte(HashTag(key)) {
		crc ^= uint16(b) << 8
		for i := 0; i < 8; i++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % 16384
}

func TestSlotMatchesRedis(t *testing.T) {
	// Known values from the Redis Cluster specification's reference implementation.
	if got := slot("123456789"); got != 0x31C3%16384 {
		t.Errorf("slot(123456789) = %d", got)
	}
	if slot("{user1000}.following") != slot("{user1000}.followers") {
		t.Error("tagged keys in different slots")
	}
}
