package laravel

import (
	"fmt"

	"github.com/laraq/laraq/encryption"
)

// Encryption is the application's Encrypter configuration (config/app.php): the key
// (APP_KEY), the cipher ('cipher', AES-256-CBC in every skeleton) and, from Laravel 11,
// the previous keys (APP_PREVIOUS_KEYS). A worker decrypts ShouldBeEncrypted commands
// with it and a dispatcher encrypts them; QueueConnection puts it into
// Connection.Encrypter. The keys are secret: String and LogValue of Config never show
// them.
type Encryption struct {
	// Cipher is app.cipher.
	Cipher string
	// Keys is how many keys there are: APP_KEY plus the previous keys (0: no APP_KEY).
	Keys int

	encrypter *encryption.Encrypter
}

// Encrypter returns the application's Encrypter, nil when it has no (usable) APP_KEY.
func (e Encryption) Encrypter() *encryption.Encrypter { return e.encrypter }

// loadEncryption reads APP_KEY, the cipher and APP_PREVIOUS_KEYS as
// EncryptionServiceProvider does (ParseKey: a "base64:" prefix is base64, PHP's lenient
// decoding) and builds the Encrypter. A key that Laravel would refuse (wrong length,
// unknown cipher) is a warning, not an error: only encrypted jobs need it.
func (c *Config) loadEncryption(r *resolver) {
	// app.cipher as the configuration files say it (Config.Cipher, read with the rest).
	c.Encryption = Encryption{Cipher: c.Cipher}
	if c.Encryption.Cipher == "" {
		c.Encryption.Cipher = encryption.DefaultCipher
	}
	v, origin := r.get("AppKey", "APP_KEY")
	if !v.set || v.str == "" {
		return
	}
	key, err := encryption.ParseKey(v.str)
	if err != nil {
		c.warn("APP_KEY (%s): %v; encrypted jobs cannot be read or dispatched", origin, err)
		return
	}
	var previous [][]byte
	if pv, porigin := r.get("PreviousKeys", "APP_PREVIOUS_KEYS"); pv.set && pv.str != "" {
		switch {
		case c.major() < 11:
			c.warn("APP_PREVIOUS_KEYS is set (%s) but Laravel %d has no previous keys; it is ignored", porigin, c.major())
		default:
			if previous, err = encryption.ParsePreviousKeys(pv.str); err != nil {
				c.warn("APP_PREVIOUS_KEYS (%s): %v; only APP_KEY is used", porigin, err)
				previous = nil
			}
		}
	}
	enc, err := encryption.NewFromConfig(encryption.Config{
		Key: key, Cipher: c.Encryption.Cipher, PreviousKeys: previous, Laravel: encryptionRelease(c),
	})
	if err != nil {
		c.warn("APP_KEY (%s) with cipher %s: %v; encrypted jobs cannot be read or dispatched", origin, c.Encryption.Cipher, err)
		return
	}
	c.Encryption.encrypter = enc
	c.Encryption.Keys = 1 + len(previous)
}

// encryptionRelease names the release for encryption.Config.Laravel.
func encryptionRelease(c *Config) string {
	r := c.Release
	switch {
	case r.IsZero():
		return ""
	case r.Minor >= 1<<30:
		return fmt.Sprint(r.Major)
	}
	return fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Patch)
}
