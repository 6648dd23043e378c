package php

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
)

// XXH128 is PHP's hash('xxh128', $s) (PHP 8.1+): XXH3's 128-bit hash with seed 0 and
// the default secret, as lowercase hex of the big-endian 16 bytes (high half first).
// Laravel 12.54+ names a unique job's lock by hash('xxh128', $job->displayName()).
func XXH128(s string) string {
	hi, lo := xxh3128([]byte(s))
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return hex.EncodeToString(b[:])
}

const (
	prime32_1 = 0x9E3779B1
	prime32_2 = 0x85EBCA77
	prime32_3 = 0xC2B2AE3D
	prime64_1 = 0x9E3779B185EBCA87
	prime64_2 = 0xC2B2AE3D27D4EB4F
	prime64_3 = 0x165667B19E3779F9
	prime64_4 = 0x85EBCA77C2B2AE63
	prime64_5 = 0x27D4EB2F165667C5
	primeMX1  = 0x165667919E3779F9
	primeMX2  = 0x9FB21C651E98DF25
)

// xxhSecret is XXH3's default 192-byte secret (kSecret).
var xxhSecret = [192]byte{
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
	0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
	0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
	0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
	0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
	0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
	0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
	0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
	0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
}

func r64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }
func r32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

func xxh64Avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= prime64_2
	h ^= h >> 29
	h *= prime64_3
	return h ^ h>>32
}

func xxh3Avalanche(h uint64) uint64 {
	h ^= h >> 37
	h *= primeMX1
	return h ^ h>>32
}

func mulFold64(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

func mix16(in, sec []byte) uint64 {
	return mulFold64(r64(in)^r64(sec), r64(in[8:])^r64(sec[8:]))
}

// xxh3128 returns the high and low halves of XXH3_128bits(b) with seed 0.
func xxh3128(b []byte) (hi, lo uint64) {
	n := len(b)
	sec := xxhSecret[:]
	switch {
	case n == 0:
		return xxh64Avalanche(r64(sec[80:]) ^ r64(sec[88:])), xxh64Avalanche(r64(sec[64:]) ^ r64(sec[72:]))
	case n <= 3:
		c1, c2, c3 := uint32(b[0]), uint32(b[n>>1]), uint32(b[n-1])
		cl := c1<<16 | c2<<24 | c3 | uint32(n)<<8
		ch := bits.RotateLeft32(bits.ReverseBytes32(cl), 13)
		kl := uint64(cl) ^ uint64(r32(sec)^r32(sec[4:]))
		kh := uint64(ch) ^ uint64(r32(sec[8:])^r32(sec[12:]))
		return xxh64Avalanche(kh), xxh64Avalanche(kl)
	case n <= 8:
		in64 := uint64(r32(b)) + uint64(r32(b[n-4:]))<<32
		keyed := in64 ^ (r64(sec[16:]) ^ r64(sec[24:]))
		mhi, mlo := bits.Mul64(keyed, prime64_1+uint64(n)<<2)
		mhi += mlo << 1
		mlo ^= mhi >> 3
		mlo ^= mlo >> 35
		mlo *= primeMX2
		mlo ^= mlo >> 28
		return xxh3Avalanche(mhi), mlo
	case n <= 16:
		bfl := r64(sec[32:]) ^ r64(sec[40:])
		bfh := r64(sec[48:]) ^ r64(sec[56:])
		inLo, inHi := r64(b), r64(b[n-8:])
		mhi, mlo := bits.Mul64(inLo^inHi^bfl, prime64_1)
		mlo += uint64(n-1) << 54
		inHi ^= bfh
		mhi += inHi + uint64(uint32(inHi))*(prime32_2-1)
		mlo ^= bits.ReverseBytes64(mhi)
		hhi, hlo := bits.Mul64(mlo, prime64_2)
		hhi += mhi * prime64_2
		return xxh3Avalanche(hhi), xxh3Avalanche(hlo)
	case n <= 128:
		accLo, accHi := uint64(n)*prime64_1, uint64(0)
		for i := (n - 1) / 32; i >= 0; i-- {
			accLo, accHi = mix32(accLo, accHi, b[16*i:], b[n-16*(i+1):], sec[32*i:])
		}
		return finish128(accLo, accHi, n)
	case n <= 240:
		accLo, accHi := uint64(n)*prime64_1, uint64(0)
		for i := 32; i < 160; i += 32 {
			accLo, accHi = mix32(accLo, accHi, b[i-32:], b[i-16:], sec[i-32:])
		}
		accLo, accHi = xxh3Avalanche(accLo), xxh3Avalanche(accHi)
		for i := 160; i <= n; i += 32 {
			accLo, accHi = mix32(accLo, accHi, b[i-32:], b[i-16:], sec[3+i-160:])
		}
		accLo, accHi = mix32(accLo, accHi, b[n-16:], b[n-32:], sec[136-17-16:])
		return finish128(accLo, accHi, n)
	}
	return hashLong128(b)
}

func mix32(accLo, accHi uint64, in1, in2, sec []byte) (uint64, uint64) {
	accLo += mix16(in1, sec)
	accLo ^= r64(in2) + r64(in2[8:])
	accHi += mix16(in2, sec[16:])
	accHi ^= r64(in1) + r64(in1[8:])
	return accLo, accHi
}

func finish128(accLo, accHi uint64, n int) (hi, lo uint64) {
	lo = accLo + accHi
	hi = accLo*prime64_1 + accHi*prime64_4 + uint64(n)*prime64_2
	return -xxh3Avalanche(hi), xxh3Avalanche(lo)
}

const (
	stripeLen          = 64
	secretConsumeRate  = 8
	secretLastAccStart = 7
	secretMergeStart   = 11
)

func hashLong128(b []byte) (hi, lo uint64) {
	n := len(b)
	sec := xxhSecret[:]
	acc := [8]uint64{prime32_3, prime64_1, prime64_2, prime64_3, prime64_4, prime32_2, prime64_5, prime32_1}
	stripesPerBlock := (len(sec) - stripeLen) / secretConsumeRate
	blockLen := stripeLen * stripesPerBlock
	blocks := (n - 1) / blockLen
	for k := 0; k < blocks; k++ {
		accumulate(&acc, b[k*blockLen:], sec, stripesPerBlock)
		scramble(&acc, sec[len(sec)-stripeLen:])
	}
	stripes := ((n - 1) - blockLen*blocks) / stripeLen
	accumulate(&acc, b[blocks*blockLen:], sec, stripes)
	accumulate512(&acc, b[n-stripeLen:], sec[len(sec)-stripeLen-secretLastAccStart:])
	lo = mergeAccs(&acc, sec[secretMergeStart:], uint64(n)*prime64_1)
	hi = mergeAccs(&acc, sec[len(sec)-stripeLen-secretMergeStart:], ^(uint64(n) * prime64_2))
	return hi, lo
}

func accumulate(acc *[8]uint64, in, sec []byte, stripes int) {
	for s := 0; s < stripes; s++ {
		accumulate512(acc, in[s*stripeLen:], sec[s*secretConsumeRate:])
	}
}

func accumulate512(acc *[8]uint64, in, sec []byte) {
	for i := 0; i < 8; i++ {
		v := r64(in[8*i:])
		k := v ^ r64(sec[8*i:])
		acc[i^1] += v
		acc[i] += uint64(uint32(k)) * (k >> 32)
	}
}

func scramble(acc *[8]uint64, sec []byte) {
	for i := 0; i < 8; i++ {
		a := acc[i]
		a ^= a >> 47
		a ^= r64(sec[8*i:])
		acc[i] = a * prime32_1
	}
}

func mergeAccs(acc *[8]uint64, sec []byte, start uint64) uint64 {
	r := start
	for i := 0; i < 4; i++ {
		r += mulFold64(acc[2*i]^r64(sec[16*i:]), acc[2*i+1]^r64(sec[16*i+8:]))
	}
	return xxh3Avalanche(r)
}
