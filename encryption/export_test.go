package encryption

// Hooks for the external tests, which hold the PHP-compatible decoders to PHP itself.

// PHPBase64Decode is base64_decode($s, $strict).
func PHPBase64Decode(s string, strict bool) ([]byte, bool) { return phpBase64Decode(s, strict) }

// JSONField is what isset(), is_string() and empty() see of a top-level member.
type JSONField struct {
	Set, String, Empty bool
	Value              string
}

// DecodeEnvelope runs json_decode($data, true) and describes iv, value, mac and tag.
func DecodeEnvelope(data []byte) (map[string]JSONField, error) {
	env, _, err := parseEnvelope(data)
	if err != nil {
		return nil, err
	}
	out := map[string]JSONField{}
	for name, f := range map[string]field{"iv": env.iv, "value": env.value, "mac": env.mac, "tag": env.tag} {
		out[name] = JSONField{Set: f.kind != kindAbsent, String: f.kind == kindString, Empty: f.isEmpty(), Value: f.str}
	}
	return out, nil
}
